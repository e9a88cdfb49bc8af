import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createIntegrityChecker } from "../../../src/integrity/check.js";
import { signConstitution, verifySignatureChain } from "../../../src/integrity/signatures.js";
import type { Constitution, Rule } from "../../../src/model/constitution.js";
import { hook, makeKey, trusted } from "./helpers.js";

const ops = makeKey("ops");
const rt = makeKey("rt");
const h = hook("prop_hook");

const json = fc.jsonValue({ maxDepth: 2 });
const ruleBody = fc.record({ text: fc.string(), extra: fc.option(json, { nil: undefined }) });
/** A constitution with unique rule ids, some flagged, some listed in the config. */
const scenario = fc
  .uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/), { minLength: 1, maxLength: 8 })
  .chain((ids) =>
    fc.record({
      rules: fc.tuple(...ids.map((id) =>
        fc.record({ body: ruleBody, flagged: fc.boolean(), listed: fc.boolean() }).map(({ body, flagged, listed }) => {
          const rule: Rule = { id, text: body.text };
          if (body.extra !== undefined) rule.meta = body.extra;
          if (flagged) rule.safety_critical = true;
          return { rule, critical: flagged || listed, listed };
        }),
      )),
      signed: fc.boolean(),
      newRules: fc.array(fc.record({ n: fc.nat(1000), text: fc.string() }), { maxLength: 3 }),
      edits: fc.array(fc.string(), { maxLength: 8 }),
      seed: fc.nat(),
      version: fc.string(),
    }),
  );

type Scenario = typeof scenario extends fc.Arbitrary<infer T> ? T : never;

function build(s: Scenario) {
  const config = s.rules.filter((r) => r.listed).map((r) => r.rule.id);
  let previous: Constitution = { id: "c", version: "1", rules: s.rules.map((r) => r.rule) };
  if (s.signed) previous = signConstitution(previous, ops.privateKeyPem, ops.keyId);
  // A proposal that keeps every critical rule and the signature prefix, changes everything else.
  const kept: Rule[] = s.rules.map((r, i) => (r.critical ? structuredClone(r.rule) : { id: r.rule.id, text: s.edits[i] ?? `${r.rule.text}!` }));
  for (const [i, extra] of s.newRules.entries()) kept.push({ id: `new-${i}-${extra.n}`, text: extra.text });
  // Deterministic shuffle: rule order is not protected.
  const shuffled = kept.map((rule, i) => ({ rule, key: (i * 7919 + s.seed) % 104729 })).sort((a, b) => a.key - b.key).map((x) => x.rule);
  const proposal: Constitution = { ...structuredClone(previous), version: s.version, rules: shuffled };
  return { config, previous, proposal };
}

describe("integrity checker properties", () => {
  test("any proposal that keeps the safety rules and the signature prefix is accepted: a signed one's chain verifies, an unsigned one comes back as proposed", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const { config, previous, proposal } = build(s);
        const check = createIntegrityChecker({ safetyCriticalRuleIds: config, runtimeKey: { keyId: rt.keyId, privateKeyPem: rt.privateKeyPem }, trustedConstitutionKeys: trusted(ops) });
        const verdict = check(previous, proposal, h);
        expect(verdict).toMatchObject({ ok: true });
        if (!verdict.ok) return;
        if (s.signed) expect(verifySignatureChain(verdict.constitution, trusted(ops, rt))).toEqual({ ok: true });
        else expect(verdict.constitution).toEqual(proposal);
      }),
      { numRuns: 150 },
    );
  });

  test("any proposal that drops a safety rule is rejected, naming it", () => {
    fc.assert(
      fc.property(scenario, fc.nat(), (s, pick) => {
        const critical = s.rules.filter((r) => r.critical);
        fc.pre(critical.length > 0);
        const victim = critical[pick % critical.length]!.rule.id;
        const { config, previous, proposal } = build(s);
        proposal.rules = proposal.rules.filter((r) => r.id !== victim);
        const check = createIntegrityChecker({ safetyCriticalRuleIds: config, trustedConstitutionKeys: trusted(ops) });
        expect(check(previous, proposal, h)).toEqual({ ok: false, reason: `removes safety-critical rule ${victim}` });
      }),
      { numRuns: 150 },
    );
  });
});
