import { describe, expect, test } from "vitest";
import { generateKeyPairSync } from "node:crypto";
import { createIntegrityChecker, keepsSafetyRulesOf, type ModificationLink } from "../../../src/integrity/check.js";
import { contentDigest, signConstitution, verifySignatureChain } from "../../../src/integrity/signatures.js";
import type { Constitution, SignatureLink } from "../../../src/model/constitution.js";
import { baseConstitution, clone, hook, makeKey, trusted } from "./helpers.js";

const ops = makeKey("ops-2026");
const auditor = makeKey("auditor");
const rt = makeKey("runtime-1");

const checker = createIntegrityChecker({
  safetyCriticalRuleIds: ["legal-1"],
  runtimeKey: { keyId: rt.keyId, privateKeyPem: rt.privateKeyPem },
  trustedConstitutionKeys: trusted(ops, auditor),
});
const h1 = hook("rewrite_tone");
const h2 = hook("add_disclaimer", "policy-b");

/** The signed constitution a post_select hook receives. */
const signed = (): Constitution => signConstitution(baseConstitution(), ops.privateKeyPem, ops.keyId);
/** A harmless edit: a non-critical rule changes and a rule is added; signatures kept as received. */
function harmlessEdit(c: Constitution): Constitution {
  const next = clone(c);
  next.rules = next.rules.map((r) => (r.id === "tone-1" ? { ...r, text: "Be concise and friendly." } : r));
  next.rules.push({ id: "style-2", text: "Use plain words." });
  return next;
}
const rejected = (verdict: ReturnType<typeof checker>): string => {
  expect(verdict.ok).toBe(false);
  return verdict.ok ? "" : verdict.reason;
};

describe("integrity checker: safety-critical rules (DESIGN §4.5.1)", () => {
  test("removing a safety-critical rule is rejected, naming the rule", () => {
    const previous = signed();
    const proposed = harmlessEdit(previous);
    proposed.rules = proposed.rules.filter((r) => r.id !== "no-harm-1");
    expect(rejected(checker(previous, proposed, h1))).toMatch(/removes safety-critical rule no-harm-1/);
  });

  test("editing a safety-critical rule's text is rejected, naming the rule", () => {
    const previous = signed();
    const proposed = harmlessEdit(previous);
    proposed.rules[0] = { ...proposed.rules[0]!, text: "Never help cause physical harm, unless asked nicely." };
    expect(rejected(checker(previous, proposed, h1))).toMatch(/edits safety-critical rule no-harm-1/);
  });

  test("editing an extra field of a safety-critical rule is rejected (byte-identical content)", () => {
    const previous = signed();
    const proposed = harmlessEdit(previous);
    proposed.rules[1] = { ...proposed.rules[1]!, severity: "low" };
    expect(rejected(checker(previous, proposed, h1))).toMatch(/edits safety-critical rule privacy-1/);
  });

  test("un-flagging a safety-critical rule (safety_critical: false) is rejected", () => {
    const previous = signed();
    const proposed = harmlessEdit(previous);
    proposed.rules[0] = { ...proposed.rules[0]!, safety_critical: false };
    expect(rejected(checker(previous, proposed, h1))).toMatch(/un-flags safety-critical rule no-harm-1/);
  });

  test("a rule listed by id in the deployment config is protected even though it is not flagged", () => {
    const previous = signed();
    const edited = harmlessEdit(previous);
    edited.rules = edited.rules.map((r) => (r.id === "legal-1" ? { ...r, text: "Law is optional." } : r));
    expect(rejected(checker(previous, edited, h1))).toMatch(/edits safety-critical rule legal-1/);
    const removed = harmlessEdit(previous);
    removed.rules = removed.rules.filter((r) => r.id !== "legal-1");
    expect(rejected(checker(previous, removed, h1))).toMatch(/removes safety-critical rule legal-1/);
    // Control: without the deployment listing, the same edit is a legitimate modification.
    const unlisted = createIntegrityChecker({ safetyCriticalRuleIds: [], trustedConstitutionKeys: trusted(ops) });
    expect(unlisted(previous, edited, h1).ok).toBe(true);
  });

  test("adding a second rule under a safety-critical id (shadowing it) is rejected", () => {
    const previous = signed();
    const proposed = harmlessEdit(previous);
    proposed.rules.push({ id: "no-harm-1", text: "Harm is fine." });
    expect(rejected(checker(previous, proposed, h1))).toMatch(/safety-critical id no-harm-1/);
  });

  test("moving safety-critical rules around and changing other rules is accepted", () => {
    const previous = signed();
    const proposed = harmlessEdit(previous);
    proposed.rules.reverse();
    expect(checker(previous, proposed, h1).ok).toBe(true);
  });
});

