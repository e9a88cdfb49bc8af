import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import { createPipeline, type ContextReevaluation, type PeriodicTickReport, type PipelineDeps } from "../../../src/pipeline/index.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import { baseConstitution, deferred, execution, type FireCall, fakeFire, fakeRegistry, flush, modified, periodicHook, quietLogger, type Handler } from "./support.js";

// Fake timers: setTimeout and Date are faked, so the pipeline's default timers and a Date-based
// clock move only with vi.advanceTimersByTimeAsync.
beforeEach(() => {
  vi.useFakeTimers({ now: 1_767_225_600_000 });
});
afterEach(() => {
  vi.useRealTimers();
});

const clock = { now: () => Date.now(), wallNow: () => Date.now() };

function setup(hooks: ResolvedHook[], handlers: Partial<Record<string, Handler>> = {}, extra: Partial<PipelineDeps> = {}) {
  const fake = fakeFire(handlers, () => Date.now());
  const registry = fakeRegistry(hooks);
  const ticks: PeriodicTickReport[] = [];
  const reevaluations: ContextReevaluation[] = [];
  const logger = quietLogger();
  const pipeline = createPipeline({
    fire: fake.fire,
    periodicHooks: registry.periodicHooks,
    onRegistryChange: registry.onRegistryChange,
    conflictStrategy: "most_restrictive",
    clock,
    logger,
    onPeriodicTick: (r) => ticks.push(r),
    onContextReevaluated: (n) => reevaluations.push(n),
    ...extra,
  });
  const opened = Date.now();
  pipeline.open({ session_id: "s1", context: { v: 0 }, constitution: baseConstitution });
  const periodicCalls = () => fake.calls.filter((c) => c.type === "periodic");
  return { pipeline, calls: fake.calls, periodicCalls, registry, ticks, reevaluations, logger, opened };
}

const hookOf = (c: FireCall) => {
  expect(c.input.hooks).toHaveLength(1);
  return c.input.hooks![0]!;
};

const advance = async (ms: number) => {
  await vi.advanceTimersByTimeAsync(ms);
  await flush();
};

