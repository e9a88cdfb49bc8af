// The executor's event-profile path (chain/execute.ts) and profile planning (chain/plan.ts)
// with a test ActionInvoker and the toy echo profile (test/support/echo-profile.ts).
import { describe, expect, test } from "vitest";
import { answerWithout, runChain } from "../../../src/chain/execute.js";
import { compilePlan, executionModeOf, orderProfileHooks, type ProfilePlanRef } from "../../../src/chain/plan.js";
import type { ActionInvoker, ChainRequest, InvokeOutcome, InvokeRequest } from "../../../src/model/chain.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import echoProfile from "../../support/echo-profile.js";
import { compileGlob } from "../../../src/profiles/common/glob.js";
import { MAX_CHANGED_PATHS_CHARS, MAX_MATCHER_COST } from "../../../src/profiles/common/scan.js";
import { repoYamlProfile } from "../../../src/profiles/repo-yaml/index.js";
import { getProfile } from "../../../src/profiles/index.js";

let seq = 0;
function hook(name: string, extra: Partial<ResolvedHook> = {}): ResolvedHook {
  return Object.freeze({
    name, type: "pre_inject" as const, priority: 50, timeout_ms: 100,
    action: { bundle: "b", export: name, digest: "sha256:0" }, condition: null, enabled: true, metadata: {},
    fail_closed: false, trust: "deployment" as const, scope: "deployment" as const, seq: ++seq,
    profile: "echo", event: "Check", ...extra,
  });
}

function invoker(actions: Record<string, (input: any) => unknown>, calls: InvokeRequest[] = []): ActionInvoker {
  return {
    async invoke(request): Promise<InvokeOutcome> {
      calls.push(request);
      const out = actions[request.hook.name]!(JSON.parse(request.inputJson));
      if (out && typeof out === "object" && "kind" in out) return out as InvokeOutcome;
      return { kind: "returned", resultJson: out === undefined ? "null" : JSON.stringify(out), chainStateJson: "{}" };
    },
  };
}

const ref = (strict = false): ProfilePlanRef => ({ id: "echo", event: "Check", strict, settings: {} });
const request = (input: Record<string, unknown>): ChainRequest => ({
  chainId: "c1", context: {}, constitution: { id: "none", rules: [] } as never, event: input, session: { id: "s1" },
});
let t = 0;
const deps = (inv: ActionInvoker) => ({ invoker: inv, clock: { now: () => (t += 1), wallNow: () => 0 }, profileOf: (id: string) => (id === "echo" ? echoProfile : undefined) });
const plan = (hooks: ResolvedHook[], strict = false) => compilePlan(echoProfile, ref(strict), orderProfileHooks(echoProfile, hooks), 1);

describe("profile planning", () => {
  test("priority descending, then deployment before session scope, then registration order", () => {
    const a = hook("a", { priority: 50, seq: 3 });
    const b = hook("b", { priority: 90, seq: 4 });
    const c = hook("c", { priority: 50, seq: 1, scope: "session" });
    const d = hook("d", { priority: 50, seq: 2 });
    expect(orderProfileHooks(echoProfile, [a, b, c, d]).map((h) => h.name)).toEqual(["b", "d", "a", "c"]);
    expect(orderProfileHooks({ ordering: "priority_asc" }, [a, b, c, d]).map((h) => h.name)).toEqual(["d", "a", "c", "b"]);
    expect(orderProfileHooks({ ordering: "config_order" }, [a, b, c, d]).map((h) => h.name)).toEqual(["d", "a", "b", "c"]);
  });

  test("dedup key is (bundle digest, action, matcher): the first in plan order runs, later ones are marked", () => {
    const first = hook("first", { action: { bundle: "b", export: "same", digest: "sha256:1" } });
    const twin = hook("twin", { action: { bundle: "b", export: "same", digest: "sha256:1" } });
    const otherMatcher = hook("other_matcher", { action: { bundle: "b", export: "same", digest: "sha256:1" }, matcher: "x" });
    const otherDigest = hook("other_digest", { action: { bundle: "b", export: "same", digest: "sha256:2" } });
    const p = plan([first, twin, otherMatcher, otherDigest]);
    expect(p.hooks.map((h) => [h.hook.name, h.duplicateOf ?? null])).toEqual([
      ["first", null],
      ["twin", "first"],
      ["other_matcher", null],
      ["other_digest", null],
    ]);
  });

  test("execution mode: per_definition is sequential as soon as one matching definition says so", () => {
    expect(executionModeOf(echoProfile, [{ sequential: false }, {}])).toBe("parallel");
    expect(executionModeOf(echoProfile, [{}, { sequential: true }])).toBe("sequential");
    expect(executionModeOf({ execution: "sequential" }, [])).toBe("sequential");
  });

  test("a matcher RE2 cannot compile fails the plan, never an exact-string fallback", () => {
    expect(() => plan([hook("bad", { matcher: "(?<=x)y" })])).toThrow();
  });
});

