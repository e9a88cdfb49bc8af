/**
 * Ed25519 keys and the keyring (DESIGN §3.3, §6.4 `keyring`): which public keys may sign bundles and
 * the highest trust level each may grant.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { dirname, isAbsolute, resolve } from "node:path";
import { parseDocument } from "yaml";
import { z } from "zod";
import { VcpError } from "../errors.js";
import { TrustLevelSchema, type TrustLevel } from "../model/hook-type.js";
import { describeIssues } from "../model/zod-errors.js";
import { KEY_ID } from "../model/names.js";
import { INPUT_FILE_BYTES, readInputFile } from "./input-file.js";


/** One trusted key, resolved: `public_key` is an SPKI PEM of an Ed25519 key. */
export interface KeyringKey {
  readonly key_id: string;
  readonly public_key: string;
  readonly max_trust: TrustLevel;
}

/** A validated keyring, as {@link loadKeyring} returns it. Plain data: it may be logged or sent over IPC. */
export interface Keyring {
  readonly keys: readonly KeyringKey[];
}

const KeyEntrySchema = z
  .object({
    key_id: z.string({ error: "must be a string" }).regex(KEY_ID.regex, KEY_ID.rule),
    public_key: z.string({ error: "must be a PEM string" }).optional(),
    public_key_file: z.string({ error: "must be a file path" }).min(1, "must be a file path").optional(),
    max_trust: TrustLevelSchema,
  })
  .strict()
  .refine((k) => (k.public_key === undefined) !== (k.public_key_file === undefined), {
    message: "exactly one of public_key and public_key_file is required",
  });

/** The keyring as written in a file or the deployment config (`keyring:` of vcp.yaml). */
export const KeyringInputSchema = z.object({ keys: z.array(KeyEntrySchema, { error: "must be a list of keys" }) }).strict();
export type KeyringInput = z.input<typeof KeyringInputSchema>;

/** A freshly generated Ed25519 key pair, both halves PEM (SPKI public, PKCS#8 private). */
export interface KeyPairPem {
  publicKeyPem: string;
  privateKeyPem: string;
}

/**
 * Generate an Ed25519 key pair for signing bundles (`vcp-hooks keygen`).
 *
 * @example
 * ```ts
 * const { publicKeyPem, privateKeyPem } = generateKeyPair();
 * ```
 */
export function generateKeyPair(): KeyPairPem {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  return {
    publicKeyPem: publicKey.export({ type: "spki", format: "pem" }).toString(),
    privateKeyPem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

/**
 * Load and validate a keyring: a YAML or JSON file `{ keys: [{ key_id, public_key | public_key_file,
 * max_trust }] }`, or the same shape as an object. `public_key_file` paths resolve against the
 * keyring file (or `options.baseDir`, default the working directory, for an object). Errors are
 * `VcpError("INVALID_CONFIG")` naming the file and field (`keys[1].public_key`).
 *
 * @example
 * ```ts
 * const keyring = await loadKeyring("deploy/keyring.yaml");
 * const same = await loadKeyring({ keys: [{ key_id: "ops-2026", public_key_file: "keys/ops.pub.pem", max_trust: "deployment" }] }, { baseDir: "deploy" });
 * ```
 */
export async function loadKeyring(source: string | KeyringInput | Keyring, options: { baseDir?: string } = {}): Promise<Keyring> {
  let raw: unknown = source;
  let file = "keyring";
  let baseDir = options.baseDir ?? process.cwd();
  if (typeof source === "string") {
    file = source;
    baseDir = dirname(resolve(source));
    let text: string;
    try {
      text = (await readInputFile(source, INPUT_FILE_BYTES.key, "the keyring")).toString("utf8");
    } catch (err) {
      if (err instanceof VcpError) throw err; // INPUT_FILE_REFUSED
      throw keyringError(file, [{ field: "(file)", rule: `cannot be read: ${(err as Error).message}` }]);
    }
    const doc = parseDocument(text, { prettyErrors: true });
    if (doc.errors.length > 0) {
      const e = doc.errors[0]!;
      const pos = e.linePos?.[0];
      throw keyringError(file, [{ field: "(yaml)", rule: `syntax error at line ${pos?.line ?? "?"}, column ${pos?.col ?? "?"}: ${(e.message.split("\n")[0] ?? "").replace(/ at line \d+, column \d+:?$/, "")}` }]);
    }
    raw = doc.toJS();
  }
  const parsed = KeyringInputSchema.safeParse(raw);
  if (!parsed.success) throw keyringError(file, describeIssues(parsed.error));
  const keys: KeyringKey[] = [];
  const seen = new Set<string>();
  for (const [i, entry] of parsed.data.keys.entries()) {
    if (seen.has(entry.key_id)) throw keyringError(file, [{ field: `keys[${i}].key_id`, rule: `'${entry.key_id}' is listed twice` }]);
    seen.add(entry.key_id);
    let pem = entry.public_key;
    let field = `keys[${i}].public_key`;
    if (pem === undefined) {
      field = `keys[${i}].public_key_file`;
      const path = isAbsolute(entry.public_key_file!) ? entry.public_key_file! : resolve(baseDir, entry.public_key_file!);
      try {
        pem = (await readInputFile(path, INPUT_FILE_BYTES.key, `${field} of ${file}`)).toString("utf8");
      } catch (err) {
        if (err instanceof VcpError) throw err; // INPUT_FILE_REFUSED
        throw keyringError(file, [{ field, rule: `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}` }]);
      }
    }
    const key = ed25519PublicKey(pem);
    if (typeof key === "string") throw keyringError(file, [{ field, rule: key }]);
    // Normalised to one SPKI PEM form, so equal keys compare equal.
    keys.push(Object.freeze({ key_id: entry.key_id, public_key: key.export({ type: "spki", format: "pem" }).toString(), max_trust: entry.max_trust }));
  }
  return Object.freeze({ keys: Object.freeze(keys) });
}

/** An Ed25519 public KeyObject from PEM, or why not. */
function ed25519PublicKey(pem: string): KeyObject | string {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    return "is not a PEM public key";
  }
  if (key.asymmetricKeyType !== "ed25519") return `must be an Ed25519 key (this is ${key.asymmetricKeyType ?? "unknown"})`;
  return key;
}

// Compiled KeyObjects per keyring object: a keyring is compiled once, not per verification.
const compiled = new WeakMap<Keyring, Map<string, { key: KeyObject; max_trust: TrustLevel }>>();

/** key_id → compiled public key and max trust. Internal to the bundle layer. */
export function keyringIndex(keyring: Keyring): ReadonlyMap<string, { key: KeyObject; max_trust: TrustLevel }> {
  let index = compiled.get(keyring);
  if (index === undefined) {
    index = new Map();
    for (const [i, k] of keyring.keys.entries()) {
      const key = ed25519PublicKey(k.public_key);
      if (typeof key === "string") throw keyringError("keyring", [{ field: `keys[${i}].public_key`, rule: key }]);
      index.set(k.key_id, { key, max_trust: k.max_trust });
    }
    compiled.set(keyring, index);
  }
  return index;
}

function keyringError(file: string, problems: Array<{ field: string; rule: string }>): VcpError {
  return new VcpError("INVALID_CONFIG", `${file}: ${problems.map((p) => `${p.field}: ${p.rule}`).join("; ")}`, { file, problems });
}