describe("periodic scheduler", () => {
  test("a hook fires every interval_ms after open, with actual elapsed_ms, its interval and a 1-based tick_count", async () => {
    const { periodicCalls, opened } = setup([periodicHook("refresh", 5000)]);
    await advance(4999);
    expect(periodicCalls()).toHaveLength(0);
    await advance(1);
    await advance(10_000);
    const calls = periodicCalls();
    expect(calls.map((c) => c.at - opened)).toEqual([5000, 10_000, 15_000]);
    expect(calls.map((c) => c.input.event)).toEqual([
      { elapsed_ms: 5000, interval_ms: 5000, tick_count: 1 },
      { elapsed_ms: 5000, interval_ms: 5000, tick_count: 2 },
      { elapsed_ms: 5000, interval_ms: 5000, tick_count: 3 },
    ]);
    expect(calls[0]!.input).toMatchObject({ session: { id: "s1" }, context: { v: 0 }, constitution: baseConstitution, hooks: [{ name: "refresh", scope: "deployment" }] });
  });

  test("an interval below one second is clamped: never more than one fire per second (spec §3.6)", async () => {
    const { periodicCalls } = setup([periodicHook("fast", 10), periodicHook("zero", 0), periodicHook("junk", Number.NaN)]);
    await advance(10_000);
    const byHook = (name: string) => periodicCalls().filter((c) => hookOf(c).name === name);
    expect(byHook("fast")).toHaveLength(10);
    expect(byHook("zero")).toHaveLength(10);
    for (const name of ["fast", "zero"]) {
      const at = byHook(name).map((c) => c.at);
      for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(1000);
      expect(byHook(name).every((c) => c.input.event.interval_ms === 1000)).toBe(true);
    }
    // A non-numeric interval falls back to the 60 s default.
    expect(byHook("junk")).toHaveLength(0);
  });

  test("each hook keeps its own interval and each tick runs only the hook that is due", async () => {
    const { periodicCalls } = setup([periodicHook("every-1s", 1000), periodicHook("every-3s", 3000)]);
    await advance(9000);
    const names = periodicCalls().map((c) => (c.input.hooks ?? []).map((h) => h.name));
    expect(names.filter((n) => n[0] === "every-1s")).toHaveLength(9);
    expect(names.filter((n) => n[0] === "every-3s")).toHaveLength(3);
    expect(names.every((n) => n.length === 1)).toBe(true);
  });

  test("a tick never interrupts an operation in progress: it waits for its turn, and elapsed_ms is the actual time", async () => {
    const gate = deferred();
    const { pipeline, calls, opened } = setup([periodicHook("tick", 1000)], {
      post_select: async () => (await gate.promise, {}),
    });
    const adapt = pipeline.adapt("s1", { selected: baseConstitution, candidates: [], selection_rationale: "r", selection_algorithm: "a" });
    await advance(2500);
    expect(calls.map((c) => c.type)).toEqual(["post_select"]);
    gate.resolve();
    await adapt;
    await flush();
    expect(calls.map((c) => c.type)).toEqual(["post_select", "pre_inject", "periodic"]);
    const tick = calls[2]!;
    expect(tick.at - opened).toBe(2500);
    expect(tick.input.event).toEqual({ elapsed_ms: 2500, interval_ms: 1000, tick_count: 1 });
  });

  test("ticks do not pile up behind a long operation: one waits, the next comes a full interval after it started", async () => {
    const gate = deferred();
    const { pipeline, periodicCalls, opened } = setup([periodicHook("tick", 1000)], { on_violation: async () => (await gate.promise, {}) });
    const violation = pipeline.violation("s1", { output: "o", violated_rules: [], severity: "minor", violation_evidence: "e" });
    await advance(10_500);
    gate.resolve();
    await violation;
    await flush();
    expect(periodicCalls()).toHaveLength(1);
    await advance(999);
    expect(periodicCalls()).toHaveLength(1);
    await advance(1);
    expect(periodicCalls().map((c) => c.at - opened)).toEqual([10_500, 11_500]);
    expect(periodicCalls()[1]!.input.event).toEqual({ elapsed_ms: 1000, interval_ms: 1000, tick_count: 2 });
  });

  test("a slow periodic chain is not re-entered: consecutive fires of a hook start at least interval_ms apart", async () => {
    let release = deferred();
    const { periodicCalls, opened } = setup([periodicHook("slow", 1000)], { periodic: async () => (await release.promise, {}) });
    await advance(1000); // tick 1 starts and hangs
    await advance(3000);
    expect(periodicCalls()).toHaveLength(1);
    const first = release;
    release = deferred();
    first.resolve();
    await flush();
    // Tick 2 was queued when its timer expired at 2000 and starts as soon as tick 1 finished.
    expect(periodicCalls().map((c) => c.at - opened)).toEqual([1000, 4000]);
    release.resolve();
  });

  test("modify triggers context re-evaluation: the session context becomes the modified one and the caller is notified", async () => {
    const { pipeline, ticks, reevaluations, calls } = setup([periodicHook("refresh", 1000)], {
      periodic: (input) => modified({ context: { v: input.event.tick_count } }, "refresh")(input),
    });
    await advance(1000);
    expect(pipeline.get("s1")!.context).toEqual({ v: 1 });
    expect(reevaluations).toHaveLength(1);
    expect(reevaluations[0]).toMatchObject({ session_id: "s1", hook: "refresh", scope: "deployment", previous_context: { v: 0 }, context: { v: 1 } });
    expect(ticks[0]).toMatchObject({ tick_count: 1, context_reevaluated: true });
    await advance(1000);
    expect(calls.at(-1)!.input.context).toEqual({ v: 1 });
    await pipeline.adapt("s1", { selected: baseConstitution, candidates: [], selection_rationale: "r", selection_algorithm: "a" });
    expect(calls.find((c) => c.type === "post_select")!.input.context).toEqual({ v: 2 });
  });

  test("continue, an abort (treated as continue by the chain) and a constitution-only modify leave the session as it was", async () => {
    const outcomes: Array<Handler> = [
      () => ({ hook_results: [execution("p", "continue")] }),
      () => ({ hook_results: [execution("p", "continue", { reason: "periodic abort treated as continue (spec §3.6): x" })] }),
      modified({ constitution: { id: "sneaky", rules: [] } }, "p"),
    ];
    let i = 0;
    const { pipeline, reevaluations, ticks } = setup([periodicHook("p", 1000)], { periodic: (input) => outcomes[i++]!(input) });
    await advance(3000);
    expect(ticks).toHaveLength(3);
    expect(ticks.every((t) => !t.context_reevaluated)).toBe(true);
    expect(reevaluations).toHaveLength(0);
    expect(pipeline.get("s1")).toMatchObject({ context: { v: 0 }, constitution: baseConstitution });
  });

  test("ticks stop when the session closes, including a tick already waiting for its turn", async () => {
    const gate = deferred();
    const { pipeline, periodicCalls } = setup([periodicHook("tick", 1000)], { on_violation: async () => (await gate.promise, {}) });
    const violation = pipeline.violation("s1", { output: "o", violated_rules: [], severity: "minor", violation_evidence: "e" });
    await advance(1500); // a tick is now queued behind the violation
    const closed = pipeline.close("s1");
    gate.resolve();
    await violation;
    await closed;
    await advance(10_000);
    expect(periodicCalls()).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
  });

  test("registry changes reschedule: new hooks start, removed and disabled hooks stop, re-timed hooks move", async () => {
    const { registry, periodicCalls, pipeline, opened } = setup([periodicHook("a", 1000), periodicHook("b", 2000)]);
    await advance(2000); // a@1000 a@2000 b@2000
    registry.set([periodicHook("a", 1000, { enabled: false }), periodicHook("b", 5000), periodicHook("c", 1000, { scope: "session", session_id: "s1" })]);
    await flush();
    await advance(5000); // now = +7000
    const seen = periodicCalls().map((c) => `${hookOf(c).scope}/${hookOf(c).name}@${c.at - opened}`);
    expect(seen.filter((s) => s.startsWith("deployment/a"))).toEqual(["deployment/a@1000", "deployment/a@2000"]);
    // b re-timed to 5000: measured from its previous fire at 2000.
    expect(seen.filter((s) => s.startsWith("deployment/b"))).toEqual(["deployment/b@2000", "deployment/b@7000"]);
    expect(seen.filter((s) => s.startsWith("session/c"))).toEqual(["session/c@3000", "session/c@4000", "session/c@5000", "session/c@6000", "session/c@7000"]);
    expect(pipeline.get("s1")!.periodic).toEqual([
      { hook: "b", scope: "deployment", interval_ms: 5000, tick_count: 2, skipped: 0 },
      { hook: "c", scope: "session", interval_ms: 1000, tick_count: 5, skipped: 0 },
    ]);
  });

  test("a burst of registry events is one reschedule pass", async () => {
    const periodicHooks = vi.fn((_id: string) => [periodicHook("a", 1000)]);
    const registry = fakeRegistry();
    const { pipeline } = { pipeline: createPipeline({ fire: fakeFire().fire, periodicHooks, onRegistryChange: registry.onRegistryChange, conflictStrategy: "reject", clock, logger: quietLogger() }) };
    pipeline.open({ session_id: "s", context: {}, constitution: baseConstitution });
    expect(periodicHooks).toHaveBeenCalledTimes(1);
    for (let i = 0; i < 5; i++) registry.set([]);
    await flush();
    expect(periodicHooks).toHaveBeenCalledTimes(2);
  });

  test("a failing periodic chain is reported and logged; the schedule goes on", async () => {
    let fail = true;
    const { ticks, logger, periodicCalls } = setup([periodicHook("p", 1000)], {
      periodic: () => {
        if (fail) throw new Error("sandbox gone");
        return {};
      },
    });
    await advance(1000);
    expect(ticks[0]).toMatchObject({ tick_count: 1, context_reevaluated: false, error: expect.objectContaining({ message: "sandbox gone" }) });
    expect(logger.warnings.length).toBeGreaterThan(0);
    fail = false;
    await advance(1000);
    expect(periodicCalls()).toHaveLength(2);
    expect(ticks[1]).toMatchObject({ tick_count: 2, result: expect.objectContaining({ status: "completed" }) });
  });

  test("a fire that ignores the hook filter is detected and logged once", async () => {
    const { logger } = setup([periodicHook("p", 1000)], {
      periodic: () => ({ hook_results: [execution("p", "continue"), execution("other", "continue")] }),
    });
    await advance(3000);
    expect(logger.warnings.filter((w) => String(w[1]).includes("ignores `hooks`"))).toHaveLength(1);
  });

  test("the registry subscription lives only while sessions are open", async () => {
    const { registry, pipeline } = setup([]);
    expect(registry.listenerCount).toBe(1);
    pipeline.open({ session_id: "s2", context: {}, constitution: baseConstitution });
    expect(registry.listenerCount).toBe(1);
    await pipeline.closeAll();
    expect(registry.listenerCount).toBe(0);
  });

  test("the default timers do not keep the process alive", async () => {
    vi.useRealTimers();
    const spy = vi.spyOn(globalThis, "setTimeout");
    try {
      const { pipeline } = setup([periodicHook("p", 60_000)]);
      const handle = spy.mock.results.at(-1)!.value as NodeJS.Timeout;
      expect(handle.hasRef()).toBe(false);
      await pipeline.closeAll();
    } finally {
      spy.mockRestore();
    }
  });
});