describe("runChain", () => {
  test("an empty or wholly unmatched plan never touches the invoker and answers the neutral answer", async () => {
    const calls: InvokeRequest[] = [];
    const empty = await runChain(plan([]), request({ tool: "x" }), deps(invoker({}, calls)));
    expect(empty.profile).toMatchObject({ native: {}, exit_code: 0 });
    const unmatched = await runChain(plan([hook("h", { matcher: "^rm$" })]), request({ tool: "ls" }), deps(invoker({ h: () => ({ decision: "block" }) }, calls)));
    expect(unmatched.hook_results.map((r) => r.outcome)).toEqual(["skipped_matcher"]);
    expect(unmatched.profile?.native).toEqual({});
    expect(calls).toHaveLength(0);
  });

  test("the action receives the native input exactly, as a native call", async () => {
    const calls: InvokeRequest[] = [];
    const input = { session_id: "s", tool: "rm", args: { path: "/" } };
    await runChain(plan([hook("h")]), request(input), deps(invoker({ h: () => ({}) }, calls)));
    expect(JSON.parse(calls[0]!.inputJson)).toEqual(input);
    expect(calls[0]!.native).toBe(true);
  });

  test("parallel: every hook gets the original input; outputs fold in plan order whatever they say", async () => {
    const seen: unknown[] = [];
    const actions = {
      a: (i: any) => (seen.push(i.tool), { input: { tool: "safe" }, message: "a" }),
      b: (i: any) => (seen.push(i.tool), { decision: "block", reason: "b" }),
      c: (i: any) => (seen.push(i.tool), { decision: "allow", reason: "c", message: "c" }),
    };
    const result = await runChain(plan([hook("a", { priority: 90 }), hook("b", { priority: 80 }), hook("c", { priority: 70 })]), request({ tool: "rm" }), deps(invoker(actions)));
    expect(seen).toEqual(["rm", "rm", "rm"]);
    expect(result.profile).toMatchObject({ mode: "parallel", exit_code: 2, native: { decision: "block", reason: "b\nc", message: "a\nc", input: { tool: "safe" } } });
    expect(result.status).toBe("aborted");
    expect(result.aborted_by).toBe("b");
  });

  test("sequential: the next hook sees chainInput of the previous output, only after a success", async () => {
    const seen: unknown[] = [];
    const actions = {
      a: (i: any) => (seen.push(i.tool), { input: { tool: "safe" } }),
      broken: (i: any) => (seen.push(i.tool), { kind: "threw", message: "boom" }),
      c: (i: any) => (seen.push(i.tool), {}),
    };
    const hooks = [hook("a", { priority: 90, sequential: true }), hook("broken", { priority: 80 }), hook("c", { priority: 70 })];
    const result = await runChain(plan(hooks), request({ tool: "rm" }), deps(invoker(actions)));
    expect(seen).toEqual(["rm", "safe", "safe"]);
    expect(result.profile?.mode).toBe("sequential");
    expect(result.profile?.native).toEqual({ input: { tool: "safe" }, message: "Warning: broken: boom" });
  });

  test("failures map to outcomes and the profile's failure output; fail_closed and strict block", async () => {
    const actions = {
      threw: () => ({ kind: "threw", message: "boom at /home/user/secret/file.js:1:2" }),
      slow: () => ({ kind: "timeout", elapsedMs: 120 }),
      invalid: () => ({ colour: "blue" }),
      crashed: () => ({ kind: "crashed", message: "host died" }),
      deep: () => ({ kind: "returned", resultJson: "[".repeat(100) + "]".repeat(100), chainStateJson: "{}" }),
    };
    const hooks = Object.keys(actions).map((n) => hook(n));
    const open = await runChain(plan(hooks), request({ tool: "x" }), deps(invoker(actions)));
    expect(Object.fromEntries(open.hook_results.map((r) => [r.hook, r.outcome]))).toEqual({ threw: "error", slow: "timeout", invalid: "invalid_result", crashed: "crashed", deep: "invalid_result" });
    expect(open.profile?.exit_code).toBe(0);
    expect(String(open.profile?.native["message"])).not.toContain("/home/user");
    expect(open.hook_results.find((r) => r.hook === "deep")?.error).toContain("limits.json_depth");

    const closed = await runChain(plan([hook("threw", { fail_closed: true })]), request({ tool: "x" }), deps(invoker(actions)));
    expect(closed.profile).toMatchObject({ exit_code: 2, native: { decision: "block" } });
    expect(closed.hook_results[0]?.verdict).toBe("block");

    const strict = await runChain(plan([hook("threw")], true), request({ tool: "x" }), deps(invoker(actions)));
    expect(strict.profile?.exit_code).toBe(2);
  });

  test("a session-trust hook is an observer: its output is withheld from the answer and the next input (capability_denied names it)", async () => {
    const seen: unknown[] = [];
    const actions = { obs: () => ({ decision: "block", input: { tool: "y" }, message: "saw" }), guard: (i: any) => (seen.push(i.tool), { message: "guard" }) };
    const result = await runChain(plan([hook("obs", { trust: "session", priority: 90, sequential: true }), hook("guard", { priority: 10 })]), request({ tool: "x" }), deps(invoker(actions)));
    expect(result.hook_results[0]).toMatchObject({ outcome: "capability_denied", status: "continue", verdict: "observe", stripped: ["decision", "input", "message"] });
    expect(seen).toEqual(["x"]);
    expect(result.profile).toMatchObject({ exit_code: 0, native: { message: "guard" } });
  });

  test("stopsChain ends the chain: later hooks do not run and are not reported", async () => {
    const calls: InvokeRequest[] = [];
    const result = await runChain(plan([hook("stop", { priority: 90 }), hook("later", { priority: 10 })]), request({ tool: "x" }), deps(invoker({ stop: () => ({ stop: true, message: "halt" }), later: () => ({}) }, calls)));
    expect(calls.map((c) => c.hook.name)).toEqual(["stop"]);
    expect(result.hook_results.map((r) => r.hook)).toEqual(["stop"]);
    expect(result.aborted_by).toBe("stop");
  });

  test("disabled and duplicate hooks are recorded in plan order and never run", async () => {
    const calls: InvokeRequest[] = [];
    const same = { bundle: "b", export: "same", digest: "sha256:9" };
    const hooks = [hook("off", { enabled: false, priority: 90 }), hook("one", { action: same, priority: 80 }), hook("two", { action: same, priority: 70 })];
    const result = await runChain(plan(hooks), request({ tool: "x" }), deps(invoker({ one: () => ({ message: "once" }) }, calls)));
    expect(result.hook_results.map((r) => [r.hook, r.outcome])).toEqual([["off", "skipped_disabled"], ["one", "ok"], ["two", "deduplicated"]]);
    expect(calls).toHaveLength(1);
    expect(result.profile?.native).toEqual({ message: "once" });
  });

  test("answerWithout: a crashed chain's answer is the failed hooks' failure outputs (never an observer's)", () => {
    const answer = answerWithout(echoProfile, { hook_results: [{ hook: "h", outcome: "crashed", error: "host died" }] } as never, "Check", { strict: false, settings: {} }, () => true);
    expect(answer).toMatchObject({ exit_code: 2, native: { decision: "block", reason: "fail-closed: h: host died" } });
    const observed = answerWithout(echoProfile, { hook_results: [{ hook: "obs", trust: "session", outcome: "timeout", error: "timed out" }] } as never, "Check", { strict: false, settings: {} }, () => false);
    expect(observed).toEqual({ native: {}, exit_code: 0 });
  });
});

