import { describe, expect, test } from "vitest";
import { runChain } from "../../../src/chain/execute.js";
import { compileChainPlan } from "../../../src/chain/plan.js";
import { EventPacker, packChainValue, packHookResults, rebuildEvents, unpackHookResults } from "../../../src/pool/events.js";
import type { ActionInvoker, ChainRequest, InvokeOutcome } from "../../../src/model/chain.js";
import type { HookType } from "../../../src/model/hook-type.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import type { LifecycleEvent } from "../../../src/observe/events.js";

// The worker sends a chain's result without hook.fired / hook.completed and without the unmodified
// context and constitution; the supervisor must rebuild exactly what runChain emitted (src/pool/events.ts).

let seq = 0;
function hook(name: string, extra: Partial<ResolvedHook> = {}): ResolvedHook {
  return Object.freeze({
    name, type: "pre_inject" as HookType, priority: 50, timeout_ms: 100,
    action: { bundle: "b", export: name, digest: "sha256:0" }, condition: null, enabled: true, metadata: {},
    fail_closed: false, trust: "deployment" as const, scope: "deployment" as const, seq: ++seq, ...extra,
  });
}

const outcomes: Record<string, (input: { context: Record<string, unknown>; chain_state: unknown }) => unknown> = {
  ok: () => ({ status: "continue", annotations: { a: 1 } }),
  grow: (input) => ({ status: "modify", modified_context: { ...input.context, grown: "x".repeat(50) } }),
  state: () => ({ status: "continue" }),
  threw: () => ({ kind: "threw", message: "boom", stack: "Error: boom\n    at act" }),
  slow: () => ({ kind: "timeout", elapsedMs: 101 }),
  bad: () => ({ kind: "invalid", message: "not JSON" }),
  badstatus: () => ({ status: "maybe" }),
  gone: () => ({ kind: "crashed", message: "bundle quarantined" }),
  sess: () => ({ status: "abort", reason: "no" }),
  stop: () => ({ status: "abort", reason: "enough" }),
};

const invoker: ActionInvoker = {
  async invoke(request): Promise<InvokeOutcome> {
    const input = JSON.parse(request.inputJson);
    const out = outcomes[request.hook.name]!(input) as Record<string, unknown>;
    if ("kind" in out) return out as unknown as InvokeOutcome;
    const state = request.hook.name === "state" ? { step: 1 } : input.chain_state;
    return { kind: "returned", resultJson: JSON.stringify(out), chainStateJson: JSON.stringify(state) };
  },
};

function request(): ChainRequest {
  return {
    chainId: "chain-ev",
    context: { user: "u", n: 1 },
    constitution: { id: "k", rules: [{ id: "r1", text: "keep" }] },
    event: { injection_target: "t", injection_format: "system_prompt", raw_constitution: "keep" },
    session: { id: "s1" },
  };
}

async function both(hooks: ResolvedHook[], deadlineMs?: number) {
  const plan = compileChainPlan("pre_inject", hooks, 1);
  let t = 0;
  const clock = { now: () => (t += 1), wallNow: () => 0 };
  const direct: LifecycleEvent[] = [];
  const req = deadlineMs === undefined ? request() : { ...request(), deadlineMs };
  const expected = await runChain(plan, req, { invoker, clock, emit: (e: LifecycleEvent) => direct.push(e) });
  t = 0;
  const packer = new EventPacker();
  const workerReq = structuredClone(req);
  // As the sandbox worker runs it: hook.fired / hook.completed not built, only their input summaries kept.
  const result = await runChain(plan, workerReq, { invoker, clock, emit: packer.emit, firedSummary: packer.fired });
  // Across IPC as JSON, then rebuilt against the supervisor's own copy of the request.
  const wire = JSON.parse(JSON.stringify(packChainValue(result, workerReq, packer, hooks)));
  return { expected, direct, wire, rebuilt: rebuildEvents(wire, req, hooks) };
}

