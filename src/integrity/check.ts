import type { KeyObject } from "node:crypto";
import { createPublicKey } from "node:crypto";
import type { ConstitutionCheck, ConstitutionProvenance } from "../model/chain.js";
import type { Constitution, SignatureLink } from "../model/constitution.js";
import type { ResolvedHook } from "../model/hook.js";
import { canonicalJson } from "./canonical.js";
import {
  compileKeySet,
  contentDigest,
  parsePrivateKey,
  rememberVerified,
  SIGNATURE_ALG,
  signLink,
  verifyLinks,
  type TrustedKey,
  type VerifyChainOptions,
} from "./signatures.js";

/**
 * Options of the integrity checker. Plain data only (strings and arrays) because the checker is
 * built inside piscina workers of the sandbox host from options sent over IPC.
 */
export interface IntegrityOptions {
  /** Rule ids the deployment designates safety-critical (`safety_critical_rules` in vcp.yaml). */
  safetyCriticalRuleIds: readonly string[];
  /** The runtime's Ed25519 key; when set, modification links are signed and unsigned ones refused. */
  runtimeKey?: { keyId: string; privateKeyPem: string };
  /** Public keys that may have signed the incoming constitutions. */
  trustedConstitutionKeys?: ReadonlyArray<TrustedKey>;
}

/** The link the runtime appends for an accepted modification (DESIGN §4.5). */
export interface ModificationLink extends SignatureLink {
  kind: "modification";
  parent_digest: string;
  digest: string;
  hook: string;
  bundle: string;
  bundle_digest?: string;
}

type Verdict = ReturnType<ConstitutionCheck>;

/**
 * Build the constitution integrity checker of spec §8.2.4 / DESIGN §4.5. Keys are parsed here, once;
 * the returned function is pure and deterministic (no clock, no I/O) and never throws — anything it
 * cannot establish is a rejection with a reason.
 *
 * For a hook's proposed constitution it checks, against the constitution the hook was given:
 * 1. every safety-critical rule (flagged `safety_critical: true`, or listed in
 *    `safetyCriticalRuleIds`) is present with byte-identical RFC 8785 content — not removed, edited,
 *    un-flagged or duplicated; and, when the proposal is composed from other constitutions
 *    (`composedFrom`: an on_conflict resolution, a post_select replacement naming a candidate), every
 *    safety-critical rule of those too ({@link keepsSafetyRulesOf});
 * 2. a signed incoming constitution's chain still verifies (every link against the digest it signed,
 *    in order, attesting the incoming content) and the proposal carries it unchanged as its
 *    `signatures`, adding nothing (a guest cannot forge links);
 * On success it returns the proposal and its provenance (`parent_digest` → `digest`, the content
 * digests before and after). When the incoming constitution was signed, a modification link is
 * appended to its chain, signed with the runtime key when one is configured; an unsigned one is
 * returned exactly as the hook proposed it (spec §4.3, §8.2.4 "if signed").
 *
 * Throws a TypeError at construction for an unusable key (bad PEM, not Ed25519, duplicate key id).
 *
 * @example
 * ```ts
 * const check = createIntegrityChecker({ safetyCriticalRuleIds: ["no-harm-1"], runtimeKey: { keyId: "rt", privateKeyPem } });
 * const verdict = check(previous, proposed, hook);
 * if (!verdict.ok) console.error(verdict.reason); // e.g. "removes safety-critical rule no-harm-1"
 * ```
 */