// The optional members of EventProfile (profiles/types.ts, issue 14), on a copy of the echo profile.
describe("optional profile members", () => {
  const NOW = 1_764_129_600_000; // 2025-11-26T04:00:00.000Z
  type Entry = { hook: string; output: Record<string, unknown>; failed?: boolean; blocking?: boolean };
  function withMembers(extra: Partial<typeof echoProfile>, log: { stamps: number; folds: Array<{ entries: Entry[]; input: Record<string, unknown> }>; failClosed: boolean[] }) {
    return {
      ...echoProfile,
      stampInput: (input: Record<string, unknown>, _event: string, nowIso: string) => {
        log.stamps++;
        return { ...input, stamped: nowIso };
      },
      reduceWithHooks: (entries: readonly Entry[], event: string, ctx: never, input: Record<string, unknown>) => {
        log.folds.push({ entries: [...entries], input });
        return echoProfile.reduce(entries.map((e) => e.output), event, ctx);
      },
      failureOutput: (hook: string, why: string, failClosed: boolean, event: string, ctx: never) => {
        log.failClosed.push(failClosed);
        return echoProfile.failureOutput(hook, why, failClosed, event, ctx);
      },
      ...extra,
    } as typeof echoProfile;
  }
  const run = (profile: typeof echoProfile, hooks: ResolvedHook[], actions: Record<string, (input: any) => unknown>, calls: InvokeRequest[] = [], input: Record<string, unknown> = { tool: "x" }) => {
    let now = 0;
    const p = compilePlan(profile, ref(), orderProfileHooks(profile, hooks), 1);
    return runChain(p, request(input), { invoker: invoker(actions, calls), clock: { now: () => (now += 1), wallNow: () => NOW }, profileOf: () => profile });
  };

  test("stampInput runs once per chain with the wall clock; the first hook and reduceWithHooks get the stamped input, with hook names and flags", async () => {
    const log = { stamps: 0, folds: [] as Array<{ entries: Entry[]; input: Record<string, unknown> }>, failClosed: [] as boolean[] };
    const profile = withMembers({ blockingHooks: true }, log);
    const calls: InvokeRequest[] = [];
    const result = await run(profile, [hook("first", { priority: 90 }), hook("guard", { priority: 10, blocking: true })], { first: () => ({ message: "hi" }), guard: () => ({ kind: "threw", message: "boom" }) }, calls);
    expect(log.stamps).toBe(1);
    expect(JSON.parse(calls[0]!.inputJson)).toEqual({ tool: "x", stamped: "2025-11-26T04:00:00.000Z" });
    expect(log.folds).toEqual([{ entries: [{ hook: "first", output: { message: "hi" } }, { hook: "guard", output: expect.any(Object), failed: true, blocking: true }], input: { tool: "x", stamped: "2025-11-26T04:00:00.000Z" } }]);
    // A failing blocking hook fails closed (failureOutput(…, true)); the echo profile then blocks.
    expect(log.failClosed).toEqual([true]);
    expect(result.profile?.exit_code).toBe(2);
  });

  test("a session-trust blocking hook never fails closed (spec §8.3)", async () => {
    const log = { stamps: 0, folds: [] as Array<{ entries: Entry[]; input: Record<string, unknown> }>, failClosed: [] as boolean[] };
    const result = await run(withMembers({ blockingHooks: true }, log), [hook("obs", { trust: "session", blocking: true })], { obs: () => ({ kind: "threw", message: "boom" }) });
    // Its failure is withheld like its output: nothing folds, the chain answers the neutral answer.
    expect(log.failClosed).toEqual([false]);
    expect(log.folds[0]!.entries).toEqual([]);
    expect(result.hook_results[0]).toMatchObject({ outcome: "error", error: "boom", verdict: "observe" });
    expect(result.profile?.exit_code).toBe(0);
  });

  test("no hook applies: emptyPlanAnswer answers, nothing is stamped or run", async () => {
    const log = { stamps: 0, folds: [] as Array<{ entries: Entry[]; input: Record<string, unknown> }>, failClosed: [] as boolean[] };
    const calls: InvokeRequest[] = [];
    const profile = withMembers({ emptyPlanAnswer: () => ({ decision: "block", reason: "required" }) }, log);
    const result = await run(profile, [hook("other", { matcher: "^rm$" })], {}, calls);
    expect(result.hook_results.map((r) => r.outcome)).toEqual(["skipped_matcher"]);
    expect(result.profile).toMatchObject({ exit_code: 2, native: { decision: "block", reason: "required" } });
    expect([log.stamps, calls.length, log.folds.length]).toEqual([0, 0, 0]);
  });

  test("hookBudgetMs sets each hook's budget; undefined ⇒ deadline_exhausted, fail-open skipped, fail-closed its output; both counted as timeout violations", async () => {
    const log = { stamps: 0, folds: [] as Array<{ entries: Entry[]; input: Record<string, unknown> }>, failClosed: [] as boolean[] };
    const asked: Array<[string, boolean]> = [];
    const profile = withMembers({
      // 3 ms of chain deadline: the fake clock advances 1 ms per reading.
      hookBudgetMs: (timeoutMs: number, _event: string, elapsedMs: number) => (elapsedMs >= 3 ? undefined : Math.min(timeoutMs, 3 - elapsedMs)),
      deadlineExhaustedOutput: (name: string, failClosed: boolean) => {
        asked.push([name, failClosed]);
        return failClosed ? { decision: "block", reason: `${name}: deadline` } : undefined;
      },
    }, log);
    const calls: InvokeRequest[] = [];
    const result = await run(profile, [hook("fast", { priority: 90 }), hook("open", { priority: 50 }), hook("closed", { priority: 10, fail_closed: true })], { fast: () => ({ message: "ok" }), open: () => ({}), closed: () => ({}) }, calls);
    expect(calls.map((c) => [c.hook.name, c.budgetMs])).toEqual([["fast", 2]]);
    expect(result.hook_results.map((r) => [r.hook, r.outcome])).toEqual([["fast", "ok"], ["open", "deadline_exhausted"], ["closed", "deadline_exhausted"]]);
    expect(asked).toEqual([["open", false], ["closed", true]]);
    expect(log.folds[0]!.entries.map((e) => [e.hook, e.failed ?? false])).toEqual([["fast", false], ["closed", true]]);
    expect(result.profile).toMatchObject({ exit_code: 2, native: { decision: "block", reason: "closed: deadline", message: "ok" }, timeout_violations: 2 });
    expect(result.aborted_by).toBe("closed");
  });

  test("compileFilter is ANDed with the matcher; a definition with match on a profile without it is refused when planned", async () => {
    const log = { stamps: 0, folds: [] as Array<{ entries: Entry[]; input: Record<string, unknown> }>, failClosed: [] as boolean[] };
    const profile = withMembers({ compileFilter: (match: unknown) => Object.assign((input: Record<string, unknown>) => input["size"] === (match as { size: number }).size, { cost: 0 }) }, log);
    const result = await run(profile, [hook("big", { match: { size: 2 } }), hook("small", { match: { size: 1 } })], { big: () => ({ message: "big" }), small: () => ({ message: "small" }) }, [], { tool: "x", size: 1 });
    expect(result.hook_results.map((r) => [r.hook, r.outcome])).toEqual([["big", "skipped_matcher"], ["small", "ok"]]);
    expect(() => compilePlan(echoProfile, ref(), [hook("m", { match: { size: 1 } })], 1)).toThrow(/has no match filters/);
  });
});

