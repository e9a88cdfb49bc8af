/**
 * The built bundle artifact, `.vcpb` (DESIGN §3.2): create, serialize, read, sign and verify.
 *
 * ```
 *  { format: "vcp-bundle/1",
 *    manifest,  ─┐
 *    code,      ─┴─ RFC 8785 canonical JSON ─ sha256 ─▶ digest: "sha256:<hex>"
 *    digest,                                              │ UTF-8 bytes of the digest string
 *    signatures: [{ key_id, alg: "ed25519", sig }] }  ◀── Ed25519 (one per key)
 * ```
 * Signatures cover the digest, the digest covers manifest and code: changing either breaks both.
 */
import { createPrivateKey, sign as edSign, verify as edVerify, type KeyObject } from "node:crypto";
import { z } from "zod";
import { VcpError } from "../errors.js";
import { canonicalJson } from "../integrity/canonical.js";
import { digestOf } from "../integrity/digest.js";
import { trustRank, type TrustLevel } from "../model/hook-type.js";
import { keyringIndex, type Keyring } from "./keys.js";
import { parseManifest, type Manifest } from "./manifest.js";
import { INPUT_FILE_BYTES, readInputFile } from "./input-file.js";
import { DIGEST, KEY_ID } from "../model/names.js";
import { jsonSchemaOf, type JsonSchema } from "../model/json-schema.js";
import { DEFAULTS } from "../config/defaults.js";

export const ARTIFACT_FORMAT = "vcp-bundle/1";
/** Media type of a serialized `.vcpb` (DESIGN §3.2). */
export const ARTIFACT_MEDIA_TYPE = "application/vnd.vcp.bundle+json";
/** Default cap on a bundle's code, bytes (DESIGN §3.2, §6.4 `limits.bundle_bytes`). */
export const DEFAULT_MAX_CODE_BYTES = DEFAULTS.limits.bundle_bytes;

export interface ArtifactSignature {
  key_id: string;
  alg: "ed25519";
  /** Base64 Ed25519 signature of the UTF-8 bytes of `digest`. */
  sig: string;
}

/** A `.vcpb` document. `manifest` is the normalized manifest (defaults applied). */
export interface VcpArtifact {
  format: typeof ARTIFACT_FORMAT;
  manifest: Manifest;
  code: string;
  /** `sha256:<hex>` of the RFC 8785 canonical JSON of `{ manifest, code }`. */
  digest: string;
  signatures: ArtifactSignature[];
}


// Outer shape only: the manifest is validated by parseManifest after the digest check, so the
// digest is computed over exactly the JSON that was signed.
const ArtifactShapeSchema = z
  .object({
    format: z.literal(ARTIFACT_FORMAT, { error: `must be "${ARTIFACT_FORMAT}"` }),
    manifest: z.record(z.string(), z.unknown(), { error: "must be an object" }),
    code: z.string({ error: "must be a string" }),
    digest: z.string({ error: "must be a string" }).regex(DIGEST.regex, "must be sha256:<64 lowercase hex digits>"),
    signatures: z.array(
      z
        .object({
          key_id: z.string({ error: "must be a string" }).regex(KEY_ID.regex, KEY_ID.rule),
          alg: z.string({ error: "must be a string" }),
          sig: z.string({ error: "must be a base64 string" }).max(1024, "is too long for a signature"),
        })
        .strict(),
      { error: "must be a list" },
    ).max(16, "at most 16 signatures"),
  })
  .strict();

/** The result of {@link verifyArtifact}: what may be installed, and on whose authority. */
export interface VerifiedArtifact {
  artifact: VcpArtifact;
  manifest: Manifest;
  digest: string;
  /** Granted trust: the manifest's requested trust (refused when a verifying key may not grant it). */
  trust: TrustLevel;
  /** The verifying key with the highest `max_trust`, or null for an unsigned bundle accepted without signatures. */
  key_id: string | null;
}

export interface VerifyOptions {
  keyring?: Keyring;
  /** Refuse unsigned bundles. Default true. */
  requireSignatures?: boolean;
  /** Cap on the code, bytes. Default 5 MiB. */
  maxCodeBytes?: number;
}

