import { describe, expect, test } from "vitest";
import { runChain, type ChainDeps } from "../../../src/chain/execute.js";
import { compileChainPlan } from "../../../src/chain/plan.js";
import type { ActionInvoker, ChainRequest, InvokeOutcome, InvokeRequest } from "../../../src/model/chain.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import type { HookType } from "../../../src/model/hook-type.js";
import type { LifecycleEvent } from "../../../src/observe/events.js";

let seq = 0;
function hook(name: string, extra: Partial<ResolvedHook> = {}): ResolvedHook {
  return Object.freeze({
    name, type: "pre_inject" as HookType, priority: 50, timeout_ms: 100,
    action: { bundle: "b", export: name, digest: "sha256:0" }, condition: null, enabled: true, metadata: {},
    fail_closed: false, trust: "deployment" as const, scope: "deployment" as const, seq: ++seq, ...extra,
  });
}

/** A test invoker: each hook name maps to a function of the parsed input, results cross as JSON. */
function invoker(actions: Record<string, (input: any) => unknown>, calls: InvokeRequest[] = []): ActionInvoker {
  return {
    async invoke(request): Promise<InvokeOutcome> {
      calls.push(request);
      const input = JSON.parse(request.inputJson);
      const out = actions[request.hook.name]!(input);
      if (out && typeof out === "object" && "kind" in out) return out as InvokeOutcome;
      return { kind: "returned", resultJson: JSON.stringify(out), chainStateJson: JSON.stringify(input.chain_state) };
    },
  };
}

const request = (): ChainRequest => ({
  chainId: "c1",
  context: { a: 1 },
  constitution: { id: "k", rules: [{ id: "r1", text: "keep", safety_critical: true }] },
  event: { injection_target: "t", injection_format: "system_prompt", raw_constitution: "keep" },
  session: { id: "s1" },
});

function deps(inv: ActionInvoker, extra: Partial<ChainDeps> = {}) {
  const events: LifecycleEvent[] = [];
  let t = 0;
  return { events, deps: { invoker: inv, clock: { now: () => (t += 1), wallNow: () => 0 }, emit: (e: LifecycleEvent) => events.push(e), ...extra } };
}

