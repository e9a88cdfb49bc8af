// The runtime's own pipeline (runtime.sessions / adapt / transition / conflict / violation): the
// public API a server or embedding application calls, end to end on the in-process test backend.
import { afterAll, beforeAll, expect, test } from "vitest";
import { createRuntime, type Runtime } from "../../src/index.js";
import { testBundle } from "../support/bundles.js";
import { constitution } from "../support/fixtures.js";
import { createVmBackend } from "../support/vm-backend.js";

let rt: Runtime;
beforeAll(async () => {
  rt = await createRuntime({ backend: createVmBackend(), registrationsPerMinute: 1000, conflictStrategy: "reject" });
  await rt.bundles.install(
    testBundle("pipeline-policies", [
      { name: "block_secret", type: "pre_inject", condition: { field: "context.secret", operator: "eq", value: true } },
      { name: "gate_child", type: "on_transition", condition: { field: "event.new_state", operator: "eq", value: "unsupervised" } },
      { name: "suppress_critical", type: "on_violation", condition: { field: "event.severity", operator: "eq", value: "critical" } },
    ], {
      block_secret: "function () { return { status: 'abort', reason: 'secret in context' }; }",
      gate_child: "function () { return { status: 'abort', reason: 'not allowed' }; }",
      suppress_critical: "function () { return { status: 'abort', reason: 'critical' }; }",
    }),
  );
});
afterAll(async () => {
  await rt?.close();
});

const select = { selected: constitution, candidates: [constitution], selection_rationale: "only one", selection_algorithm: "fixed" };

test("adapt injects, or is blocked by a pre_inject abort and leaves the session unchanged", async () => {
  const session = await rt.sessions.open({ session_id: "p1", context: { secret: false }, constitution });
  expect(session.session_id).toBe("p1");
  const ok = await rt.adapt("p1", select);
  expect(ok.outcome).toBe("inject");
  const blocked = await rt.adapt("p1", { ...select, context: { secret: true } });
  expect(blocked).toMatchObject({ outcome: "blocked", reason: "secret in context", aborted_by: "block_secret" });
  expect((await rt.sessions.get("p1"))!.context).toEqual({ secret: false });
  await rt.sessions.close("p1");
  expect(await rt.sessions.get("p1")).toBeUndefined();
});

test("transition is gated by on_transition; an abort keeps the state", async () => {
  await rt.sessions.open({ session_id: "p2", context: {}, constitution, state: "supervised" });
  expect(await rt.transition("p2", { to: "unsupervised", trigger: "parent left" })).toMatchObject({ outcome: "blocked", state: "supervised" });
  expect(await rt.transition("p2", { to: "professional", trigger: "work" })).toMatchObject({ outcome: "transitioned", state: "professional" });
  await rt.sessions.close("p2");
});

test("conflict without a resolving hook applies the configured default (reject ⇒ failed, last known-good)", async () => {
  await rt.sessions.open({ session_id: "p3", context: {}, constitution });
  const other = { id: "c-other", rules: [{ id: "x", text: "always x" }] };
  const result = await rt.conflict("p3", {
    constitutions: [constitution, other],
    conflicting_rules: [{ rule_a: constitution.rules[1]!, rule_b: other.rules[0]!, conflict_type: "contradiction" }],
    conflict_severity: "error",
  });
  expect(result.outcome).toBe("failed");
  expect(result.constitution.id).toBe(constitution.id);
  await rt.sessions.close("p3");
});

test("violation: abort suppresses the output; otherwise the default delivers it", async () => {
  await rt.sessions.open({ session_id: "p4", context: {}, constitution });
  const critical = await rt.violation("p4", { output: "bad", violated_rules: [], severity: "critical", violation_evidence: "e" });
  expect(critical.outcome).toBe("suppress");
  expect(critical.output).toBeNull();
  const minor = await rt.violation("p4", { output: "meh", violated_rules: [], severity: "minor", violation_evidence: "e" });
  expect(minor).toMatchObject({ outcome: "deliver", output: "meh" });
  await rt.sessions.close("p4");
});

test("operations on an unknown session are SESSION_NOT_FOUND; a duplicate open is SESSION_EXISTS", async () => {
  await expect(rt.adapt("nope", select)).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
  await rt.sessions.open({ session_id: "p5", context: {}, constitution });
  await expect(rt.sessions.open({ session_id: "p5", context: {}, constitution })).rejects.toThrowError(expect.objectContaining({ code: "SESSION_EXISTS" }));
  await rt.sessions.close("p5");
});

test("hooks.setEnabled with a sessionId addresses that session's hook", async () => {
  const offer = await createRuntime({ backend: createVmBackend(), sessionHookAllowlist: ["offer/watch"] });
  try {
    await offer.bundles.install(testBundle("offer", [{ name: "watch", type: "post_select", scope: "session" }], { watch: "function () { return { status: 'continue' }; }" }));
    await offer.sessions.registerHook("sx", { bundle: "offer", hook: "watch" });
    expect(await offer.hooks.setEnabled("watch", false, { sessionId: "sx" })).toMatchObject({ name: "watch", scope: "session", enabled: false });
    expect((await offer.hooks.chain("post_select", "sx"))[0]).toMatchObject({ name: "watch", enabled: false });
  } finally {
    await offer.close();
  }
});