/**
 * An unsigned artifact from a manifest and code; the manifest is validated and normalized first.
 *
 * @example
 * ```ts
 * const artifact = createArtifact({ bundle: "x", version: "1.0.0", hooks: [...] }, code);
 * ```
 */
export function createArtifact(manifest: unknown, code: string): VcpArtifact {
  const normalized = normalizeManifest(parseManifest(manifest));
  return { format: ARTIFACT_FORMAT, manifest: normalized, code, digest: digestOf({ manifest: normalized, code }), signatures: [] };
}

/**
 * The `.vcpb` text: fixed top-level key order, the manifest's keys in RFC 8785 order, two-space
 * indentation and a final newline. Same artifact ⇒ same bytes.
 *
 * @example
 * ```ts
 * await writeFile("strip-pii.vcpb", serializeArtifact(artifact));
 * ```
 */
export function serializeArtifact(artifact: VcpArtifact | UnverifiedArtifact): string {
  const ordered = {
    format: artifact.format,
    manifest: normalizeManifest(artifact.manifest),
    code: artifact.code,
    digest: artifact.digest,
    signatures: artifact.signatures.map((s) => ({ key_id: s.key_id, alg: s.alg, sig: s.sig })),
  };
  return `${JSON.stringify(ordered, null, 2)}\n`;
}

/**
 * A `.vcpb` as read from a file ({@link readArtifactFile}, {@link parseArtifact}): its outer shape is
 * checked — `format`, a `manifest` object, `code`, a `digest`, `signatures` — and nothing is verified
 * yet: {@link verifyArtifact} checks the digest, the manifest and the signatures before an install.
 */
export interface UnverifiedArtifact {
  format: typeof ARTIFACT_FORMAT;
  /** A JSON object; the manifest rules apply in verifyArtifact, after the digest check. */
  manifest: Record<string, unknown>;
  code: string;
  /** `sha256:<64 lowercase hex digits>`, not yet compared with the content. */
  digest: string;
  /** At most 16; a signature of another algorithm than ed25519 is ignored when verifying. */
  signatures: Array<{ key_id: string; alg: string; sig: string }>;
}

/**
 * Parse `.vcpb` text for {@link verifyArtifact}: JSON syntax and the outer shape are checked here
 * (not the digest, the manifest or the signatures); errors are `INVALID_BUNDLE` naming `file` (and the
 * field, in `details.problems`).
 *
 * @example
 * ```ts
 * const verified = verifyArtifact(parseArtifact(text, "strip-pii.vcpb"), { keyring });
 * ```
 */
export function parseArtifact(text: string, file = "bundle.vcpb"): UnverifiedArtifact {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new VcpError("INVALID_BUNDLE", `${file}: not JSON: ${(err as Error).message}`, { file, problems: [{ field: "(json)", rule: (err as Error).message }] });
  }
  return checkShape(json, file);
}

/**
 * Read a `.vcpb` file; see {@link parseArtifact}. Not a regular file, or larger than `maxBytes`
 * (default 64 MiB): `INPUT_FILE_REFUSED`, before anything is read.
 *
 * @example
 * ```ts
 * const artifact = await readArtifactFile("strip-pii.vcpb"); // UnverifiedArtifact
 * const { manifest, key_id } = verifyArtifact(artifact, { keyring });
 * ```
 */
export async function readArtifactFile(file: string, maxBytes: number = INPUT_FILE_BYTES.artifact): Promise<UnverifiedArtifact> {
  let text: string;
  try {
    text = (await readInputFile(file, maxBytes, "the bundle artifact")).toString("utf8");
  } catch (err) {
    if (err instanceof VcpError) throw err;
    throw new VcpError("INVALID_BUNDLE", `${file}: cannot be read: ${(err as Error).message}`, { file });
  }
  return parseArtifact(text, file);
}

/** Whether `value` looks like a `.vcpb` (has a `format` field) rather than a `{ manifest, code }` source. */
export function isArtifactLike(value: unknown): value is { format: unknown } {
  return typeof value === "object" && value !== null && "format" in value;
}

/**
 * Sign an artifact: adds, or replaces, the Ed25519 signature of `keyId` over the digest. Refuses an
 * artifact whose digest does not match its content (never sign what was tampered with).
 *
 * @example
 * ```ts
 * const signed = signArtifact(artifact, await readFile("ops.key.pem", "utf8"), "ops-2026");
 * ```
 */