describe("runChain", () => {
  test("an empty plan never touches the invoker", async () => {
    const calls: InvokeRequest[] = [];
    const { deps: d } = deps(invoker({}, calls));
    const result = await runChain(compileChainPlan("pre_inject", [], 1), request(), d);
    expect(result).toMatchObject({ status: "completed", hook_results: [], context: { a: 1 } });
    expect(calls).toHaveLength(0);
  });

  test("the input crosses as one JSON string holding all five HookInput parts", async () => {
    const calls: InvokeRequest[] = [];
    const { deps: d } = deps(invoker({ h: () => ({ status: "continue" }) }, calls));
    await runChain(compileChainPlan("pre_inject", [hook("h")], 1), request(), d);
    expect(Object.keys(JSON.parse(calls[0]!.inputJson))).toEqual(["context", "constitution", "event", "session", "chain_state"]);
  });

  test("each hook's input text is exactly the full serialization of what it sees, after modifies and chain_state changes, escapes and unicode included", async () => {
    // The executor serializes each HookInput part once and splices the parts (ChainInput); a hook must
    // still get byte for byte what JSON.stringify of the whole input gives.
    const tricky = 'quote " backslash \\ tab \t newline \n nul \u0000 ls \u2028 ps \u2029 emoji 😀 lone \ud800 é ü 漢字';
    const base: ChainRequest = {
      ...request(),
      context: { text: tricky, [tricky]: [tricky, { nested: tricky }], n: -0, big: 1e21, small: 5e-7, "": null },
      event: { injection_target: tricky, injection_format: "system_prompt", raw_constitution: "keep" },
      session: { id: "s-😀", user_id: tricky },
    };
    const calls: InvokeRequest[] = [];
    const seen: unknown[] = [];
    const { deps: d } = deps(
      invoker(
        {
          first: () => ({ status: "continue" }),
          modifyContext: (input) => ({ status: "modify", modified_context: { ...input.context, text: `${tricky} 2`, added: { k: tricky } } }),
          noteState: (input) => {
            input.chain_state.seen = tricky;
            return { status: "continue" };
          },
          modifyConstitution: (input) => ({ status: "modify", modified_constitution: { ...input.constitution, rules: [...input.constitution.rules, { id: "r2", text: tricky }] } }),
          last: () => ({ status: "continue" }),
        },
        calls,
      ),
      { checkConstitution: (_prev, proposed) => ({ ok: true, constitution: proposed }) },
    );
    const names = ["first", "modifyContext", "noteState", "modifyConstitution", "last"];
    const hooks = names.map((name, i) => hook(name, { priority: 90 - i }));
    const result = await runChain(compileChainPlan("pre_inject", hooks, 1), base, {
      ...d,
      invoker: {
        invoke: (req) => {
          seen.push(JSON.parse(req.inputJson));
          return d.invoker.invoke(req);
        },
      },
    });
    expect(result.hook_results.map((h) => h.outcome)).toEqual(["ok", "ok", "ok", "ok", "ok"]);
    // What each hook should have seen, rebuilt from the results of the hooks before it.
    let context: unknown = base.context;
    let constitution: unknown = base.constitution;
    let chainState: Record<string, unknown> = {};
    calls.forEach((call, i) => {
      const expected = JSON.stringify({ context, constitution, event: base.event, session: base.session, chain_state: chainState });
      expect(call.inputJson, `input of hook ${names[i]}`).toBe(expected);
      const input = seen[i] as { context: unknown; constitution: { rules: unknown[] } };
      if (names[i] === "modifyContext") context = { ...(input.context as object), text: `${tricky} 2`, added: { k: tricky } };
      if (names[i] === "noteState") chainState = { seen: tricky };
      if (names[i] === "modifyConstitution") constitution = { ...input.constitution, rules: [...input.constitution.rules, { id: "r2", text: tricky }] };
    });
    expect(calls).toHaveLength(5);
  });

  test("an integrity rejection keeps the unmodified constitution and context, and the chain goes on", async () => {
    const { deps: d } = deps(
      invoker({
        weaken: (input) => ({ status: "modify", modified_context: { hijacked: true }, modified_constitution: { ...input.constitution, rules: [] } }),
        next: (input) => ({ status: "continue", annotations: { rules: input.constitution.rules.length, ctx: input.context } }),
      }),
      { checkConstitution: (_prev, proposed) => (proposed.rules.length === 0 ? { ok: false, reason: "safety-critical rule r1 removed" } : { ok: true, constitution: proposed }) },
    );
    const result = await runChain(compileChainPlan("pre_inject", [hook("weaken", { priority: 90 }), hook("next")], 1), request(), d);
    expect(result.hook_results[0]).toMatchObject({ outcome: "integrity_rejected", status: "continue", error: "safety-critical rule r1 removed" });
    expect(result.hook_results[1]!.annotations).toEqual({ rules: 1, ctx: { a: 1 } });
    expect(result.constitution.rules).toHaveLength(1);
  });

  test("an integrity rejection of a fail_closed hook aborts the chain", async () => {
    const { deps: d } = deps(invoker({ weaken: (i) => ({ status: "modify", modified_constitution: { ...i.constitution, rules: [] } }) }), {
      checkConstitution: () => ({ ok: false, reason: "signature chain broken" }),
    });
    const result = await runChain(compileChainPlan("pre_inject", [hook("weaken", { fail_closed: true })], 1), request(), d);
    expect(result).toMatchObject({ status: "aborted", aborted_by: "weaken", reason: "fail-closed: weaken: signature chain broken" });
  });

  test("a session-trust hook's chain_state writes are discarded", async () => {
    const { deps: d } = deps(
      invoker({
        observer: (input) => { input.chain_state.skip_checks = true; return { status: "continue" }; },
        guard: (input) => ({ status: "continue", annotations: { skip: input.chain_state.skip_checks ?? null } }),
      }),
    );
    const result = await runChain(
      compileChainPlan("pre_inject", [hook("observer", { priority: 90, trust: "session", scope: "session", session_id: "s1" }), hook("guard")], 1),
      request(),
      d,
    );
    expect(result.hook_results[1]!.annotations).toEqual({ skip: null });
  });

  test("a predicate can read chain_state written by an earlier hook", async () => {
    const { deps: d } = deps(invoker({ mark: (i) => { i.chain_state.flag = "on"; return { status: "continue" }; }, gated: () => ({ status: "continue" }) }));
    const gated = hook("gated", { condition: { field: "chain_state.flag", operator: "eq", value: "on" } });
    const result = await runChain(compileChainPlan("pre_inject", [hook("mark", { priority: 90 }), gated], 1), request(), d);
    expect(result.hook_results[1]!.outcome).toBe("ok");
  });

  test("an invoker that throws is an error outcome, not a crash of the chain", async () => {
    const broken: ActionInvoker = { invoke: async () => { throw new Error("isolate pool gone"); } };
    const { deps: d, events } = deps(broken);
    const result = await runChain(compileChainPlan("pre_inject", [hook("h")], 1), request(), d);
    expect(result.hook_results[0]).toMatchObject({ outcome: "error", status: "continue" });
    expect(result.hook_results[0]!.error).toContain("isolate pool gone");
    expect(events.map((e) => e.event)).toContain("hook.error");
  });

  test("a chain_state that stops being an object makes the result invalid", async () => {
    const inv: ActionInvoker = { invoke: async () => ({ kind: "returned", resultJson: '{"status":"continue"}', chainStateJson: "5" }) };
    const { deps: d } = deps(inv);
    const result = await runChain(compileChainPlan("pre_inject", [hook("h")], 1), request(), d);
    expect(result.hook_results[0]!.outcome).toBe("invalid_result");
  });

  test("hooks after an exhausted chain deadline are skipped_deadline without running, and are no failures", async () => {
    const calls: InvokeRequest[] = [];
    const { deps: d, events } = deps(invoker({ first: () => ({ status: "continue" }), second: () => ({ status: "continue" }) }, calls));
    // The fake clock advances 1 ms per reading; a 3 ms deadline is spent before the second hook.
    const result = await runChain(compileChainPlan("pre_inject", [hook("first", { priority: 90 }), hook("second")], 1), { ...request(), deadlineMs: 3 }, d);
    expect(calls.map((c) => c.hook.name)).toEqual(["first"]);
    expect(calls[0]!.budgetMs).toBeLessThanOrEqual(3);
    expect(result.hook_results.map((h) => h.outcome)).toEqual(["ok", "skipped_deadline"]);
    expect(result.cascade_failure).toBe(false);
    expect(events.filter((e) => e.event === "hook.skipped").map((e) => e.payload)).toEqual([
      { hook: "second", type: "pre_inject", chain_id: "c1", reason: "chain_deadline" },
    ]);
    expect(events.some((e) => e.event === "hook.timeout")).toBe(false);
  });

  test("conditions share one cost budget per bundle per chain: the bundle that overruns it gets error, another bundle's hooks are unaffected", async () => {
    const calls: InvokeRequest[] = [];
    const ok = () => ({ status: "continue" });
    const { deps: d } = deps(invoker({ a1: ok, a2: ok, a3: ok, other: ok }, calls));
    // Four matches leaves that all scan the 65,536-character text and match nothing: 262,148 units a hook.
    const expensive = { combine: "or", children: [0, 1, 2, 3].map((i) => ({ field: "context.text", operator: "matches", value: `needle-${i}$` })) } as const;
    const cheapTrue = { field: "context.text", operator: "matches", value: "^x" } as const;
    const plan = compileChainPlan("pre_inject", [
      hook("a1", { priority: 90, condition: expensive as never }),
      hook("a2", { priority: 80, condition: expensive as never }),
      hook("other", { priority: 70, condition: cheapTrue as never, action: { bundle: "c", export: "other", digest: "sha256:1" } }),
      hook("a3", { priority: 60 }),
    ], 1);
    const result = await runChain(plan, { ...request(), context: { text: "x".repeat(65_536) } }, d);
    expect(result.hook_results.map((h) => [h.hook, h.outcome])).toEqual([["a1", "skipped_predicate"], ["a2", "error"], ["other", "ok"], ["a3", "ok"]]);
    expect(result.hook_results[1]!.error).toMatch(/bundle 'b' used up their cost budget of 327680 units for this chain \(limit maxCost\)/);
    expect(calls.map((c) => c.hook.name)).toEqual(["other", "a3"]);
  });

  describe("chain deadline per trust tier (DESIGN §4.3)", () => {
    /** A clock that only moves when a hook "runs" for the given milliseconds. */
    function timed(spend: Record<string, number | "timeout">) {
      let now = 0;
      const calls: InvokeRequest[] = [];
      const inv: ActionInvoker = {
        async invoke(req): Promise<InvokeOutcome> {
          calls.push(req);
          const ms = spend[req.hook.name] ?? 0;
          if (ms === "timeout") {
            now += req.budgetMs;
            return { kind: "timeout", elapsedMs: req.budgetMs };
          }
          now += ms;
          return { kind: "returned", resultJson: '{"status":"continue"}', chainStateJson: "{}" };
        },
      };
      const events: LifecycleEvent[] = [];
      const d: ChainDeps = { invoker: inv, clock: { now: () => now, wallNow: () => 0 }, emit: (e) => events.push(e) };
      return { d, calls, events };
    }

    test("a session-trust hook that spends the whole deadline takes no time from the deployment hooks after it", async () => {
      const { d, calls } = timed({ observer: "timeout" });
      const plan = compileChainPlan("pre_inject", [
        hook("observer", { priority: 100, trust: "session", timeout_ms: 5000 }),
        hook("pii", { priority: 50, timeout_ms: 400 }),
      ], 1);
      const result = await runChain(plan, { ...request(), deadlineMs: 1000 }, d);
      expect(calls.map((c) => [c.hook.name, c.budgetMs])).toEqual([["observer", 1000], ["pii", 400]]);
      expect(result.hook_results.map((h) => [h.hook, h.outcome])).toEqual([["observer", "deadline_exceeded"], ["pii", "ok"]]);
    });

    test("a hook stopped at the deadline spends its tier's share even when the timer fired a millisecond early", async () => {
      // The sandbox's timer and the executor's clock disagree slightly: the hook is stopped after
      // budget − 2 ms. The next deployment hook must not run on the 2 ms sliver (this flaked under load).
      let now = 0;
      const calls: InvokeRequest[] = [];
      const inv: ActionInvoker = {
        async invoke(req): Promise<InvokeOutcome> {
          calls.push(req);
          if (req.hook.name === "eat") {
            now += req.budgetMs - 2;
            return { kind: "timeout", elapsedMs: req.budgetMs - 2 };
          }
          return { kind: "returned", resultJson: '{"status":"continue"}', chainStateJson: "{}" };
        },
      };
      const d: ChainDeps = { invoker: inv, clock: { now: () => now, wallNow: () => 0 }, emit: () => undefined };
      const plan = compileChainPlan("pre_inject", [hook("eat", { priority: 90, timeout_ms: 5000 }), hook("after", { priority: 10, timeout_ms: 5000 })], 1);
      const result = await runChain(plan, { ...request(), deadlineMs: 150 }, d);
      expect(calls.map((c) => c.hook.name)).toEqual(["eat"]);
      expect(result.hook_results.map((h) => h.outcome)).toEqual(["deadline_exceeded", "skipped_deadline"]);
    });

    test("deployment hooks still share the deadline among themselves: the one stopped early is deadline_exceeded, the next skipped_deadline", async () => {
      const { d, calls, events } = timed({ slow: 900, cut: "timeout" });
      const plan = compileChainPlan("pre_inject", [
        hook("slow", { priority: 90, timeout_ms: 1000 }),
        hook("cut", { priority: 80, timeout_ms: 1000 }),
        hook("late", { priority: 70, timeout_ms: 1000 }),
      ], 1);
      const result = await runChain(plan, { ...request(), deadlineMs: 1000 }, d);
      expect(calls.map((c) => [c.hook.name, c.budgetMs])).toEqual([["slow", 1000], ["cut", 100]]);
      expect(result.hook_results.map((h) => h.outcome)).toEqual(["ok", "deadline_exceeded", "skipped_deadline"]);
      expect(result.hook_results[1]!.error).toMatch(/chain deadline .* 100 ms of its timeout_ms 1000/);
      // Neither is a failure: no cascade, no hook.timeout (spec §5.4 is about timeout_ms).
      expect(result.cascade_failure).toBe(false);
      expect(events.some((e) => e.event === "hook.timeout" || e.event === "hook.cascade_failure")).toBe(false);
    });

    test("a hook that exceeds its own timeout_ms inside the deadline is still a timeout", async () => {
      const { d } = timed({ own: "timeout" });
      const result = await runChain(compileChainPlan("pre_inject", [hook("own", { timeout_ms: 50 })], 1), { ...request(), deadlineMs: 1000 }, d);
      expect(result.hook_results[0]!.outcome).toBe("timeout");
      expect(result.cascade_failure).toBe(true);
    });

    test("a fail_closed hook the deadline left without a verdict aborts the chain", async () => {
      const { d } = timed({ first: 1000 });
      const plan = compileChainPlan("pre_inject", [hook("first", { priority: 90, timeout_ms: 1000 }), hook("guard", { fail_closed: true })], 1);
      const result = await runChain(plan, { ...request(), deadlineMs: 1000 }, d);
      expect(result).toMatchObject({ status: "aborted", aborted_by: "guard", reason: "fail-closed: guard: the chain deadline was spent before it ran" });
      expect(result.hook_results[1]).toMatchObject({ outcome: "skipped_deadline", status: "abort" });
    });
  });

  test("modify without changes to context keeps serialized input (no re-stringify) and a later modify is seen", async () => {
    const calls: InvokeRequest[] = [];
    const { deps: d } = deps(invoker({ one: () => ({ status: "continue" }), two: () => ({ status: "modify", modified_context: { b: 2 } }), three: () => ({ status: "continue" }) }, calls));
    await runChain(compileChainPlan("pre_inject", [hook("one", { priority: 90 }), hook("two", { priority: 80 }), hook("three")], 1), request(), d);
    expect(JSON.parse(calls[1]!.inputJson).context).toEqual({ a: 1 });
    expect(JSON.parse(calls[2]!.inputJson).context).toEqual({ b: 2 });
  });
});