describe("parallel groups and a concurrent invoker", () => {
  /** An invoker whose calls stay pending until the test settles them; `concurrent` as given. */
  function held(concurrent: boolean) {
    const calls: string[] = [];
    const settle = new Map<string, (out: unknown) => void>();
    const inv: ActionInvoker = {
      ...(concurrent ? { concurrent: true } : {}),
      invoke(request) {
        calls.push(request.hook.name);
        return new Promise<InvokeOutcome>((resolve) => {
          settle.set(request.hook.name, (out) => resolve({ kind: "returned", resultJson: JSON.stringify(out), chainStateJson: "{}" }));
        });
      },
    };
    return { inv, calls, settle };
  }
  const flush = () => new Promise((r) => setImmediate(r));

  test("every hook starts before any ends; settled in any order, the fold and results keep plan order", async () => {
    const { inv, calls, settle } = held(true);
    const running = runChain(plan([hook("a"), hook("b"), hook("c")]), request({ text: "x" }), deps(inv));
    await flush();
    expect(calls).toEqual(["a", "b", "c"]);
    for (const name of ["c", "b", "a"]) {
      settle.get(name)!({ message: name });
      await flush();
    }
    const result = await running;
    expect(result.profile).toMatchObject({ mode: "parallel", native: { message: "a\nb\nc" } });
    expect(result.hook_results.map((h) => [h.hook, h.outcome])).toEqual([["a", "ok"], ["b", "ok"], ["c", "ok"]]);
  });

  test("without `concurrent` (the sandbox worker) the group runs one after another", async () => {
    const { inv, calls, settle } = held(false);
    const running = runChain(plan([hook("a"), hook("b")]), request({ text: "x" }), deps(inv));
    await flush();
    expect(calls).toEqual(["a"]);
    settle.get("a")!({ message: "a" });
    await flush();
    expect(calls).toEqual(["a", "b"]);
    settle.get("b")!({ message: "b" });
    expect((await running).profile?.native).toEqual({ message: "a\nb" });
  });

  test("a sequential group never overlaps, even with a concurrent invoker: the next hook sees the chained input", async () => {
    const { inv, calls, settle } = held(true);
    const running = runChain(plan([hook("a", { sequential: true }), hook("b")]), request({ text: "x" }), deps(inv));
    await flush();
    expect(calls).toEqual(["a"]);
    settle.get("a")!({ input: { text: "y" } });
    await flush();
    expect(calls).toEqual(["a", "b"]);
    settle.get("b")!({});
    expect((await running).profile?.mode).toBe("sequential");
  });

  test("a stop in a concurrent group: later hooks' runs are awaited but neither folded nor reported", async () => {
    const { inv, calls, settle } = held(true);
    const running = runChain(plan([hook("a"), hook("b"), hook("c")]), request({ text: "x" }), deps(inv));
    await flush();
    expect(calls).toEqual(["a", "b", "c"]);
    settle.get("a")!({ message: "a" });
    settle.get("b")!({ message: "b", stop: true });
    let done = false;
    void running.then(() => (done = true));
    await flush();
    expect(done).toBe(false);
    settle.get("c")!({ message: "c", decision: "block" });
    const result = await running;
    expect(result.aborted_by).toBe("b");
    expect(result.profile?.native).toEqual({ message: "a\nb" });
    expect(result.hook_results.map((h) => h.hook)).toEqual(["a", "b"]);
  });
});

