import { describe, expect, test } from "vitest";
import type { CrashAttribution, HookIdentity } from "../../../src/pool/crash.js";
import { PlanCache } from "../../../src/pool/plan-cache.js";
import { vcpPlanRef } from "../../../src/chain/plan.js";
import { hook } from "./fixtures.js";
import { planRecovery, type InFlightChain } from "../../../src/pool/recovery.js";
import type { SlotRecord } from "../../../src/pool/slots.js";
import { graceMs, inspectHost, LOAD_WATCHDOG_MS, MIN_SAMPLE_MS, OUTSIDE_HOOKS_MS, WatchdogMemory, type WatchedChain, type WatchdogSnapshot } from "../../../src/pool/watchdog.js";

// The supervisor's parts that decide (plan keys, the watchdog, crash recovery), tested without a process.


describe("PlanCache: a hook list crosses to the host once per plan", () => {
  const loaded = new Set(["sha256:a", "sha256:b"]);
  const isLoaded = (d: string): boolean => loaded.has(d);

  test("the same list keeps its key; a new list (or one changed in place) gets a new one", () => {
    const cache = new PlanCache();
    const hooks = [hook("x", "sha256:a"), hook("y", "sha256:b")];
    const first = cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks }, isLoaded).entry;
    expect(cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks }, isLoaded).entry.key).toBe(first.key);
    expect(cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks: hooks.slice() }, isLoaded).entry.key).not.toBe(first.key);
    hooks[1] = hook("z", "sha256:b");
    const changed = cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks }, isLoaded).entry;
    expect(changed.key).not.toBe(first.key);
    expect(changed.hooks.map((h) => h.name)).toEqual(["x", "z"]);
  });

  test("admission figures are computed once: enabled hooks, distinct digests, the timeout sum", () => {
    const cache = new PlanCache();
    const hooks = [hook("x", "sha256:a", { timeout_ms: 300 }), hook("y", "sha256:a", { timeout_ms: 200 }), hook("off", "sha256:b", { enabled: false })];
    const { entry } = cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks }, isLoaded);
    expect(entry.enabled.map((h) => h.name)).toEqual(["x", "y"]);
    expect(entry.digests).toEqual(["sha256:a"]);
    expect(entry.timeoutSum).toBe(500);
  });

  test("an enabled hook of an unloaded revision, or without a revision, is UNKNOWN_BUNDLE on every chain; a disabled one is not", () => {
    const cache = new PlanCache();
    const hooks = [hook("x", "sha256:a"), hook("gone", "sha256:zzz", { enabled: false })];
    expect(() => cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks }, isLoaded)).not.toThrow();
    expect(() => cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks }, () => false)).toThrow(expect.objectContaining({ code: "UNKNOWN_BUNDLE", details: { hook: "x", bundle: "b-sha256:a", digest: "sha256:a" } }));
    expect(() => cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks: [hook("nodigest", undefined)] }, isLoaded)).toThrow(/nodigest refers to bundle b-nodigest \(no revision\)/);
  });

  test("past its capacity the least recently used entry is forgotten and its key handed back", () => {
    const cache = new PlanCache(2);
    const lists = [0, 1, 2].map((i) => [hook(`h${i}`, "sha256:a")]);
    const a = cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks: lists[0]! }, isLoaded).entry;
    const b = cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks: lists[1]! }, isLoaded).entry;
    cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks: lists[0]! }, isLoaded); // a is now most recent
    const third = cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks: lists[2]! }, isLoaded);
    expect(third.evicted).toEqual([b.key]);
    expect(cache.size).toBe(2);
    const fourth = cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks: [hook("h3", "sha256:a")] }, isLoaded);
    expect(fourth.evicted).toEqual([a.key]);
    // Its list comes back under the same key (the channels forgot it, so its hook list is sent again).
    expect(cache.lookup({ profile: vcpPlanRef("pre_inject"), revision: 1, hooks: lists[0]! }, isLoaded).entry.key).toBe(a.key);
  });
});

function identity(position: number, digest = "sha256:a"): HookIdentity {
  return { digest, bundle: "b", hook: `h${position}`, scope: "deployment", position };
}