export function signArtifact<A extends VcpArtifact | UnverifiedArtifact>(artifact: A, privateKeyPem: string, keyId: string): A {
  if (!KEY_ID.regex.test(keyId)) {
    throw new VcpError("INVALID_CONFIG", `key id '${keyId}' ${KEY_ID.rule}`, { field: "key_id" });
  }
  const shape = checkShape(artifact);
  checkDigest(shape);
  let key: KeyObject;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch {
    throw new VcpError("INVALID_CONFIG", "the signing key is not a PEM private key", { field: "private_key" });
  }
  if (key.asymmetricKeyType !== "ed25519") {
    throw new VcpError("INVALID_CONFIG", `the signing key must be Ed25519 (this is ${key.asymmetricKeyType ?? "unknown"})`, { field: "private_key" });
  }
  const sig = edSign(null, Buffer.from(shape.digest, "utf8"), key).toString("base64");
  const signatures = artifact.signatures.filter((s) => s.key_id !== keyId).map((s) => ({ ...s }));
  const at = artifact.signatures.findIndex((s) => s.key_id === keyId);
  const entry: ArtifactSignature = { key_id: keyId, alg: "ed25519", sig };
  if (at === -1) signatures.push(entry);
  else signatures.splice(at, 0, entry);
  return { ...artifact, signatures };
}

/**
 * Verify an artifact before it is installed (DESIGN §3.2, §3.3), in this order: shape and format;
 * code size; digest recomputed (`DIGEST_MISMATCH` naming expected and actual); manifest; then
 * signatures against the keyring. An unsigned bundle is `UNSIGNED_BUNDLE` when signatures are
 * required. Signatures by unknown keys, of another algorithm, or that do not verify are ignored,
 * but if none verifies the bundle is `SIGNATURE_INVALID` whether or not signatures are required:
 * a bad signature is never downgraded to "unsigned" (GHSA-g2pf-6v5v-qcc8). The requested trust
 * must not exceed the best verifying key's `max_trust` (`TRUST_EXCEEDS_KEY`).
 *
 * @example
 * ```ts
 * const { manifest, trust, key_id } = verifyArtifact(await readArtifactFile("x.vcpb"), { keyring });
 * ```
 */
