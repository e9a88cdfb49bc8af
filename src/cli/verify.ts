/** `vcp-hooks verify <file.vcpb> --keyring <file>`: would this artifact install, and with what trust? */
import { readArtifactFile } from "../index.js";
import { loadKeyring, verifyArtifact } from "../tooling.js";
import { EXIT_OK, parseCommand, printJson, requireOption, type Command } from "./common.js";

const USAGE = `usage: vcp-hooks verify <file.vcpb> --keyring <keyring.yaml> [--json]

Verify an artifact as an install with require_signatures does (DESIGN §3.3): format, size, digest
(DIGEST_MISMATCH when altered), manifest, then signatures against the keyring (UNSIGNED_BUNDLE,
SIGNATURE_INVALID for an unknown or wrong key) and the requested trust against the best verifying
key's max_trust (TRUST_EXCEEDS_KEY). Prints the trust granted and the signer.

The keyring file (YAML or JSON) has the shape of vcp.yaml's keyring:
  keys:
    - { key_id: ops-2026, public_key_file: keys/ops-2026.pub.pem, max_trust: deployment }

Options:
  --keyring <file>  trusted keys (required)
  --json            print { ok, bundle, version, digest, trust, signed_by, hooks }
Exit: 0 verified, 1 refused, 2 usage error.`;

export const verifyCommand: Command = {
  name: "verify",
  summary: "verify a .vcpb's digest, signatures and trust against a keyring",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals, help } = parseCommand("verify", args, { keyring: { type: "string" } }, { min: 1, max: 1, names: "<file.vcpb>" });
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const file = positionals[0]!;
    const keyring = await loadKeyring(requireOption("verify", values, "keyring"));
    const verified = verifyArtifact(await readArtifactFile(file), { keyring, requireSignatures: true });
    const { manifest } = verified;
    const maxTrust = keyring.keys.find((k) => k.key_id === verified.key_id)?.max_trust;
    if (io.json) {
      printJson(io, { ok: true, file, bundle: manifest.bundle, version: manifest.version, digest: verified.digest, trust: verified.trust, signed_by: verified.key_id, key_max_trust: maxTrust, hooks: manifest.hooks.map((h) => h.name) });
    } else {
      io.out(`OK ${file}`);
      io.out(`  bundle         ${manifest.bundle} ${manifest.version}`);
      io.out(`  digest         ${verified.digest} (matches manifest and code)`);
      io.out(`  signed by      ${verified.key_id} (max_trust ${maxTrust ?? "?"})`);
      io.out(`  trust granted  ${verified.trust}`);
      io.out(`  hooks          ${manifest.hooks.map((h) => `${h.name} [${h.type ?? h.event}]`).join(", ")}`);
    }
    return EXIT_OK;
  },
};