const watchedHooks = [hook("h0", "sha256:a"), hook("h1", "sha256:a")];

function watched(id: number, hardDeadline = Number.POSITIVE_INFINITY): WatchedChain {
  return { id, chainId: `chain-${id}`, dispatchedAt: 0, hardDeadline, hooks: watchedHooks };
}

function snapshot(records: SlotRecord[], monoMs: number, extra: Partial<WatchdogSnapshot> = {}): WatchdogSnapshot {
  const chains = new Map([[1, watched(1)]]);
  return {
    records,
    monoMs,
    nowMs: 0,
    chain: (id) => chains.get(id),
    chains: chains.values(),
    isLoad: () => false,
    threadTime: () => undefined,
    ...extra,
  };
}

describe("inspectHost: the watchdog's decision", () => {
  const inside = (startMs: number, budgetMs = 1000): SlotRecord => ({ taskId: 1, phase: "I", hook: "h0", position: 0, startMs, budgetMs, tid: 42 });

  test("a hook within budget + grace is left alone", () => {
    const samples = new WatchdogMemory();
    expect(inspectHost(snapshot([inside(0)], 1000 + graceMs(1000)), samples)).toBeUndefined();
  });

  test("past budget + grace, a thread that kept burning CPU is an overrun of that hook (timeout)", () => {
    const samples = new WatchdogMemory();
    let cpuMs = 0;
    const snap = (mono: number): WatchdogSnapshot => snapshot([inside(0)], mono, { threadTime: () => ({ cpuMs, runnableMs: cpuMs, runnable: true }) });
    expect(inspectHost(snap(1200), samples)).toBeUndefined(); // first sample, over budget
    cpuMs = 3000; // 3 s of CPU in the next 3 s
    const kill = inspectHost(snap(1200 + Math.max(MIN_SAMPLE_MS, graceMs(1000)) + 500), samples);
    expect(kill).toMatchObject({ kind: "overrun", taskId: 1, hook: { position: 0, digest: "sha256:a" } });
    expect(kill?.detail).toMatch(/ignored termination/);
  });

  test("past budget + grace, a thread that did nothing is wedged (crashed)", () => {
    const samples = new WatchdogMemory();
    const snap = (mono: number): WatchdogSnapshot => snapshot([inside(0)], mono, { threadTime: () => ({ cpuMs: 50, runnableMs: 50, runnable: false }) });
    inspectHost(snap(1100), samples);
    expect(inspectHost(snap(5000), samples)).toBeUndefined(); // one idle window
    expect(inspectHost(snap(5000 + MIN_SAMPLE_MS), samples)).toMatchObject({ kind: "wedged", hook: { position: 0 } });
  });

  test("a slot whose name does not match the hook at its position leaves the kill unattributed", () => {
    const samples = new WatchdogMemory();
    const record: SlotRecord = { ...inside(0), hook: "someone-else" };
    inspectHost(snapshot([record], 1100), samples);
    const kill = inspectHost(snapshot([record], 6000), samples);
    expect(kill?.kind).toBe("overrun");
    expect(kill?.hook).toBeUndefined();
  });

  test("a record of a task no longer in flight is stale and ignored; its samples are dropped", () => {
    const samples = new WatchdogMemory();
    const stale: SlotRecord = { ...inside(0), taskId: 99 };
    expect(inspectHost(snapshot([stale], 60_000), samples)).toBeUndefined();
    inspectHost(snapshot([inside(0)], 1100), samples);
    expect(samples.hooks.size).toBe(1);
    inspectHost(snapshot([], 1200), samples);
    expect(samples.hooks.size).toBe(0);
  });

  test("a bundle load running past LOAD_WATCHDOG_MS is killed; a shorter one is not", () => {
    const load: SlotRecord = { taskId: 5, phase: "L", startMs: 0 };
    expect(inspectHost(snapshot([load], LOAD_WATCHDOG_MS, { isLoad: (id) => id === 5 }), new WatchdogMemory())).toBeUndefined();
    expect(inspectHost(snapshot([load], LOAD_WATCHDOG_MS + 1, { isLoad: (id) => id === 5 }), new WatchdogMemory())).toMatchObject({ kind: "load", taskId: 5 });
  });

  test("a chain past its hard deadline is killed even when no slot says why", () => {
    const late = watched(3, 100);
    const kill = inspectHost(snapshot([], 0, { nowMs: 101, chains: [late], chain: () => late }), new WatchdogMemory());
    expect(kill).toMatchObject({ kind: "deadline", taskId: 3 });
    expect(kill?.detail).toMatch(/chain-3 outlived its hard deadline/);
  });
});

