import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto";
import type { Constitution, SignatureLink } from "../model/constitution.js";
import { canonicalJson } from "./canonical.js";
import { digestOf } from "./digest.js";
import { DIGEST } from "../model/names.js";

/*
 * Signature chain of a constitution (DESIGN §4.5, spec §8.2.4).
 *
 *   content C0 ──sign──▶ link0 { key_id, alg, digest: D0, sig }                      (signer)
 *                        link1 { key_id, alg, digest: D0, parent_digest: D0, sig }   (co-signer, optional)
 *   hook modifies C0→C1  link2 { kind: "modification", parent_digest: D0, digest: D1,
 *                                hook, bundle, bundle_digest, key_id?, alg?, sig? }   (runtime)
 *   hook modifies C1→C2  link3 { kind: "modification", parent_digest: D1, digest: D2, … }
 *
 * Dn = digestOf(Cn without `signatures`) — `sha256:<hex>` of the RFC 8785 form.
 *
 * Chain rules (checked by verifySignatureChain):
 *   - link i ≥ 1 naming a parent_digest must name link i-1's digest; a signature link without one
 *     co-signs link i-1's content (same digest). So links cannot be reordered, dropped from the
 *     middle, or spliced in from another constitution.
 *   - link 0 names a parent_digest only if it is a modification of an unsigned constitution (this
 *     runtime no longer writes such chains: an unsigned constitution stays unsigned, check.ts; they
 *     still verify); a signature link 0 naming a parent means links before it were stripped.
 *   - the last link's digest is the digest of the content as it is now: the chain attests the
 *     current content, not some earlier version.
 *
 * What a signature covers: Ed25519 over the RFC 8785 form of the link without `sig`. That form holds
 * the content digest (so the signature is "over the digest" as DESIGN §4.5 says) and also binds
 * parent_digest, key_id and, for modification links, hook/bundle/bundle_digest.
 * SECURITY: signing only the bare digest would let anyone re-label a signed link (rewrite its
 * parent_digest or hook name) and splice a validly signed content digest into a different custody
 * history; binding the whole link closes that.
 */

/** The algorithm every link uses; anything else is rejected. */
export const SIGNATURE_ALG = "ed25519";

/** A public key that may verify constitution links, as `trustedConstitutionKeys` lists it. */
export interface TrustedKey {
  key_id: string;
  public_key_pem: string;
}

/** Keys parsed once (compile at load, run at call); key_id → Ed25519 public key. */
export type KeySet = ReadonlyMap<string, KeyObject>;

export type ChainVerdict = { ok: true } | { ok: false; reason: string };

export interface VerifyChainOptions {
  /**
   * Canonical forms of links already verified against the same key set. A hit skips only the
   * Ed25519 verification (same bytes, same keys ⇒ same answer); shape and chain checks always run.
   * The integrity checker keeps one per checker, so a chain of N modifying hooks does not re-verify
   * every earlier link N times.
   */
  verifiedCache?: Set<string>;
  /**
   * Accept modification links that carry no signature (written by a runtime with no key). Default
   * false: every link must verify. The integrity checker sets it when it has no runtime key itself.
   */
  allowUnsignedModifications?: boolean;
}

/** Bound on a verifiedCache; cleared wholesale when full (cheap, and misses only cost a verify). */
const VERIFIED_CACHE_MAX = 4096;
/** An Ed25519 signature is 64 bytes: 88 base64 characters. Strict, so a sig has exactly one spelling. */
const SIG_PATTERN = /^[A-Za-z0-9+/]{86}==$/;

/**
 * The digest a signature link attests: `sha256:<hex>` of the RFC 8785 form of the constitution
 * without its `signatures`.
 *
 * @example
 * ```ts
 * const d = contentDigest({ id: "c", rules: [] }); // "sha256:…"
 * ```
 */
export function contentDigest(constitution: Constitution): string {
  const { signatures: _signatures, ...content } = constitution;
  return digestOf(content);
}

/**
 * Parse trusted keys once. Throws a TypeError naming the key if a PEM is not an Ed25519 public key or
 * a key_id repeats, so a configuration mistake surfaces at start-up, not at the first modification.
 *
 * @example
 * ```ts
 * const keys = compileKeySet([{ key_id: "ops-2026", public_key_pem: pem }]);
 * ```
 */
