// The chain-result and event contract (src/chain/contract.ts): the executor and the supervisor's crash
// path describe a crashed hook the same way, record for record and event for event.
import { describe, expect, test } from "vitest";
import { emptyChainResult, failureEventOf, hookExecution } from "../../../src/chain/contract.js";
import { runChain } from "../../../src/chain/execute.js";
import { compileChainPlan, vcpPlanRef } from "../../../src/chain/plan.js";
import type { ChainRequest } from "../../../src/model/chain.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import type { LifecycleEvent } from "../../../src/observe/events.js";
import { crashedChainValue } from "../../../src/pool/crash.js";

const hook = (extra: Partial<ResolvedHook> = {}): ResolvedHook =>
  Object.freeze({
    name: "guard", type: "pre_inject", priority: 50, timeout_ms: 100,
    action: { bundle: "b", export: "guard", digest: "sha256:abc" }, condition: null, enabled: true, metadata: {},
    fail_closed: false, trust: "deployment", scope: "deployment", seq: 1, ...extra,
  }) as ResolvedHook;

const request: ChainRequest = {
  chainId: "c1",
  context: { user: "u" },
  constitution: { id: "k", version: "1", rules: [{ id: "r", text: "t" }] },
  event: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "t" },
  session: { id: "s1" },
} as ChainRequest;

async function executorView(h: ResolvedHook) {
  const events: LifecycleEvent[] = [];
  const clock = { now: () => 0, wallNow: () => 0 };
  const result = await runChain(compileChainPlan("pre_inject", [h], 1), request, {
    invoker: { invoke: async () => ({ kind: "crashed", message: "sandbox crashed" }) },
    clock,
    emit: (e) => events.push(e),
  });
  return { result, events };
}

describe("chain contract", () => {
  test.each([false, true])("a crashed hook (fail_closed %s): the crash path and the executor agree", async (failClosed) => {
    const h = hook({ fail_closed: failClosed });
    const executor = await executorView(h);
    const crash = crashedChainValue({ profile: vcpPlanRef("pre_inject") }, request, h, 0, "sandbox crashed");
    expect(Object.keys(crash.result.hook_results[0]!).sort()).toEqual(Object.keys(executor.result.hook_results[0]!).sort());
    expect(crash.result.hook_results[0]).toMatchObject({ bundle_digest: "sha256:abc", outcome: "crashed", status: failClosed ? "abort" : "continue" });
    // The hook's own events; the crash path judges no cascade (the earlier hooks' results died with the worker).
    const hookEvents = (events: LifecycleEvent[]) => events.map((e) => e.event).filter((name) => name !== "hook.cascade_failure");
    expect(crash.events.map((e) => e.event)).toEqual(hookEvents(executor.events));
    expect(crash.result.status).toBe(executor.result.status);
    expect(Object.keys(crash.result)).toEqual(Object.keys(executor.result));
  });

  test("a hook's record names its bundle revision, whether it ran or was skipped", () => {
    expect(hookExecution(hook(), "skipped_predicate", 0)).toMatchObject({ bundle_digest: "sha256:abc", outcome: "skipped_predicate" });
    expect(hookExecution(hook(), "ok", 3)).toMatchObject({ bundle_digest: "sha256:abc", status: "continue", duration_ms: 3 });
  });

  test("which event follows hook.fired", () => {
    expect(failureEventOf("timeout")).toBe("hook.timeout");
    for (const o of ["error", "crashed", "invalid_result"] as const) expect(failureEventOf(o)).toBe("hook.error");
    for (const o of ["ok", "deadline_exceeded", "capability_denied", "integrity_rejected"] as const) expect(failureEventOf(o)).toBeUndefined();
  });

  test("an empty chain hands back the caller's own objects", async () => {
    const empty = emptyChainResult("pre_inject", request);
    expect(empty.context).toBe(request.context);
    expect(empty).toMatchObject({ status: "completed", hook_results: [], cascade_failure: false, duration_ms: 0 });
    const ran = await runChain(compileChainPlan("pre_inject", [], 1), request, { invoker: { invoke: async () => { throw new Error("not called"); } }, clock: { now: () => 5, wallNow: () => 0 }, emit: () => {} });
    expect(ran).toEqual(empty);
  });
});