export function createIntegrityChecker(options: IntegrityOptions): ConstitutionCheck {
  const safetyIds = new Set(options.safetyCriticalRuleIds);
  const trusted = new Map(compileKeySet(options.trustedConstitutionKeys ?? []));
  let runtimeKey: { keyId: string; privateKey: KeyObject } | undefined;
  if (options.runtimeKey !== undefined) {
    const { keyId, privateKeyPem } = options.runtimeKey;
    const privateKey = parsePrivateKey(privateKeyPem, "runtime key");
    const publicKey = createPublicKey(privateKey);
    const listed = trusted.get(keyId);
    if (listed !== undefined && !listed.equals(publicKey)) {
      throw new TypeError(`runtime key id ${keyId} is also a trusted constitution key with a different public key`);
    }
    // The runtime verifies its own earlier modification links (a chain that went through two hooks).
    trusted.set(keyId, publicKey);
    runtimeKey = { keyId, privateKey };
  }
  // SECURITY: with a runtime key, every modification link must be signed; without one, the runtime
  // itself writes unsigned links, so it must accept them in what it is handed back.
  const verifiedCache = new Set<string>();
  const verifyOptions = { allowUnsignedModifications: runtimeKey === undefined, verifiedCache };

  return function checkConstitution(previous: Constitution, proposed: Constitution, hook: ResolvedHook, composedFrom?: readonly Constitution[]): Verdict {
    try {
      return check(previous, proposed, hook, composedFrom ?? []);
    } catch (err) {
      // SECURITY: fail closed. Anything unexpected (non-JSON values, odd shapes) rejects the change.
      return { ok: false, reason: `integrity check failed: ${err instanceof Error ? err.message : String(err)}` };
    }
  };

  function check(previous: Constitution, proposed: Constitution, hook: ResolvedHook, composedFrom: readonly Constitution[]): Verdict {
    if (proposed === null || typeof proposed !== "object" || !Array.isArray(proposed.rules)) {
      return { ok: false, reason: "modified constitution has no rules array" };
    }
    const rulesVerdict = checkSafetyRules(previous, proposed, safetyIds);
    if (rulesVerdict !== null) return { ok: false, reason: rulesVerdict };
    // SECURITY: a composition keeps the safety-critical rules of everything it is made from, not only
    // of the constitution the hook was handed (for on_conflict, a base without the conflicting rules).
    const composedVerdict = keepsSafetyRulesOf(composedFrom, proposed, safetyIds);
    if (composedVerdict !== null) return { ok: false, reason: composedVerdict };

    if (previous.signatures !== undefined && !Array.isArray(previous.signatures)) {
      return { ok: false, reason: "incoming constitution's signatures is not an array" };
    }
    const previousLinks: readonly unknown[] = previous.signatures ?? [];
    const proposedLinks: unknown = proposed.signatures ?? [];
    if (!Array.isArray(proposedLinks)) return { ok: false, reason: "modified constitution's signatures is not an array" };
    const previousDigest = contentDigest(previous);
    const chainVerdict = checkSignaturePrefix(previousDigest, previousLinks, proposedLinks, trusted, verifyOptions);
    if (chainVerdict !== null) return { ok: false, reason: chainVerdict };

    // Who changed what, for the hook result and the audit record, whether or not a chain is extended.
    const provenance: ConstitutionProvenance = { parent_digest: previousDigest, digest: contentDigest(proposed) };
    // Spec §4.3: the replacement reaches the next hook as returned. Spec §8.2.4 keeps a signature chain
    // "(if signed)": an unsigned constitution gets no chain, or it would come out looking signed.
    // SECURITY: only after checkSignaturePrefix refused any link on a proposal whose input carried
    // none, so a guest cannot make an unsigned constitution look signed either.
    if (previousLinks.length === 0) return { ok: true, constitution: proposed, provenance };

    let link: ModificationLink = {
      kind: "modification",
      ...provenance,
      hook: hook.name,
      bundle: hook.action.bundle,
    };
    if (typeof hook.action.digest === "string") link.bundle_digest = hook.action.digest;
    if (runtimeKey !== undefined) {
      link = signLink({ ...link, key_id: runtimeKey.keyId, alg: SIGNATURE_ALG }, runtimeKey.privateKey);
      // Signed here, so valid: the next hook's check need not verify it again.
      rememberVerified(verifiedCache, canonicalJson(link));
    }
    return { ok: true, constitution: { ...proposed, signatures: [...(previousLinks as SignatureLink[]), link] }, provenance };
  }
}

/**
 * Rule check 1: the rules of every safety-critical id, as a list in order, are canonically identical
 * in the proposal. An id is safety-critical when the deployment lists it or any incoming rule with that
 * id is flagged. Returns null when the rules pass, or the reason naming the rule id.
 */
function checkSafetyRules(previous: Constitution, proposed: Constitution, configured: ReadonlySet<string>): string | null {
  const incoming = new Map<string, unknown[]>();
  for (const rule of previous.rules) group(incoming, rule);
  const outgoing = new Map<string, unknown[]>();
  for (const rule of proposed.rules) group(outgoing, rule);

  for (const [id, rules] of incoming) {
    const critical = configured.has(id) || rules.some((r) => (r as { safety_critical?: unknown }).safety_critical === true);
    if (!critical) continue;
    const kept = outgoing.get(id) ?? [];
    if (kept.length === 0) return `removes safety-critical rule ${id}`;
    if (kept.length !== rules.length) return `changes the number of rules with safety-critical id ${id} (${rules.length} → ${kept.length})`;
    for (let i = 0; i < rules.length; i++) {
      const before = rules[i] as Record<string, unknown>;
      const after = kept[i] as Record<string, unknown>;
      if (canonicalJson(before) === canonicalJson(after)) continue;
      if (before.safety_critical === true && after?.safety_critical !== true) {
        return `un-flags safety-critical rule ${id} (safety_critical must stay true)`;
      }
      return `edits safety-critical rule ${id} (its content must stay byte-identical)`;
    }
  }
  return null;
}