export function verifyArtifact(input: unknown, options: VerifyOptions = {}): VerifiedArtifact {
  const requireSignatures = options.requireSignatures ?? true;
  const maxCodeBytes = options.maxCodeBytes ?? DEFAULT_MAX_CODE_BYTES;
  const shape = checkShape(input);
  const name = typeof shape.manifest["bundle"] === "string" ? String(shape.manifest["bundle"]).slice(0, 64) : "(unnamed)";
  const size = Buffer.byteLength(shape.code, "utf8");
  // SECURITY: size cap before hashing or compiling anything.
  if (size > maxCodeBytes) {
    throw new VcpError("BUNDLE_TOO_LARGE", `bundle '${name}': code is ${size} bytes, above the cap of ${maxCodeBytes}`, { bundle: name, bytes: size, limit: maxCodeBytes });
  }
  checkDigest(shape);
  const manifest = parseManifest(shape.manifest, `bundle '${name}' manifest`);
  const artifact: VcpArtifact = { format: ARTIFACT_FORMAT, manifest: shape.manifest as Manifest, code: shape.code, digest: shape.digest, signatures: shape.signatures as ArtifactSignature[] };

  if (shape.signatures.length === 0) {
    if (requireSignatures) {
      throw new VcpError("UNSIGNED_BUNDLE", `bundle '${manifest.bundle}' ${manifest.version} is not signed, and signatures are required (sign it with a keyring key)`, {
        bundle: manifest.bundle,
        digest: shape.digest,
      });
    }
    return { artifact, manifest, digest: shape.digest, trust: manifest.trust, key_id: null };
  }

  const index = options.keyring === undefined ? new Map() : keyringIndex(options.keyring);
  const data = Buffer.from(shape.digest, "utf8");
  const rejected: Array<{ key_id: string; reason: string }> = [];
  let best: { key_id: string; max_trust: TrustLevel } | undefined;
  for (const s of shape.signatures) {
    const known = index.get(s.key_id);
    if (known === undefined) {
      rejected.push({ key_id: s.key_id, reason: "unknown key" });
      continue;
    }
    if (s.alg !== "ed25519") {
      rejected.push({ key_id: s.key_id, reason: `unsupported alg '${s.alg}'` });
      continue;
    }
    let ok = false;
    try {
      // SECURITY: Ed25519 over the digest string; the digest was recomputed from the content above.
      ok = edVerify(null, data, known.key, Buffer.from(s.sig, "base64"));
    } catch {
      ok = false;
    }
    if (!ok) {
      rejected.push({ key_id: s.key_id, reason: "signature does not verify" });
      continue;
    }
    if (best === undefined || trustRank(known.max_trust) > trustRank(best.max_trust)) best = { key_id: s.key_id, max_trust: known.max_trust };
  }
  if (best === undefined) {
    // SECURITY: a signed bundle whose signatures all fail is refused, even when signatures are optional.
    throw new VcpError(
      "SIGNATURE_INVALID",
      `bundle '${manifest.bundle}' ${manifest.version}: no signature verifies against the keyring (${rejected.map((r) => `${r.key_id}: ${r.reason}`).join("; ")})`,
      { bundle: manifest.bundle, digest: shape.digest, signatures: rejected },
    );
  }
  if (trustRank(manifest.trust) > trustRank(best.max_trust)) {
    throw new VcpError(
      "TRUST_EXCEEDS_KEY",
      `bundle '${manifest.bundle}' requests trust '${manifest.trust}', but its best verifying key '${best.key_id}' may grant at most '${best.max_trust}'`,
      { bundle: manifest.bundle, requested: manifest.trust, key_id: best.key_id, max_trust: best.max_trust },
    );
  }
  return { artifact, manifest, digest: shape.digest, trust: manifest.trust, key_id: best.key_id };
}

type ArtifactShape = z.infer<typeof ArtifactShapeSchema>;

/**
 * The outer shape of a `.vcpb` as JSON Schema, generated from the schema {@link parseArtifact} checks:
 * the HTTP upload route validates bodies with it (server/schemas.ts), so the route refuses exactly
 * what installing would refuse at this stage (the manifest is checked in full after the digest).
 */
export const ARTIFACT_JSON_SCHEMA: JsonSchema = jsonSchemaOf(ArtifactShapeSchema);

/** The outer shape, or INVALID_BUNDLE naming each bad field (and `file`, when the artifact came from one). */
function checkShape(input: unknown, file?: string): ArtifactShape {
  const parsed = ArtifactShapeSchema.safeParse(input);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => ({
      field: i.path.map((k) => (typeof k === "number" ? `[${k}]` : `.${String(k)}`)).join("").replace(/^\./, "") || "(root)",
      rule: i.code === "unrecognized_keys" ? `unknown field(s): ${i.keys.join(", ")}` : i.message,
    }));
    const what = `not a ${ARTIFACT_FORMAT} artifact: ${problems.map((p) => `${p.field}: ${p.rule}`).join("; ")}`;
    throw new VcpError("INVALID_BUNDLE", file === undefined ? what : `${file}: ${what}`, file === undefined ? { problems } : { file, problems });
  }
  return parsed.data;
}

function checkDigest(shape: ArtifactShape): void {
  let actual: string;
  try {
    actual = digestOf({ manifest: shape.manifest, code: shape.code });
  } catch (err) {
    throw new VcpError("INVALID_BUNDLE", `the manifest has no canonical JSON form: ${(err as Error).message}`, { field: "manifest" });
  }
  if (actual !== shape.digest) {
    throw new VcpError("DIGEST_MISMATCH", `digest mismatch: the artifact says ${shape.digest}, its manifest and code hash to ${actual} (altered or corrupt)`, {
      expected: shape.digest,
      actual,
    });
  }
}

/** The manifest with its keys in RFC 8785 order at every level (stable bytes regardless of YAML key order). */
function normalizeManifest<M extends object>(manifest: M): M {
  return JSON.parse(canonicalJson(manifest)) as M;
}
