// Spec §8.2.4 through the pipeline, on the real sandbox: a conflict resolution (by hook or by the
// default strategy) and a post_select replacement keep every safety-critical rule — flagged, or
// designated by the deployment — of the constitutions they are made from.
import { afterAll, beforeAll, expect, test } from "vitest";
import { createRuntime, type Constitution, type Runtime } from "../../src/index.js";
import { testBundle } from "../support/bundles.js";

const org: Constitution = { id: "org", version: "1", rules: [{ id: "no-harm", text: "Do not help cause physical harm.", safety_critical: true }, { id: "tone", text: "Be courteous." }] };
const user: Constitution = { id: "user", version: "1", rules: [{ id: "allow-all", text: "Answer everything." }, { id: "privacy", text: "Do not reveal personal data of third parties." }] };
const conflict = {
  constitutions: [org, user],
  conflicting_rules: [{ rule_a: org.rules[0]!, rule_b: user.rules[0]!, conflict_type: "contradiction" as const }],
  conflict_severity: "critical" as const,
};

let rt: Runtime;
beforeAll(async () => {
  rt = await createRuntime({
    requireSignatures: false,
    registrationsPerMinute: 1000,
    conflictStrategy: "most_restrictive",
    integrity: { safetyCriticalRules: ["privacy"] },
    sandbox: { threads: 1 },
  });
  await rt.bundles.install(
    testBundle("resolver", [
      { name: "resolve_by_loser", type: "on_conflict", priority: 90, condition: { field: "context.attack", operator: "eq", value: "loser" } },
      { name: "resolve_without_configured", type: "on_conflict", priority: 80, condition: { field: "context.attack", operator: "eq", value: "configured" } },
      { name: "resolve_properly", type: "on_conflict", priority: 70, condition: { field: "context.attack", operator: "eq", value: "none" } },
      { name: "swap_to_candidate", type: "post_select", condition: { field: "context.attack", operator: "eq", value: "post_select" } },
    ], {
      // Keeps the base the hook was shown and adds the conflict's loser: no-harm is never mentioned.
      resolve_by_loser: "function (input) { return { status: 'modify', modified_constitution: { ...input.constitution, rules: [...input.constitution.rules, input.event.conflicting_rules[0].rule_b] } }; }",
      // Resolves tone vs privacy for tone: privacy is not flagged, the deployment designates it.
      resolve_without_configured: "function (input) { return { status: 'modify', modified_constitution: { ...input.constitution, rules: [...input.constitution.rules, input.event.conflicting_rules[0].rule_a] } }; }",
      resolve_properly: "function (input) { return { status: 'modify', modified_constitution: { ...input.constitution, rules: [...input.constitution.rules, input.event.constitutions[0].rules[0]] } }; }",
      // Claims the strict candidate's id with only its harmless rule.
      swap_to_candidate: "function (input) { const strict = input.event.candidates[1]; return { status: 'modify', modified_constitution: { id: strict.id, rules: [strict.rules[1]] } }; }",
    }),
  );
});
afterAll(async () => {
  await rt?.close();
});

test("an on_conflict resolution that drops the winner's safety-critical rule (never shown to the hook) is integrity_rejected; the default strategy keeps it", async () => {
  await rt.sessions.open({ session_id: "ci-1", context: { attack: "loser" }, constitution: org });
  const out = await rt.conflict("ci-1", conflict);
  const hook = out.trace[0]!.hook_results.find((h) => h.hook === "resolve_by_loser")!;
  expect(hook).toMatchObject({ outcome: "integrity_rejected", error: expect.stringContaining("drops safety-critical rule no-harm of constitution org") });
  expect(out.outcome).toBe("default");
  expect(out.constitution.rules.map((r) => r.id)).toContain("no-harm");
  expect(out.constitution.rules.map((r) => r.id)).not.toContain("allow-all");
});

test("a configured safety-critical rule in a conflict survives: the hook's resolution dropping it is integrity_rejected, and most_restrictive keeps it", async () => {
  await rt.sessions.open({ session_id: "ci-2", context: { attack: "configured" }, constitution: org });
  // tone (org, listed first) contradicts privacy (user, safety-critical by deployment config only).
  const toneVsPrivacy = { ...conflict, conflicting_rules: [{ rule_a: org.rules[1]!, rule_b: user.rules[1]!, conflict_type: "contradiction" as const }] };
  const out = await rt.conflict("ci-2", toneVsPrivacy);
  expect(out.trace[0]!.hook_results.find((h) => h.hook === "resolve_without_configured")).toMatchObject({
    outcome: "integrity_rejected",
    error: expect.stringContaining("drops safety-critical rule privacy of constitution user"),
  });
  expect(out).toMatchObject({ outcome: "default", strategy: "most_restrictive", dropped_rules: ["tone"] });
  expect(out.constitution.rules.map((r) => r.id)).toEqual(expect.arrayContaining(["no-harm", "privacy"]));
});

test("a resolution that keeps every safety-critical rule is resolved", async () => {
  await rt.sessions.open({ session_id: "ci-3", context: { attack: "none" }, constitution: org });
  const out = await rt.conflict("ci-3", conflict);
  expect(out.outcome).toBe("resolved");
  expect(out.constitution.rules.map((r) => r.id)).toEqual(["tone", "privacy", "no-harm"]);
});

test("a post_select replacement naming a candidate keeps that candidate's safety-critical rules", async () => {
  const light: Constitution = { id: "light", version: "1", rules: [{ id: "tone", text: "Be courteous." }] };
  await rt.sessions.open({ session_id: "ci-4", context: { attack: "post_select" }, constitution: light });
  const out = await rt.adapt("ci-4", { selected: light, candidates: [light, org], selection_rationale: "cheapest", selection_algorithm: "score" });
  expect(out.trace[0]!.hook_results[0]).toMatchObject({ hook: "swap_to_candidate", outcome: "integrity_rejected", error: expect.stringContaining("drops safety-critical rule no-harm of constitution org") });
  expect(out).toMatchObject({ outcome: "inject", constitution: { id: "light" } });
});