describe("integrity checker: signature chain (DESIGN §4.5.2)", () => {
  test("stripping the signatures is rejected", () => {
    const previous = signed();
    const { signatures: _dropped, ...proposed } = harmlessEdit(previous);
    expect(rejected(checker(previous, proposed, h1))).toMatch(/strips signature links: the incoming chain has 1, the modification keeps 0/);
  });

  test("editing a signature link is rejected", () => {
    const previous = signed();
    const other = signConstitution({ ...baseConstitution(), version: "9" }, ops.privateKeyPem, ops.keyId);
    const proposed = harmlessEdit(previous);
    // A well-formed but different signature in place of the original one.
    proposed.signatures = [{ ...proposed.signatures![0]!, sig: other.signatures![0]!.sig }];
    expect(rejected(checker(previous, proposed, h1))).toMatch(/alters signature link 0/);
    const relabelled = harmlessEdit(previous);
    relabelled.signatures = [{ ...relabelled.signatures![0]!, key_id: "auditor" }];
    expect(rejected(checker(previous, relabelled, h1))).toMatch(/alters signature link 0/);
  });

  test("reordering signature links is rejected", () => {
    const previous = signConstitution(signed(), auditor.privateKeyPem, auditor.keyId);
    expect(previous.signatures).toHaveLength(2);
    expect(checker(previous, harmlessEdit(previous), h1).ok).toBe(true);
    const proposed = harmlessEdit(previous);
    proposed.signatures = [proposed.signatures![1]!, proposed.signatures![0]!];
    expect(rejected(checker(previous, proposed, h1))).toMatch(/reorders signature links/);
  });

  test("replaying a signature link from another constitution is rejected", () => {
    const previous = signed();
    const other = signConstitution({ id: "other", rules: [{ id: "x", text: "y" }] }, ops.privateKeyPem, ops.keyId);
    // In place of the genuine link: it verifies on its own (same trusted key) but signed other content.
    const replaced = harmlessEdit(previous);
    replaced.signatures = [...other.signatures!];
    expect(rejected(checker(previous, replaced, h1))).toMatch(/alters signature link 0/);
    // Or after it, to look like a co-signature: it does not chain.
    const appended = harmlessEdit(previous);
    appended.signatures = [...previous.signatures!, ...other.signatures!];
    expect(rejected(checker(previous, appended, h1))).toMatch(/adds 1 signature link/);
    // And a constitution presented with a replayed chain does not verify as incoming either.
    const forgedIncoming = { ...baseConstitution(), signatures: other.signatures };
    expect(rejected(checker(forgedIncoming, harmlessEdit(forgedIncoming), h1))).toMatch(/does not attest the incoming content/);
  });

  test("appending a forged modification link is rejected", () => {
    const previous = signed();
    const proposed = harmlessEdit(previous);
    const forged: ModificationLink = {
      kind: "modification",
      parent_digest: contentDigest(previous),
      digest: contentDigest(proposed),
      hook: "trusted_system_hook",
      bundle: "core",
    };
    proposed.signatures = [...previous.signatures!, forged];
    expect(rejected(checker(previous, proposed, h1))).toMatch(/adds 1 signature link\(s\) the incoming constitution did not carry/);
    // Even on an unsigned constitution, a guest cannot start a chain of its own.
    const unsigned = baseConstitution();
    const selfSigned = signConstitution(harmlessEdit(unsigned), ops.privateKeyPem, ops.keyId);
    expect(rejected(checker(unsigned, selfSigned, h1))).toMatch(/adds 1 signature link/);
  });

  test("an incoming link signed by an unknown key is an error: cannot verify", () => {
    const stranger = makeKey("stranger");
    const previous = signConstitution(baseConstitution(), stranger.privateKeyPem, stranger.keyId);
    expect(rejected(checker(previous, harmlessEdit(previous), h1))).toMatch(/cannot verify signature link 0: unknown key_id stranger/);
  });

  test("an incoming link whose signature no longer matches its digest is rejected", () => {
    const previous = signed();
    const link = previous.signatures![0]!;
    // The caller tampered with content and re-labelled the digest without being able to re-sign.
    const tampered: Constitution = { ...previous, rules: [], signatures: [{ ...link, digest: contentDigest({ ...previous, rules: [] }) }] };
    expect(rejected(checker(tampered, harmlessEdit(tampered), h1))).toMatch(/does not verify against digest/);
  });

  test("with a runtime key, unsigned modification links in the incoming chain are refused", () => {
    const keyless = createIntegrityChecker({ safetyCriticalRuleIds: [], trustedConstitutionKeys: trusted(ops) });
    const first = keyless(signed(), harmlessEdit(signed()), h1);
    expect(first.ok).toBe(true);
    const incoming = (first as { constitution: Constitution }).constitution;
    expect(rejected(checker(incoming, harmlessEdit(incoming), h2))).toMatch(/link 1 is unsigned/);
    // The keyless runtime accepts its own unsigned links on the next hook.
    expect(keyless(incoming, harmlessEdit(incoming), h2).ok).toBe(true);
  });
});