describe("matcher scan budget (profiles/common/scan.ts)", () => {
  const repoRef: ProfilePlanRef = { id: "repo-yaml", event: "SessionStop", strict: false, settings: {} };
  const repoHook = (name: string, bundle: string, extra: Partial<ResolvedHook> = {}) =>
    hook(name, { profile: "repo-yaml", event: "SessionStop", action: { bundle, export: name, digest: `sha256:${bundle}` }, ...extra });
  // The largest changed_files validateInput accepts: 64 paths of 1,024 characters, none matching.
  const changed = Array.from({ length: 64 }, () => "a".repeat(MAX_CHANGED_PATHS_CHARS / 64));

  test("a bundle's filters share one meter per chain: once spent, its next filtering hook is not run and is `error`; other bundles and free matchers are unaffected", async () => {
    const perHook = (MAX_CHANGED_PATHS_CHARS + changed.length) * compileGlob("*.md0").programSize;
    const fit = Math.floor(MAX_MATCHER_COST / perHook);
    const filtered = Array.from({ length: fit + 2 }, (_, i) => repoHook(`f${i}`, "b", { match: { only_if_changed_paths: [`*.md${i}`] } }));
    const free = repoHook("free", "b");
    const other = repoHook("other", "c", { match: { only_if_changed_paths: ["*.md0"] } });
    const hooks = [...filtered, free, other];
    const calls: InvokeRequest[] = [];
    const actions = Object.fromEntries(hooks.map((h) => [h.name, () => ({})]));
    const p = compilePlan(repoYamlProfile, repoRef, orderProfileHooks(repoYamlProfile, hooks), 1);
    const result = await runChain(p, request({ changed_files: changed }), { ...deps(invoker(actions, calls)), profileOf: () => repoYamlProfile });
    const outcomes = Object.fromEntries(result.hook_results.map((r) => [r.hook, r]));
    for (let i = 0; i < fit; i++) expect(outcomes[`f${i}`]!.outcome).toBe("skipped_matcher");
    for (const name of [`f${fit}`, `f${fit + 1}`]) {
      expect(outcomes[name]).toMatchObject({ outcome: "error", status: "continue" });
      expect(outcomes[name]!.error).toMatch(new RegExp(`bundle 'b' used up their scan budget of ${MAX_MATCHER_COST} units for this chain \\(limit maxMatcherCost\\)`));
    }
    expect(outcomes["free"]!.outcome).toBe("ok");
    expect(outcomes["other"]!.outcome).toBe("skipped_matcher");
    // Only the hook whose matcher decided "applies" ran: an over-budget hook is never invoked.
    expect(calls.map((c) => c.hook.name)).toEqual(["free"]);
  });

  test("a fail_closed hook whose filter is over budget contributes its profile's failure answer", async () => {
    const perHook = (MAX_CHANGED_PATHS_CHARS + changed.length) * compileGlob("*.md0").programSize;
    const fit = Math.floor(MAX_MATCHER_COST / perHook);
    const filtered = Array.from({ length: fit }, (_, i) => repoHook(`f${i}`, "b", { match: { only_if_changed_paths: [`*.md${i}`] } }));
    const closed = repoHook("closed", "b", { blocking: true, match: { only_if_changed_paths: ["*.rs"] } });
    const pre = (h: ResolvedHook): ResolvedHook => ({ ...h, event: "PreAbilityCall" });
    const hooks = [...filtered, closed].map(pre);
    const p = compilePlan(repoYamlProfile, { ...repoRef, event: "PreAbilityCall" }, orderProfileHooks(repoYamlProfile, hooks), 1);
    const result = await runChain(p, request({ ability_id: "fs.write", changed_files: changed }), { ...deps(invoker({})), profileOf: () => repoYamlProfile });
    expect(result.hook_results.find((r) => r.hook === "closed")).toMatchObject({ outcome: "error" });
    expect(result.profile?.native).toMatchObject({ error: "blocked_by_policy" });
  });
});