describe("inspectHost: a busy hook is judged on the CPU it used, not on the machine's load", () => {
  const inside = (taskId: number, startMs: number, budgetMs = 1000): SlotRecord => ({ taskId, phase: "I", hook: "h0", position: 0, startMs, budgetMs, tid: 42 });
  const limit = 1000 + graceMs(1000);

  test("a thread that gets a fifth of a core runs past budget + grace of wall time and is left alone until it used that much CPU", () => {
    const memory = new WatchdogMemory();
    // 100 ms of CPU per 500 ms of wall, runnable all along: a machine whose other runnable threads leave
    // this one 20% of a core.
    const at = (step: number) => inspectHost(snapshot([inside(1, 0)], 100 + step * 500, { threadTime: () => ({ cpuMs: step * 100, runnableMs: step * 500, runnable: true }) }), memory);
    let kill: ReturnType<typeof inspectHost>;
    let step = 0;
    for (; step < 40 && kill === undefined; step++) kill = at(step);
    // Killed at the first look past budget + grace of CPU (the CPU before the first look is not counted).
    expect((step - 1) * 100).toBeGreaterThan(limit);
    expect((step - 2) * 100).toBeLessThanOrEqual(limit);
    expect(kill).toMatchObject({ kind: "overrun", taskId: 1, hook: { position: 0 } });
    expect(kill?.detail).toMatch(new RegExp(`ran ${(step - 1) * 500 + 100} ms \\(${(step - 1) * 100} ms of CPU\\) against a budget of 1000 ms`));
  });

  test("a thread starved to 1% of a core but runnable all along is never taken for wedged", () => {
    const memory = new WatchdogMemory();
    // 5 ms of CPU per 500 ms, the rest waiting for a core: a badly overloaded machine, not a stuck thread.
    for (let step = 0; step <= 60; step++) {
      const kill = inspectHost(snapshot([inside(1, 0)], 100 + step * 500, { threadTime: () => ({ cpuMs: step * 5, runnableMs: step * 500, runnable: true }) }), memory);
      expect(kill, `at ${100 + step * 500} ms`).toBeUndefined();
    }
  });

  test("a thread that was busy and then sleeps is wedged (crashed) after two whole windows", () => {
    const memory = new WatchdogMemory();
    let cpuMs = 0;
    let runnable = true;
    const at = (mono: number) => inspectHost(snapshot([inside(1, 0)], mono, { threadTime: () => ({ cpuMs, runnableMs: cpuMs, runnable }) }), memory);
    expect(at(100)).toBeUndefined();
    cpuMs = 1500; // busy: 1.5 s of CPU in 1.5 s
    expect(at(1600)).toBeUndefined();
    cpuMs = 2000; // still busy, now past budget + grace of wall time, under it in CPU
    expect(at(limit + 100)).toBeUndefined();
    // Asleep from here on (stuck inside V8): neither running nor waiting, two whole windows in a row.
    runnable = false;
    expect(at(limit + 100 + MIN_SAMPLE_MS)).toBeUndefined();
    expect(at(limit + 100 + 2 * MIN_SAMPLE_MS)).toMatchObject({ kind: "wedged", hook: { position: 0 } });
  });

  test("a thread still waiting on the run queue (the kernel has not added that wait yet) is never taken for wedged", () => {
    const memory = new WatchdogMemory();
    // One long wait for a core: the figures stand still, the state says runnable.
    for (let step = 0; step <= 20; step++) {
      const kill = inspectHost(snapshot([inside(1, 0)], 100 + step * 500, { threadTime: () => ({ cpuMs: 10, runnableMs: 10, runnable: true }) }), memory);
      expect(kill, `at ${100 + step * 500} ms`).toBeUndefined();
    }
  });

  test("a chain past its hard deadline inside a hook's action is the hook rule's; outside every hook it is killed after OUTSIDE_HOOKS_MS", () => {
    const memory = new WatchdogMemory();
    const chain = watched(1, 1000);
    const chains = new Map([[1, chain]]);
    const snap = (records: SlotRecord[], nowMs: number) =>
      snapshot(records, nowMs, { nowMs, chains: chains.values(), chain: (id) => chains.get(id), threadTime: () => ({ cpuMs: nowMs / 10, runnableMs: nowMs, runnable: true }) });
    // Busy inside its hook (a tenth of its CPU limit used) well past the chain's hard deadline: left alone.
    expect(inspectHost(snap([inside(1, 0, 5000)], 100), memory)).toBeUndefined();
    expect(inspectHost(snap([inside(1, 0, 5000)], 5000), memory)).toBeUndefined();
    // Back in chain code: the chain gets OUTSIDE_HOOKS_MS to reach its next hook or its end.
    const c: SlotRecord = { taskId: 1, phase: "C" };
    expect(inspectHost(snap([c], 5000 + OUTSIDE_HOOKS_MS), memory)).toBeUndefined();
    expect(inspectHost(snap([c], 5001 + OUTSIDE_HOOKS_MS), memory)).toMatchObject({ kind: "deadline", taskId: 1 });
  });

  test("a chain never seen in a hook waits past its hard deadline while another chain's hook runs past its own (it may be queued behind it)", () => {
    const memory = new WatchdogMemory();
    const running = watched(1, 1000);
    const queued = watched(2, 2000);
    const chains = new Map([
      [1, running],
      [2, queued],
    ]);
    const snap = (nowMs: number, records: SlotRecord[]) =>
      snapshot(records, nowMs, { nowMs, chains: chains.values(), chain: (id) => chains.get(id), threadTime: () => ({ cpuMs: nowMs / 10, runnableMs: nowMs, runnable: true }) });
    expect(inspectHost(snap(100, [inside(1, 0, 5000)]), memory)).toBeUndefined();
    expect(inspectHost(snap(3000, [inside(1, 0, 5000)]), memory)).toBeUndefined();
    // The hook is over (its chain answered); the queued chain is past its hard deadline with nothing to wait for.
    chains.delete(1);
    expect(inspectHost(snap(3100, []), memory)).toMatchObject({ kind: "deadline", taskId: 2 });
  });
});