export function compileKeySet(keys: ReadonlyArray<TrustedKey>): KeySet {
  const map = new Map<string, KeyObject>();
  for (const { key_id, public_key_pem } of keys) {
    if (typeof key_id !== "string" || key_id.length === 0) throw new TypeError("trusted key without a key_id");
    if (map.has(key_id)) throw new TypeError(`trusted key ${key_id} is listed twice`);
    let key: KeyObject;
    try {
      key = createPublicKey(public_key_pem);
    } catch (err) {
      throw new TypeError(`trusted key ${key_id} is not a PEM public key: ${(err as Error).message}`);
    }
    if (key.asymmetricKeyType !== "ed25519") throw new TypeError(`trusted key ${key_id} is ${key.asymmetricKeyType}, not ed25519`);
    map.set(key_id, key);
  }
  return map;
}

/** Parse an Ed25519 private key PEM; throws a TypeError if it is not one. */
export function parsePrivateKey(privateKeyPem: string, what = "private key"): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(privateKeyPem);
  } catch (err) {
    throw new TypeError(`${what} is not a PEM private key: ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== "ed25519") throw new TypeError(`${what} is ${key.asymmetricKeyType}, not ed25519`);
  return key;
}

/** The bytes a link's signature covers: RFC 8785 form of the link without `sig`. */
export function linkSigningPayload(link: SignatureLink): Buffer {
  const { sig: _sig, ...unsigned } = link;
  return Buffer.from(canonicalJson(unsigned), "utf8");
}

/** Sign a link (which must not yet carry `sig`) with an Ed25519 key; returns the link with `sig` (base64). */
export function signLink<T extends SignatureLink>(link: T, privateKey: KeyObject): T & { sig: string } {
  const sig = sign(null, linkSigningPayload(link), privateKey).toString("base64");
  return { ...link, sig };
}

/**
 * Append a signature link over the constitution's current content. The new link names the previous
 * link's digest as `parent_digest` when there is one (chain of custody). Returns a new constitution;
 * the argument is not changed. Deterministic: Ed25519 signatures are.
 *
 * @example
 * ```ts
 * const { privateKey } = generateKeyPairSync("ed25519");
 * const signed = signConstitution(constitution, privateKey.export({ type: "pkcs8", format: "pem" }) as string, "ops-2026");
 * verifySignatureChain(signed, [{ key_id: "ops-2026", public_key_pem }]); // { ok: true }
 * ```
 */
export function signConstitution(constitution: Constitution, privateKeyPem: string, keyId: string): Constitution {
  const privateKey = parsePrivateKey(privateKeyPem);
  const previous = constitution.signatures ?? [];
  const last = previous.at(-1);
  const link: SignatureLink = { key_id: keyId, alg: SIGNATURE_ALG, digest: contentDigest(constitution) };
  if (last?.digest !== undefined) link.parent_digest = last.digest;
  return { ...constitution, signatures: [...previous, signLink(link, privateKey)] };
}

/**
 * Verify a constitution's whole signature chain against trusted keys: every link's signature, the
 * links' order (each names its predecessor), and that the last link attests the current content.
 * A constitution without signatures does not verify. A link signed by a key_id not among `keys` is
 * an error ("cannot verify"), never silently skipped.
 *
 * @example
 * ```ts
 * const verdict = verifySignatureChain(constitution, [{ key_id: "ops-2026", public_key_pem }]);
 * if (!verdict.ok) console.error(verdict.reason);
 * ```
 */
export function verifySignatureChain(
  constitution: Constitution,
  keys: ReadonlyArray<TrustedKey> | KeySet,
  options: VerifyChainOptions = {},
): ChainVerdict {
  let keySet: KeySet;
  try {
    keySet = keys instanceof Map ? keys : compileKeySet(keys as ReadonlyArray<TrustedKey>);
  } catch (err) {
    return { ok: false, reason: (err as Error).message };
  }
  const links = constitution.signatures;
  if (!Array.isArray(links) || links.length === 0) return { ok: false, reason: "constitution carries no signatures" };
  const chain = verifyLinks(links, keySet, options);
  if (!chain.ok) return chain;
  const digest = contentDigest(constitution);
  const head = links[links.length - 1]!;
  if (head.digest !== digest) {
    return { ok: false, reason: `signature chain does not attest the current content: last link signed ${head.digest}, content is ${digest}` };
  }
  return { ok: true };
}

/**
 * Check each link's shape, signature and its place in the chain (without comparing the head with the
 * content; callers do that). Exposed for the integrity checker, which verifies an incoming prefix.
 */
export function verifyLinks(links: readonly unknown[], keys: KeySet, options: VerifyChainOptions = {}): ChainVerdict {
  for (let i = 0; i < links.length; i++) {
    const raw = links[i];
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return { ok: false, reason: `signature link ${i} is not an object` };
    const link = raw as SignatureLink & { kind?: unknown; hook?: unknown; bundle?: unknown };
    const isModification = link.kind === "modification";
    if (link.kind !== undefined && !isModification) return { ok: false, reason: `signature link ${i} has unknown kind ${JSON.stringify(link.kind)}` };
    if (typeof link.digest !== "string" || !DIGEST.regex.test(link.digest)) {
      return { ok: false, reason: `signature link ${i} has no valid digest (want sha256:<64 hex>)` };
    }
    if (link.parent_digest !== undefined && (typeof link.parent_digest !== "string" || !DIGEST.regex.test(link.parent_digest))) {
      return { ok: false, reason: `signature link ${i} has an invalid parent_digest` };
    }
    if (isModification && (typeof link.hook !== "string" || typeof link.bundle !== "string" || link.parent_digest === undefined)) {
      return { ok: false, reason: `modification link ${i} lacks hook, bundle or parent_digest` };
    }

    // Place in the chain.
    const before = i > 0 ? (links[i - 1] as SignatureLink) : undefined;
    if (before === undefined) {
      if (link.parent_digest !== undefined && !isModification) {
        return { ok: false, reason: `signature link 0 names parent_digest ${link.parent_digest} that is not in the chain (links stripped or replayed)` };
      }
    } else if (link.parent_digest !== undefined) {
      if (link.parent_digest !== before.digest) {
        return { ok: false, reason: `signature link ${i} does not chain: parent_digest ${link.parent_digest} is not link ${i - 1}'s digest ${before.digest} (reordered or replayed)` };
      }
    } else if (link.digest !== before.digest) {
      return { ok: false, reason: `signature link ${i} does not chain: it names no parent and signs a different digest than link ${i - 1} (reordered or replayed)` };
    }

    // Signature.
    const unsigned = link.sig === undefined && link.key_id === undefined && link.alg === undefined;
    if (unsigned && isModification && options.allowUnsignedModifications === true) continue;
    if (unsigned) return { ok: false, reason: `signature link ${i} is unsigned` };
    if (typeof link.key_id !== "string") return { ok: false, reason: `signature link ${i} has no key_id` };
    if (link.alg !== SIGNATURE_ALG) return { ok: false, reason: `signature link ${i} (key ${link.key_id}) uses alg ${String(link.alg)}, not ${SIGNATURE_ALG}` };
    if (typeof link.sig !== "string" || !SIG_PATTERN.test(link.sig)) {
      return { ok: false, reason: `signature link ${i} (key ${link.key_id}) has no well-formed sig (base64 of 64 bytes)` };
    }
    const key = keys.get(link.key_id);
    if (key === undefined) return { ok: false, reason: `cannot verify signature link ${i}: unknown key_id ${link.key_id}` };
    const cacheKey = options.verifiedCache ? canonicalJson(link) : undefined;
    if (cacheKey !== undefined && options.verifiedCache!.has(cacheKey)) continue;
    let valid: boolean;
    try {
      valid = verify(null, linkSigningPayload(link), key, Buffer.from(link.sig, "base64"));
    } catch {
      valid = false;
    }
    if (!valid) return { ok: false, reason: `signature link ${i} (key ${link.key_id}) does not verify against digest ${link.digest}` };
    if (cacheKey !== undefined) rememberVerified(options.verifiedCache!, cacheKey);
  }
  return { ok: true };
}

/** Add a verified link's canonical form to a bounded verifiedCache. */
export function rememberVerified(cache: Set<string>, canonicalLink: string): void {
  if (cache.size >= VERIFIED_CACHE_MAX) cache.clear();
  cache.add(canonicalLink);
}
