/** `vcp-hooks sign <file.vcpb> --key <pem> --key-id <id> [-o file]`: add an Ed25519 signature. */
import { readArtifactFile, VcpError } from "../index.js";
import { INPUT_FILE_BYTES, readInputFile, serializeArtifact, signArtifact } from "../tooling.js";
import { writeAtomic } from "./build.js";
import { CheckFailed, EXIT_OK, parseCommand, printJson, requireOption, stringOption, type Command } from "./common.js";

const USAGE = `usage: vcp-hooks sign <file.vcpb> --key <private.pem> --key-id <id> [-o <out.vcpb>] [--json]

Sign the artifact's digest with an Ed25519 private key (from 'vcp-hooks keygen') and write it back in
place, or to -o. A signature by the same key id is replaced; others are kept. Refuses an artifact whose
digest does not match its manifest and code (DIGEST_MISMATCH): it never signs what was altered.

Options:
  --key <file>      PKCS#8 PEM private key (Ed25519)
  --key-id <id>     the id the keyring knows this key by ([A-Za-z0-9._-]{1,128})
  -o, --out <file>  write here instead of in place
  --json            print { file, bundle, version, digest, key_id, signatures }
Exit: 0 signed, 1 refused (tampered artifact, bad key), 2 usage error.`;

export const signCommand: Command = {
  name: "sign",
  summary: "sign a .vcpb with an Ed25519 key (in place or -o)",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals, help } = parseCommand(
      "sign",
      args,
      { key: { type: "string", short: "k" }, "key-id": { type: "string" }, out: { type: "string", short: "o" } },
      { min: 1, max: 1, names: "<file.vcpb>" },
    );
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const file = positionals[0]!;
    const keyFile = requireOption("sign", values, "key");
    const keyId = requireOption("sign", values, "key-id");
    const out = stringOption("sign", values, "out") ?? file;
    let pem: string;
    try {
      pem = (await readInputFile(keyFile, INPUT_FILE_BYTES.key, "--key")).toString("utf8");
    } catch (err) {
      if (err instanceof VcpError) throw err; // INPUT_FILE_REFUSED
      throw new CheckFailed(`cannot read --key ${keyFile}: ${(err as Error).message}`, "NOT_FOUND");
    }
    const signed = signArtifact(await readArtifactFile(file), pem, keyId);
    await writeAtomic(out, serializeArtifact(signed));
    const ids = signed.signatures.map((s) => s.key_id);
    // The manifest is not verified here (verify and install do that): its fields are shown as found.
    const { bundle, version } = signed.manifest;
    if (io.json) printJson(io, { file: out, bundle, version, digest: signed.digest, key_id: keyId, signatures: ids });
    else {
      io.out(`signed ${out} with key '${keyId}'`);
      io.out(`  bundle      ${String(bundle)} ${String(version)}`);
      io.out(`  digest      ${signed.digest}`);
      io.out(`  signatures  ${ids.join(", ")}`);
    }
    return EXIT_OK;
  },
};