describe("runChain: what the decision record needs (issue 25)", () => {
  test("a blocking hook keeps its reason; a modifying hook its changed paths (op and path, no values); an allow neither", async () => {
    const gemini = getProfile("gemini-cli");
    const geminiHook = (name: string, priority: number) => hook(name, { profile: "gemini-cli", event: "BeforeTool", priority });
    const geminiRef: ProfilePlanRef = { id: "gemini-cli", event: "BeforeTool", strict: false, settings: {} };
    const hooks = [geminiHook("rewrite", 90), geminiHook("guard", 50), geminiHook("note", 40)];
    const p = compilePlan(gemini, geminiRef, orderProfileHooks(gemini, hooks), 1);
    const inv = invoker({
      rewrite: (input) => ({ hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: { command: `${input.tool_input.command} --dry-run` } } }),
      guard: () => ({ decision: "block", reason: "refusing rm -rf /" }),
      note: () => ({ systemMessage: "looked" }),
    });
    const input = { session_id: "s", hook_event_name: "BeforeTool", tool_name: "run_shell_command", tool_input: { command: "rm -rf /", description: "x" } };
    const result = await runChain(p, request(input), { ...deps(inv), profileOf: (id: string) => (id === "gemini-cli" ? gemini : undefined) });
    const byName = Object.fromEntries(result.hook_results.map((h) => [h.hook, h]));
    expect(byName["rewrite"]).toMatchObject({ verdict: "modify", modification: [{ op: "replace", path: "/tool_input/command" }] });
    expect(JSON.stringify(byName["rewrite"]!.modification)).not.toContain("dry-run");
    expect(byName["guard"]).toMatchObject({ verdict: "block", reason: "refusing rm -rf /" });
    expect(byName["note"]!.reason).toBeUndefined();
    expect(byName["note"]!.modification).toBeUndefined();
  });
});