describe("integrity checker: modification links (DESIGN §4.5.2)", () => {
  test("happy path: the proposal comes back with a signed modification link that verifies", () => {
    const previous = signed();
    const snapshot = clone(previous);
    const proposed = harmlessEdit(previous);
    const proposedSnapshot = clone(proposed);
    const verdict = checker(previous, proposed, h1);
    expect(verdict.ok).toBe(true);
    const result = (verdict as { constitution: Constitution }).constitution;
    expect(result.rules).toEqual(proposed.rules);
    expect(result.signatures).toHaveLength(2);
    expect(result.signatures![0]).toEqual(previous.signatures![0]);
    const link = result.signatures![1] as ModificationLink;
    expect(link).toMatchObject({
      kind: "modification",
      parent_digest: contentDigest(previous),
      digest: contentDigest(proposed),
      hook: "rewrite_tone",
      bundle: "policy-a",
      bundle_digest: "sha256:" + "ab".repeat(32),
      key_id: "runtime-1",
      alg: "ed25519",
    });
    expect(link.parent_digest).toBe(previous.signatures![0]!.digest);
    expect(verifySignatureChain(result, trusted(ops, rt))).toEqual({ ok: true });
    // The runtime's key must be trusted for the modification to verify.
    expect(verifySignatureChain(result, trusted(ops))).toMatchObject({ ok: false, reason: expect.stringMatching(/unknown key_id runtime-1/) });
    // Inputs are untouched; the checker is deterministic.
    expect(previous).toEqual(snapshot);
    expect(proposed).toEqual(proposedSnapshot);
    expect(checker(previous, proposed, h1)).toEqual(verdict);
  });

  test("chained modifications of a signed constitution by two hooks extend its chain by two links that verify", () => {
    const start = signed();
    const first = checker(start, harmlessEdit(start), h1);
    expect(first.ok).toBe(true);
    const afterFirst = (first as { constitution: Constitution }).constitution;
    const second = harmlessEdit(afterFirst);
    second.rules.push({ id: "disclaimer", text: "Not legal advice." });
    const verdict = checker(afterFirst, second, h2);
    expect(verdict.ok).toBe(true);
    const result = (verdict as { constitution: Constitution }).constitution;
    const links = result.signatures as ModificationLink[];
    expect(links[0]).toEqual(start.signatures![0]);
    expect(links.slice(1).map((l) => [l.kind, l.hook, l.bundle])).toEqual([
      ["modification", "rewrite_tone", "policy-a"],
      ["modification", "add_disclaimer", "policy-b"],
    ]);
    expect(links[1]!.parent_digest).toBe(contentDigest(start));
    expect(links[2]!.parent_digest).toBe(links[1]!.digest);
    expect(links[2]!.digest).toBe(contentDigest(result));
    expect(verifySignatureChain(result, trusted(ops, rt))).toEqual({ ok: true });
    // Tampering after the fact breaks it.
    const tampered = { ...result, rules: result.rules.slice(1) };
    expect(verifySignatureChain(tampered, trusted(ops, rt)).ok).toBe(false);
  });

  test("without a runtime key the modification link is unsigned", () => {
    const keyless = createIntegrityChecker({ safetyCriticalRuleIds: [], trustedConstitutionKeys: trusted(ops) });
    const verdict = keyless(signed(), harmlessEdit(signed()), hook("h", "b", null));
    expect(verdict.ok).toBe(true);
    const link = (verdict as { constitution: Constitution }).constitution.signatures![1] as SignatureLink;
    expect(Object.keys(link).sort()).toEqual(["bundle", "digest", "hook", "kind", "parent_digest"]);
  });

  // Issue 11 defect 7: a link used to be appended to an unsigned constitution, which then came out "signed".
  test.each([
    ["with a runtime key", checker],
    ["without a runtime key", createIntegrityChecker({ safetyCriticalRuleIds: ["legal-1"] })],
  ])("an unsigned constitution's replacement comes back exactly as the hook returned it (%s), with its provenance", (_, check) => {
    const start = baseConstitution();
    const proposed = harmlessEdit(start);
    const verdict = check(start, proposed, h1);
    expect(verdict).toEqual({ ok: true, constitution: proposed, provenance: { parent_digest: contentDigest(start), digest: contentDigest(proposed) } });
    expect("signatures" in (verdict as { constitution: Constitution }).constitution).toBe(false);
    // The next hook gets it unsigned too, and its change is traced from the first one's result.
    const second = harmlessEdit(proposed);
    second.rules.push({ id: "disclaimer", text: "Not legal advice." });
    const next = check(proposed, second, h2);
    expect(next).toEqual({ ok: true, constitution: second, provenance: { parent_digest: contentDigest(proposed), digest: contentDigest(second) } });
  });

  test("a signed constitution's modification reports the provenance its link records", () => {
    const verdict = checker(signed(), harmlessEdit(signed()), h1) as { constitution: Constitution; provenance: unknown };
    const link = verdict.constitution.signatures![1] as ModificationLink;
    expect(verdict.provenance).toEqual({ parent_digest: link.parent_digest, digest: link.digest });
  });
});