interface Fake extends InFlightChain {
  tag: string;
}

function inFlight(id: number, dispatches = 1): Fake {
  return { id, chainId: `c${id}`, dispatches, hooks: [hook(`h${id}a`, "sha256:a"), hook(`h${id}b`, "sha256:b")], tag: `t${id}` };
}

function attribution(parts: Partial<CrashAttribution>): CrashAttribution {
  return { running: new Map(), culprits: new Map(), suspects: [], ...parts };
}

describe("planRecovery: who is answered, who runs again, who is blamed", () => {
  const died = { code: null, signal: "SIGABRT" as NodeJS.Signals };

  test("a culprit's chain is answered crashed for the hook it was in; bystanders are requeued in order", () => {
    const culprit = identity(1, "sha256:b");
    const plan = planRecovery([inFlight(3), inFlight(1), inFlight(2)], attribution({ running: new Map([[2, culprit]]), culprits: new Map([["sha256:b", { taskId: 2, hook: culprit, why: "only-running" }]]) }), undefined, died);
    expect(plan.requeue.map((c) => c.tag)).toEqual(["t1", "t3"]);
    expect(plan.answers).toHaveLength(1);
    expect(plan.answers[0]).toMatchObject({ outcome: "crashed", hook: { name: "h2b" }, chain: { tag: "t2" } });
    expect(plan.answers[0]!.error).toMatch(/signal SIGABRT/);
    expect(plan.culprits).toEqual([{ digest: "sha256:b", taskId: 2, hook: culprit, why: "only-running", chainId: "c2" }]);
  });

  test("a bystander that already ran twice is answered, never requeued a third time", () => {
    const plan = planRecovery([inFlight(1, 2)], attribution({ suspects: ["sha256:a"] }), undefined, { code: 134, signal: null });
    expect(plan.requeue).toEqual([]);
    expect(plan.answers[0]).toMatchObject({ outcome: "crashed", hook: { name: "h1a" } });
    expect(plan.answers[0]!.error).toMatch(/exit code 134/);
  });

  test("an ambiguous crash blames nobody: everyone runs again, the digests become suspects", () => {
    const plan = planRecovery([inFlight(1), inFlight(2)], attribution({ suspects: ["sha256:a", "sha256:b"] }), undefined, died);
    expect(plan.requeue.map((c) => c.id)).toEqual([1, 2]);
    expect(plan.culprits).toEqual([]);
    expect(plan.suspects).toEqual(["sha256:a", "sha256:b"]);
  });

  test("the watchdog's overrun overrides slot attribution: that hook times out, the rest are bystanders", () => {
    const overran = identity(0, "sha256:a");
    const plan = planRecovery(
      [inFlight(1), inFlight(2)],
      attribution({ suspects: ["sha256:a", "sha256:b"] }),
      { kind: "overrun", taskId: 2, hook: overran, detail: "hook h2a ran 9000 ms" },
      { code: null, signal: "SIGKILL" },
    );
    expect(plan.suspects).toEqual([]);
    expect(plan.requeue.map((c) => c.id)).toEqual([1]);
    expect(plan.answers[0]).toMatchObject({ outcome: "timeout", chain: { id: 2 }, hook: { name: "h2a" } });
    expect(plan.answers[0]!.error).toMatch(/ignored termination \(hook h2a ran 9000 ms\); the sandbox host process was recycled/);
    expect(plan.culprits[0]).toMatchObject({ digest: "sha256:a", why: "overran", chainId: "c2" });
    expect(plan.how).toBe("killed by the supervisor: hook h2a ran 9000 ms");
  });

  test("a wedged hook is answered crashed and blamed as wedged", () => {
    const plan = planRecovery([inFlight(4)], attribution({}), { kind: "wedged", taskId: 4, hook: identity(1, "sha256:b"), detail: "asleep" }, { code: null, signal: "SIGKILL" });
    expect(plan.answers[0]).toMatchObject({ outcome: "crashed", hook: { name: "h4b" } });
    expect(plan.answers[0]!.error).toMatch(/asleep; the supervisor killed and recycled/);
    expect(plan.culprits[0]).toMatchObject({ why: "wedged" });
  });

  test("a sole load is passed on so its bundle's load is blamed", () => {
    expect(planRecovery([], attribution({ soleLoad: 9 }), undefined, died).soleLoad).toBe(9);
  });

  test("a corrupt frame stream blames nobody and requeues nobody: every chain in flight is answered crashed", () => {
    const culprit = identity(1, "sha256:b");
    const slots = attribution({ running: new Map([[2, culprit]]), culprits: new Map([["sha256:b", { taskId: 2, hook: culprit, why: "only-running" }]]) });
    const plan = planRecovery([inFlight(2), inFlight(1)], slots, { kind: "protocol", taskId: 0, detail: "corrupt sandbox frame stream: bad magic" }, { code: null, signal: "SIGKILL" });
    expect(plan.requeue).toEqual([]);
    expect(plan.culprits).toEqual([]);
    expect(plan.suspects).toEqual([]);
    expect(plan.answers.map((a) => [a.chain.id, a.hook.name, a.outcome])).toEqual([
      [1, "h1a", "crashed"],
      [2, "h2a", "crashed"],
    ]);
    expect(plan.answers[0]!.error).toMatch(/corrupt frame stream \(killed by the supervisor: corrupt sandbox frame stream: bad magic\)/);
  });

  test("a host that exits with the protocol code (it found our frames corrupt) is handled the same; a fail_closed hook is the one answered", () => {
    const chain: Fake = { id: 1, chainId: "c1", dispatches: 1, hooks: [hook("open", "sha256:a"), hook("guard", "sha256:b", { fail_closed: true })], tag: "t1" };
    const plan = planRecovery([chain], attribution({ suspects: ["sha256:a"] }), undefined, { code: 76, signal: null });
    expect(plan.requeue).toEqual([]);
    expect(plan.suspects).toEqual([]);
    expect(plan.answers.map((a) => [a.hook.name, a.outcome])).toEqual([["guard", "crashed"]]);
    expect(plan.how).toBe("exit code 76");
  });
});