/**
 * Whether `result` keeps every safety-critical rule of `sources` (spec §8.2.4), for a constitution
 * made *from* several others: an `on_conflict` resolution or a default strategy's composition, or a
 * `post_select` replacement naming a candidate. Returns null when it does, or the reason.
 *
 * A rule id is safety-critical when the deployment lists it (`configured`) and some source holds it,
 * or when any source's copy is flagged `safety_critical: true`. The result must hold a rule with that
 * id that is byte-identical (RFC 8785) to one of the sources' critical copies — the flagged copies
 * when there are any, otherwise any copy. So a conflict cannot be "resolved" by dropping, editing or
 * un-flagging a safety-critical rule of any constitution being composed, even one the hook was never
 * shown (the composition base leaves conflicting rules out).
 *
 * @example
 * ```ts
 * const why = keepsSafetyRulesOf(input.constitutions, resolution, new Set(config.safety_critical_rules));
 * if (why !== null) reject(why); // e.g. "drops safety-critical rule no-harm-1 of constitution org"
 * ```
 */
export function keepsSafetyRulesOf(sources: readonly Constitution[], result: Constitution, configured: ReadonlySet<string>): string | null {
  // id → the canonical forms a kept copy may have, and the first constitution that holds it.
  const critical = new Map<string, { flagged: Set<string>; any: Set<string>; from: string }>();
  for (const source of sources) {
    for (const rule of source.rules) {
      const id = (rule as { id?: unknown }).id;
      if (typeof id !== "string") continue;
      let entry = critical.get(id);
      if (entry === undefined) critical.set(id, (entry = { flagged: new Set(), any: new Set(), from: String(source.id) }));
      const canonical = canonicalJson(rule);
      entry.any.add(canonical);
      if ((rule as { safety_critical?: unknown }).safety_critical === true) entry.flagged.add(canonical);
    }
  }
  const kept = new Map<string, unknown[]>();
  for (const rule of result.rules) group(kept, rule);
  for (const [id, entry] of critical) {
    if (entry.flagged.size === 0 && !configured.has(id)) continue;
    const allowed = entry.flagged.size > 0 ? entry.flagged : entry.any;
    const copies = kept.get(id) ?? [];
    if (copies.length === 0) return `drops safety-critical rule ${id} of constitution ${entry.from}`;
    if (!copies.some((copy) => allowed.has(canonicalJson(copy)))) {
      return `edits or un-flags safety-critical rule ${id} of constitution ${entry.from} (a composition must keep one of its copies byte-identical)`;
    }
  }
  return null;
}

function group(into: Map<string, unknown[]>, rule: unknown): void {
  const id = rule !== null && typeof rule === "object" ? (rule as { id?: unknown }).id : undefined;
  if (typeof id !== "string") return;
  const list = into.get(id);
  if (list === undefined) into.set(id, [rule]);
  else list.push(rule);
}

/**
 * Signature check 2: the incoming chain verifies and attests the incoming content, and the proposal
 * carries exactly that chain. Returns null when it passes, or the reason.
 */
function checkSignaturePrefix(
  previousDigest: string,
  previousLinks: readonly unknown[],
  proposedLinks: readonly unknown[],
  keys: ReadonlyMap<string, KeyObject>,
  verifyOptions: VerifyChainOptions,
): string | null {
  if (previousLinks.length > 0) {
    const verdict = verifyLinks(previousLinks, keys, verifyOptions);
    if (!verdict.ok) return `incoming signature chain does not verify: ${verdict.reason}`;
    const head = previousLinks[previousLinks.length - 1] as SignatureLink;
    if (head.digest !== previousDigest) {
      return `incoming signature chain does not attest the incoming content (last link ${head.digest}, content ${previousDigest})`;
    }
  }
  if (proposedLinks.length < previousLinks.length) {
    return `strips signature links: the incoming chain has ${previousLinks.length}, the modification keeps ${proposedLinks.length}`;
  }
  const incoming = previousLinks.map((link) => canonicalJson(link));
  for (let i = 0; i < incoming.length; i++) {
    const kept = canonicalJson(proposedLinks[i]);
    if (kept === incoming[i]) continue;
    const elsewhere = incoming.indexOf(kept);
    if (elsewhere >= 0) return `reorders signature links: link ${i} is the incoming link ${elsewhere}`;
    return `alters signature link ${i}: the incoming chain must be kept unchanged (edited, replaced or replayed link)`;
  }
  if (proposedLinks.length > previousLinks.length) {
    return `adds ${proposedLinks.length - previousLinks.length} signature link(s) the incoming constitution did not carry: only the runtime appends links`;
  }
  return null;
}