describe("integrity checker: robustness", () => {
  test("malformed proposals are rejected, never thrown", () => {
    const previous = signed();
    const noRules = { id: "x" } as unknown as Constitution;
    expect(rejected(checker(previous, noRules, h1))).toMatch(/no rules array/);
    const badSignatures = { ...harmlessEdit(previous), signatures: "nope" } as unknown as Constitution;
    expect(rejected(checker(previous, badSignatures, h1))).toMatch(/not an array/);
    const cyclic: any = harmlessEdit(previous);
    cyclic.rules[0].self = cyclic.rules[0];
    expect(checker(previous, cyclic, h1).ok).toBe(false);
  });

  test("a link verified once (and cached) is not trusted again after it changes", () => {
    const local = createIntegrityChecker({ safetyCriticalRuleIds: [], trustedConstitutionKeys: trusted(ops) });
    const previous = signed();
    expect(local(previous, harmlessEdit(previous), h1).ok).toBe(true);
    expect(local(previous, harmlessEdit(previous), h1).ok).toBe(true); // cache hit
    const other = signConstitution({ ...baseConstitution(), version: "2" }, ops.privateKeyPem, ops.keyId);
    const forged = { ...previous, signatures: [{ ...previous.signatures![0]!, sig: other.signatures![0]!.sig }] };
    expect(rejected(local(forged, harmlessEdit(forged), h1))).toMatch(/does not verify against digest/);
  });

  test("unusable keys fail at construction", () => {
    const rsa = generateKeyPairSync("rsa", { modulusLength: 1024 });
    const rsaPem = rsa.publicKey.export({ type: "spki", format: "pem" }) as string;
    expect(() => createIntegrityChecker({ safetyCriticalRuleIds: [], trustedConstitutionKeys: [{ key_id: "r", public_key_pem: rsaPem }] })).toThrow(/not ed25519/);
    expect(() => createIntegrityChecker({ safetyCriticalRuleIds: [], runtimeKey: { keyId: "r", privateKeyPem: "garbage" } })).toThrow(/runtime key/);
    expect(() =>
      createIntegrityChecker({ safetyCriticalRuleIds: [], runtimeKey: { keyId: ops.keyId, privateKeyPem: rt.privateKeyPem }, trustedConstitutionKeys: trusted(ops) }),
    ).toThrow(/different public key/);
  });
});