describe("chain events on the wire", () => {
  test("every outcome: the rebuilt events and result equal what runChain emitted", async () => {
    const { expected, direct, wire, rebuilt } = await both([
      hook("off", { enabled: false }),
      hook("ok"),
      hook("never", { condition: { field: "context.user", operator: "eq", value: "nobody" } }),
      hook("state"),
      hook("grow"),
      hook("threw"),
      hook("slow"),
      hook("bad"),
      hook("badstatus"),
      hook("gone"),
      hook("sess", { trust: "session", scope: "session" }),
      hook("threw"), // a second hook of the same name: events are matched by position, not by name
      hook("stop"),
    ]);
    expect(rebuilt.events).toEqual(direct);
    expect(rebuilt.result).toEqual(expected);
    // Byte for byte, member order included: callers serialize results.
    expect(JSON.stringify(rebuilt.result.hook_results)).toBe(JSON.stringify(expected.hook_results));
    expect(direct.map((e) => e.event)).toContain("hook.cascade_failure");
    // Nothing repeated: no fired/completed on the wire, and the context crossed because it changed.
    expect(wire.events.some((e: LifecycleEvent) => e.event === "hook.fired" || e.event === "hook.completed")).toBe(false);
    expect(wire.result.context).toEqual({ user: "u", n: 1, grown: "x".repeat(50) });
    expect(wire.result.constitution).toBeUndefined();
  });

  test("chain deadline outcomes (deadline_exceeded, skipped_deadline) rebuild exactly", async () => {
    // The fake clock advances 1 ms per reading: `slow` is cut below its timeout_ms, and the deadline
    // runs out before the last hooks.
    const { expected, direct, rebuilt } = await both([hook("ok"), hook("slow"), hook("ok"), hook("threw"), hook("ok"), hook("ok")], 8);
    const outcomes = expected.hook_results.map((h) => h.outcome);
    expect(outcomes.slice(0, 2)).toEqual(["ok", "deadline_exceeded"]);
    expect(outcomes.at(-1)).toBe("skipped_deadline");
    expect(rebuilt.events).toEqual(direct);
    expect(rebuilt.result).toEqual(expected);
  });

  test("an unmodified chain sends neither context nor constitution, and one input summary", async () => {
    const { expected, direct, wire, rebuilt } = await both([hook("ok"), hook("ok")]);
    expect(wire.result.context).toBeUndefined();
    expect(wire.result.constitution).toBeUndefined();
    expect(wire.sums).toEqual([expect.objectContaining({ session_id: "s1", constitution_id: "k", context_keys: 2 }), 0]);
    expect(rebuilt.events).toEqual(direct);
    expect(rebuilt.result).toEqual(expected);
    expect(Object.keys(rebuilt.result)).toEqual(Object.keys(expected));
  });

  test("hook records cross as their position and what the supervisor does not know (the name, bundle, scope, trust and revision stay home)", async () => {
    const hooks = [hook("ok"), hook("grow"), hook("threw"), hook("ok")];
    const { expected, wire, rebuilt } = await both(hooks);
    // Every record packed, each naming its own position (two hooks share the name "ok").
    expect(wire.result.hook_results.map((r: unknown) => (Array.isArray(r) ? r[0] : "whole"))).toEqual([0, 1, 2, 3]);
    expect(JSON.stringify(wire.result.hook_results)).not.toContain("sha256:0");
    expect(JSON.stringify(rebuilt.result.hook_results)).toBe(JSON.stringify(expected.hook_results));
    expect(JSON.stringify(wire.result.hook_results).length).toBeLessThan(JSON.stringify(expected.hook_results).length / 2);
  });

  test("a record that does not name the hook at its place crosses whole; a position outside the list is refused", () => {
    const hooks = [hook("a"), hook("b")];
    const foreign = { hook: "c", bundle: "x", scope: "deployment" as const, trust: "deployment" as const, status: "continue" as const, outcome: "ok" as const, duration_ms: 1 };
    const reordered = { bundle: "b", hook: "b", scope: "deployment" as const, trust: "deployment" as const, status: "continue" as const, outcome: "ok" as const, duration_ms: 1, bundle_digest: "sha256:0" };
    const packed = packHookResults([foreign, reordered], hooks);
    expect(packed).toEqual([foreign, reordered]);
    expect(unpackHookResults(packed, hooks)).toEqual([foreign, reordered]);
    expect(() => unpackHookResults([[5, "continue", "ok", 1]], hooks)).toThrow(/position 5 of a 2-hook list/);
  });

  test("nobody listening to hook.fired / hook.completed: every other event is rebuilt, in order", async () => {
    const hooks = [hook("ok"), hook("threw"), hook("off", { enabled: false }), hook("slow"), hook("grow")];
    const { direct, wire } = await both(hooks);
    const rebuilt = rebuildEvents(wire, request(), hooks, false);
    expect(rebuilt.events).toEqual(direct.filter((e) => e.event !== "hook.fired" && e.event !== "hook.completed"));
    expect(rebuilt.events.map((e) => e.event)).toEqual(["hook.error", "hook.skipped", "hook.timeout"]);
  });

});
