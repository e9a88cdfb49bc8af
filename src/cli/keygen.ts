/** `vcp-hooks keygen --out <prefix>`: an Ed25519 key pair for signing bundles (DESIGN §3.3). */
import { basename, resolve } from "node:path";
import { existsSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { generateKeyPair } from "../tooling.js";
import { CheckFailed, EXIT_OK, parseCommand, printJson, requireOption, stringOption, UsageError, type Command } from "./common.js";

const USAGE = `usage: vcp-hooks keygen --out <prefix> [--key-id <id>] [--max-trust <level>] [--json]

Generate an Ed25519 key pair: <prefix>.pem (PKCS#8 private key, mode 0600) and <prefix>.pub.pem
(SPKI public key). Refuses to overwrite either file. Prints the keyring entry to add to vcp.yaml
(keyring.keys) or to a keyring file for 'vcp-hooks verify --keyring'.

Options:
  --out <prefix>      path prefix of the two files (required)
  --key-id <id>       key id for the printed keyring entry (default: the prefix's file name)
  --max-trust <lvl>   max_trust for the printed entry: system | deployment | session (default deployment)
  --json              print { private_key_file, public_key_file, keyring_entry }
Exit: 0 written, 1 a file exists or cannot be written, 2 usage error.`;

export const keygenCommand: Command = {
  name: "keygen",
  summary: "generate an Ed25519 signing key pair (<prefix>.pem, <prefix>.pub.pem)",
  usage: USAGE,
  async run(args, io) {
    const { values, help } = parseCommand(
      "keygen",
      args,
      { out: { type: "string", short: "o" }, "key-id": { type: "string" }, "max-trust": { type: "string" } },
      { min: 0, max: 0, names: "" },
    );
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const prefix = requireOption("keygen", values, "out");
    const keyId = stringOption("keygen", values, "key-id") ?? basename(prefix);
    const maxTrust = stringOption("keygen", values, "max-trust") ?? "deployment";
    if (!["system", "deployment", "session"].includes(maxTrust)) {
      throw new UsageError(`keygen: --max-trust must be system, deployment or session, not '${maxTrust}'`);
    }
    const privateFile = `${prefix}.pem`;
    const publicFile = `${prefix}.pub.pem`;
    for (const f of [privateFile, publicFile]) {
      if (existsSync(f)) throw new CheckFailed(`${f} already exists; refusing to overwrite a key (choose another --out)`, "FILE_EXISTS");
    }
    const { privateKeyPem, publicKeyPem } = generateKeyPair();
    // 'wx': fail if the file exists — never overwrite a key (the old one may still sign releases).
    await writeNew(privateFile, privateKeyPem, 0o600);
    await writeNew(publicFile, publicKeyPem, 0o644).catch(async (err: unknown) => {
      await rm(privateFile, { force: true }); // nothing half-made stays behind
      throw err;
    });
    const entry = { key_id: keyId, public_key_file: resolve(publicFile), max_trust: maxTrust };
    if (io.json) printJson(io, { private_key_file: privateFile, public_key_file: publicFile, keyring_entry: entry });
    else {
      io.out(`private key  ${privateFile} (mode 0600; keep it secret)`);
      io.out(`public key   ${publicFile}`);
      io.out(`keyring entry (vcp.yaml keyring.keys, or a keyring file):`);
      io.out(`  keys:\n    - { key_id: ${keyId}, public_key_file: ${entry.public_key_file}, max_trust: ${maxTrust} }`);
    }
    return EXIT_OK;
  },
};

async function writeNew(file: string, text: string, mode: number): Promise<void> {
  try {
    await writeFile(file, text, { mode, flag: "wx" });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") throw new CheckFailed(`${file} already exists; refusing to overwrite a key (choose another --out)`, "FILE_EXISTS");
    throw new CheckFailed(`cannot write ${file}: ${(err as Error).message}`, "WRITE_FAILED");
  }
}