describe("compositions keep the safety-critical rules of what they are made from (keepsSafetyRulesOf)", () => {
  const harm = { id: "no-harm", text: "Do not help cause physical harm.", safety_critical: true };
  const privacy = { id: "privacy", text: "Do not reveal personal data." };
  const tone = { id: "tone", text: "Be courteous." };
  const org: Constitution = { id: "org", rules: [harm, tone] };
  const user: Constitution = { id: "user", rules: [privacy, { id: "allow-all", text: "Answer everything." }] };
  const none: ReadonlySet<string> = new Set();

  test.each([
    ["keeps every flagged rule", [harm, tone], none, null],
    ["drops a flagged rule of one source", [tone, privacy], none, "drops safety-critical rule no-harm of constitution org"],
    ["drops a configured rule (not flagged) of a source", [harm], new Set(["privacy"]), "drops safety-critical rule privacy of constitution user"],
    ["a configured id no source holds is not required", [harm], new Set(["elsewhere"]), null],
    ["un-flags a flagged rule", [{ id: "no-harm", text: harm.text }], none, "edits or un-flags safety-critical rule no-harm of constitution org (a composition must keep one of its copies byte-identical)"],
    ["rewords a configured rule", [harm, { ...privacy, text: "Reveal what you like." }], new Set(["privacy"]), expect.stringContaining("edits or un-flags safety-critical rule privacy")],
  ] as const)("%s", (_name, rules, configured, expected) => {
    expect(keepsSafetyRulesOf([org, user], { id: "composed", rules: [...rules] }, configured)).toEqual(expected);
  });

  test("when two sources hold different copies of a critical id, keeping one flagged copy is enough", () => {
    const other: Constitution = { id: "other", rules: [{ ...harm, text: "Never assist with harm." }] };
    expect(keepsSafetyRulesOf([org, other], { id: "composed", rules: [harm] }, none)).toBeNull();
    expect(keepsSafetyRulesOf([org, other], { id: "composed", rules: [other.rules[0]!] }, none)).toBeNull();
  });

  test("the checker applies it to composedFrom, besides the constitution the hook was given", () => {
    const check = createIntegrityChecker({ safetyCriticalRuleIds: ["privacy"] });
    const base: Constitution = { id: "composed:org+user", rules: [tone] };
    expect(check(base, { ...base, rules: [tone, { id: "allow-all", text: "Answer everything." }] }, hook("resolver"), [org, user])).toEqual({
      ok: false,
      reason: "drops safety-critical rule no-harm of constitution org",
    });
    expect(check(base, { ...base, rules: [tone, harm, privacy] }, hook("resolver"), [org, user]).ok).toBe(true);
    // Without composedFrom only the given constitution counts (as for pre_inject).
    expect(check(base, { ...base, rules: [tone] }, hook("resolver")).ok).toBe(true);
  });
});
