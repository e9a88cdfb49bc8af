// Spec §8.2.4 over HTTP: POST /v1/sessions/{id}/conflict cannot land a resolution that drops a
// safety-critical rule (flagged, or listed in safety_critical_rules) of a constitution being composed.
import { afterAll, beforeAll, expect, it } from "vitest";
import { cl, signed, startHarness, type Harness } from "./helpers.js";

const RESOLVER_CODE = `var __vcp_bundle = {
  keepLoser: function (input) {
    var loser = input.event.conflicting_rules[0].rule_b;
    return { status: "modify", modified_constitution: { id: input.constitution.id, rules: input.constitution.rules.concat([loser]) } };
  }
};`;

const org = { id: "org", version: "1", rules: [{ id: "no-harm", text: "Do not help cause physical harm.", safety_critical: true }, { id: "tone", text: "Be courteous." }] };
const user = { id: "user", version: "1", rules: [{ id: "allow-all", text: "Answer everything." }, { id: "privacy", text: "Do not reveal personal data." }] };

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ runtime: { integrity: { safetyCriticalRules: ["privacy"] }, conflictStrategy: "most_restrictive" } });
  await h.runtime.bundles.install(
    signed({ bundle: "resolver", version: "1.0.0", trust: "deployment", hooks: [{ name: "keep_loser", type: "on_conflict", action: "keepLoser", priority: 50, timeout_ms: 1000 }] }, RESOLVER_CODE),
  );
});
afterAll(async () => {
  await h?.close();
});

it("a hook resolving a conflict by dropping the flagged winner is integrity_rejected; the default strategy keeps the rule", async () => {
  expect((await cl(h, "POST", "/v1/sessions", { session_id: "ci-http-1", context: {}, constitution: org })).status).toBe(201);
  const r = await cl(h, "POST", "/v1/sessions/ci-http-1/conflict", {
    constitutions: [org, user],
    conflicting_rules: [{ rule_a: org.rules[0], rule_b: user.rules[0], conflict_type: "contradiction" }],
    conflict_severity: "critical",
  });
  expect(r.status).toBe(200);
  expect(r.body.trace[0].hook_results[0]).toMatchObject({ hook: "keep_loser", outcome: "integrity_rejected", error: expect.stringContaining("drops safety-critical rule no-harm of constitution org") });
  expect(r.body.outcome).toBe("default");
  expect(r.body.constitution.rules.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining(["no-harm", "privacy"]));
  expect(r.body.constitution.rules.map((x: { id: string }) => x.id)).not.toContain("allow-all");
});

it("a resolution dropping a rule listed in safety_critical_rules (not flagged) is integrity_rejected; most_restrictive keeps it", async () => {
  expect((await cl(h, "POST", "/v1/sessions", { session_id: "ci-http-2", context: {}, constitution: org })).status).toBe(201);
  const r = await cl(h, "POST", "/v1/sessions/ci-http-2/conflict", {
    constitutions: [org, user],
    // keep_loser keeps rule_b (tone) and so drops privacy, which only the deployment config designates.
    conflicting_rules: [{ rule_a: user.rules[1], rule_b: org.rules[1], conflict_type: "contradiction" }],
    conflict_severity: "error",
  });
  expect(r.status).toBe(200);
  expect(r.body.trace[0].hook_results[0]).toMatchObject({ hook: "keep_loser", outcome: "integrity_rejected", error: expect.stringContaining("drops safety-critical rule privacy of constitution user") });
  expect(r.body).toMatchObject({ outcome: "default", strategy: "most_restrictive", dropped_rules: ["tone"] });
  expect(r.body.constitution.rules.map((x: { id: string }) => x.id)).toContain("privacy");
});