describe("runChain: bounds on what hooks return", () => {
  const deepText = (depth: number) => `{"status":"modify","modified_context":{"d":${"[".repeat(depth)}${"]".repeat(depth)}}}`;

  test("a result nested deeper than limits.json_depth is an invalid_result of that hook, refused before it is parsed", async () => {
    const { deps: d } = deps(
      invoker({
        deep: (input) => ({ kind: "returned", resultJson: deepText(2300), chainStateJson: JSON.stringify(input.chain_state) }),
        next: (input) => ({ status: "continue", annotations: { saw: input.context } }),
      }),
    );
    const result = await runChain(compileChainPlan("pre_inject", [hook("deep", { priority: 90 }), hook("next")], 1), request(), d);
    expect(result.hook_results[0]).toMatchObject({ outcome: "invalid_result", status: "continue", error: "result nests deeper than 64 levels below its fields (limits.json_depth)" });
    expect(result.hook_results[1]!.annotations).toEqual({ saw: { a: 1 } });
    expect(result.context).toEqual({ a: 1 });
  });

  test("a field exactly at the depth bound is accepted (what goes in can come back out)", async () => {
    const { deps: d } = deps(invoker({ h: (input) => ({ kind: "returned", resultJson: deepText(63), chainStateJson: JSON.stringify(input.chain_state) }) }));
    const result = await runChain(compileChainPlan("pre_inject", [hook("h")], 1), request(), d);
    expect(result.hook_results[0]).toMatchObject({ outcome: "ok", status: "modify" });
  });

  test("the configured depth applies (limits.jsonDepth)", async () => {
    const { deps: d } = deps(invoker({ h: (input) => ({ kind: "returned", resultJson: deepText(10), chainStateJson: JSON.stringify(input.chain_state) }) }), {
      limits: { jsonDepth: 8 },
    });
    const result = await runChain(compileChainPlan("pre_inject", [hook("h")], 1), request(), d);
    expect(result.hook_results[0]).toMatchObject({ outcome: "invalid_result", error: expect.stringContaining("deeper than 8 levels") });
  });

  test("chain_state nested too deep is refused and not adopted for later hooks", async () => {
    const { deps: d } = deps(
      invoker({
        deep: () => ({ kind: "returned", resultJson: '{"status":"continue"}', chainStateJson: `{"x":${"[".repeat(3000)}${"]".repeat(3000)}}` }),
        next: (input) => ({ status: "continue", annotations: { state: input.chain_state } }),
      }),
    );
    const result = await runChain(compileChainPlan("pre_inject", [hook("deep", { priority: 90 }), hook("next")], 1), request(), d);
    expect(result.hook_results[0]).toMatchObject({ outcome: "invalid_result", error: "chain_state nests deeper than 64 levels (limits.json_depth)" });
    expect(result.hook_results[1]!.annotations).toEqual({ state: {} });
  });

  test("annotations above the per-hook cap become a marker; the hook's decision stands", async () => {
    const { deps: d } = deps(invoker({ big: () => ({ status: "abort", reason: "pii found", annotations: { dump: "x".repeat(5000) } }) }), {
      limits: { annotationBytesPerHook: 1024, annotationBytesPerChain: 8192 },
    });
    const result = await runChain(compileChainPlan("pre_inject", [hook("big")], 1), request(), d);
    expect(result.status).toBe("aborted");
    expect(result.hook_results[0]).toMatchObject({ outcome: "ok", status: "abort", reason: "pii found" });
    expect(result.hook_results[0]!.annotations).toEqual({ _truncated: true, bytes: 5011, limit: 1024, cap: "per_hook" });
  });

  test("per chain, the largest annotations go first: a hook that fills the budget cannot push out another's small note", async () => {
    const note = (n: number) => ({ status: "continue", annotations: { note: "y".repeat(n) } });
    const { deps: d } = deps(invoker({ flood1: () => note(3000), flood2: () => note(3000), small: () => note(100), flood3: () => note(2900) }), {
      limits: { annotationBytesPerHook: 4096, annotationBytesPerChain: 6000 },
    });
    const plan = compileChainPlan("pre_inject", [hook("flood1", { priority: 90 }), hook("flood2", { priority: 80 }), hook("small", { priority: 70 }), hook("flood3", { priority: 60 })], 1);
    const result = await runChain(plan, request(), d);
    const [f1, f2, small, f3] = result.hook_results.map((h) => h.annotations as Record<string, unknown>);
    expect(small).toEqual({ note: "y".repeat(100) });
    // 3011 + 3011 + 111 + 2911 = 9044 > 6000: the two largest are truncated (the later one first at equal size).
    expect(f2).toMatchObject({ _truncated: true, cap: "per_chain", limit: 6000, bytes: 3011 });
    expect(f1).toMatchObject({ _truncated: true, cap: "per_chain" });
    expect(f3).toEqual({ note: "y".repeat(2900) });
  });

  test("annotations under both caps are untouched", async () => {
    const { deps: d } = deps(invoker({ h: () => ({ status: "continue", annotations: { ok: [1, 2, 3] } }) }));
    const result = await runChain(compileChainPlan("pre_inject", [hook("h")], 1), request(), d);
    expect(result.hook_results[0]!.annotations).toEqual({ ok: [1, 2, 3] });
  });
});
