/**
 * Conformance of the adaptation pipeline (spec §3, §5.2; DESIGN §4.6) against the real runtime
 * (createRuntime with the in-process vm backend): real bundles, real chains, the pipeline wired to
 * the runtime's public API. Timers are manual (deps.setTimer/clock), so periodic cases run in
 * milliseconds and deterministically while the chains themselves run for real.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, type BundleSource, type Constitution, type LifecycleEventMap, type ResolvedHook, type Runtime } from "../../src/index.js";
import { createPipeline, type ContextReevaluation, type PeriodicTickReport, type Pipeline, type PipelineDeps } from "../../src/pipeline/index.js";
import { testBundle, withBundles as withBundlesOn } from "../support/bundles.js";
import { createVmBackend } from "../support/vm-backend.js";
import { manualTime } from "../unit/pipeline/support.js";

let rt: Runtime;

beforeAll(async () => {
  rt = await createRuntime({ backend: createVmBackend(), registrationsPerMinute: 100_000, sessionHookAllowlist: ["sess-periodic/session_tick"] });
});
afterAll(async () => {
  await rt?.close();
});

let bundleSeq = 0;
const uniq = (base: string) => `${base}-${++bundleSeq}`;

const withBundles = <T>(sources: BundleSource[], body: () => Promise<T>) => withBundlesOn(rt, sources, body);

function collect<K extends keyof LifecycleEventMap>(name: K): { seen: Array<LifecycleEventMap[K]>; stop: () => void } {
  const seen: Array<LifecycleEventMap[K]> = [];
  const stop = rt.on(name, (payload) => seen.push(payload));
  return { seen, stop: () => void stop() };
}

type Fire = PipelineDeps["fire"];

/** A pipeline wired to the runtime's public API, with manual timers and tick observers. */
async function wire(options: { conflictStrategy?: PipelineDeps["conflictStrategy"]; violationDefault?: PipelineDeps["violationDefault"]; wrapFire?: (fire: Fire) => Fire } = {}) {
  const time = manualTime();
  const ticks: PeriodicTickReport[] = [];
  const reevaluations: ContextReevaluation[] = [];
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  // The runtime honours `hooks` (one periodic hook per timer), so the pipeline drives it directly.
  const fire: Fire = (type, input) => rt.fire(type, input);
  // The pipeline reads a session's periodic hooks synchronously; the runtime's `hooks.chain` answers
  // asynchronously (it may check the session in a store): a copy, read again on every registry
  // change before the pipeline hears of it. `undefined`: the deployment's periodic chain.
  const periodic = new Map<string | undefined, readonly ResolvedHook[]>();
  const refresh = async (sessionId?: string) => {
    if (sessionId !== undefined) periodic.set(sessionId, await rt.hooks.chain("periodic", sessionId));
    for (const id of periodic.keys()) periodic.set(id, await rt.hooks.chain("periodic", id));
  };
  periodic.set(undefined, []);
  await refresh();
  const pipeline: Pipeline = createPipeline({
    fire: options.wrapFire ? options.wrapFire(fire) : fire,
    periodicHooks: (id) => periodic.get(id) ?? periodic.get(undefined) ?? [],
    onRegistryChange: (listener) => {
      const changed = (event: { session_id?: string }) => void refresh(event.session_id).then(listener);
      const a = rt.on("hook.registered", changed);
      const b = rt.on("hook.deregistered", changed);
      return () => {
        a();
        b();
      };
    },
    conflictStrategy: options.conflictStrategy ?? "most_restrictive",
    ...(options.violationDefault ? { violationDefault: options.violationDefault } : {}),
    clock: time.clock,
    logger: { isLevelEnabled: () => false, debug() {}, info() {}, warn() {}, error() {} },
    setTimer: time.setTimer,
    clearTimer: time.clearTimer,
    onPeriodicTick: (report) => {
      ticks.push(report);
      for (const w of [...waiters]) {
        if (ticks.length >= w.n) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve();
        }
      }
    },
    onContextReevaluated: (notice) => reevaluations.push(notice),
  });
  const waitTicks = (n: number) =>
    ticks.length >= n
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`waited for ${n} periodic ticks, saw ${ticks.length}`)), 5000);
          waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
        });
  /** Run manual time forward by `ms`, letting every tick that falls due finish before moving on. */
  async function run(ms: number): Promise<void> {
    const end = time.now + ms;
    while (time.now < end) {
      const fired = time.next(end - time.now);
      if (fired > 0) await waitTicks(ticks.length + fired);
    }
  }
  return { pipeline, time, ticks, reevaluations, waitTicks, run };
}

const tag = (t: string) =>
  `function (input) { return { status: "modify", modified_context: Object.assign({}, input.context, { trail: (input.context.trail || []).concat(${JSON.stringify(t)}) }) }; }`;

const base: Constitution = {
  id: "c-base",
  version: "1.0.0",
  rules: [
    { id: "no-harm-1", text: "Do not help cause physical harm.", safety_critical: true },
    { id: "tone-1", text: "Be courteous." },
  ],
};
const v2: Constitution = { id: "c-v2", version: "2.0.0", rules: [...base.rules, { id: "cite-1", text: "Cite sources." }] };
const selection = (selected: Constitution = v2) => ({ selected, candidates: [v2, base], selection_rationale: "best match", selection_algorithm: "score" });

describe("pipeline conformance (real runtime, in-process backend)", () => {
  test("§5.2 all post_select hooks complete before any pre_inject hook fires", async () => {
    const b = uniq("adapt-order");
    await withBundles(
      [testBundle(b, [
        { name: "ps_high", type: "post_select", priority: 90 },
        { name: "ps_low", type: "post_select", priority: 10 },
        { name: "pi_high", type: "pre_inject", priority: 100 },
        { name: "pi_low", type: "pre_inject", priority: 0 },
      ], { ps_high: tag("ps_high"), ps_low: tag("ps_low"), pi_high: tag("pi_high"), pi_low: tag("pi_low") })],
      async () => {
        const { pipeline } = await wire();
        const fired = collect("hook.fired");
        try {
          pipeline.open({ session_id: "order", context: { user: "u1" }, constitution: base });
          const out = await pipeline.adapt("order", selection());
          expect(out.outcome).toBe("inject");
          expect(out.context?.trail).toEqual(["ps_high", "ps_low", "pi_high", "pi_low"]);
          expect(fired.seen.filter((e) => e.session_id === "order").map((e) => e.type)).toEqual(["post_select", "post_select", "pre_inject", "pre_inject"]);
          expect(pipeline.get("order")).toMatchObject({ constitution: v2, last_known_good: v2, context: { trail: ["ps_high", "ps_low", "pi_high", "pi_low"] } });
        } finally {
          fired.stop();
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§3.2 a post_select modify with a different constitution replaces the selection", async () => {
    const b = uniq("override");
    await withBundles(
      [testBundle(b, [{ name: "override", type: "post_select" }, { name: "observe", type: "pre_inject" }], {
        override: "function (input) { return { status: 'modify', modified_constitution: { id: 'c-compliance', version: '9', rules: input.constitution.rules.slice(0, 1) } }; }",
        observe: "function (input) { return { status: 'continue', annotations: { id: input.constitution.id, raw: input.event.raw_constitution } }; }",
      })],
      async () => {
        const { pipeline } = await wire();
        try {
          pipeline.open({ session_id: "override", context: {}, constitution: base });
          const out = await pipeline.adapt("override", { ...selection(), raw_constitution: "the caller's text of c-v2" });
          expect(out.outcome).toBe("inject");
          expect(out.constitution?.id).toBe("c-compliance");
          expect(out.trace[1]!.hook_results[0]!.annotations).toEqual({ id: "c-compliance", raw: "Do not help cause physical harm." });
          expect(pipeline.get("override")!.last_known_good.id).toBe("c-compliance");
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§3.2 a post_select abort cancels the entire adaptation cycle", async () => {
    const b = uniq("cancel");
    await withBundles(
      [testBundle(b, [{ name: "veto", type: "post_select" }, { name: "inject_log", type: "pre_inject" }], {
        veto: "function () { return { status: 'abort', reason: 'selection not compliant' }; }",
        inject_log: tag("inject_log"),
      })],
      async () => {
        const { pipeline } = await wire();
        const fired = collect("hook.fired");
        try {
          pipeline.open({ session_id: "cancel", context: { user: "u1" }, constitution: base });
          const out = await pipeline.adapt("cancel", selection());
          expect(out).toMatchObject({ outcome: "cancelled", reason: "selection not compliant", aborted_by: "veto", constitution: null, context: null, session_constitution: base });
          expect(out.trace.map((t) => t.type)).toEqual(["post_select"]);
          expect(fired.seen.filter((e) => e.session_id === "cancel").map((e) => e.hook)).toEqual(["veto"]);
          expect(pipeline.get("cancel")).toMatchObject({ constitution: base, last_known_good: base, context: { user: "u1" } });
        } finally {
          fired.stop();
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§3.1 an abort of pre_inject means injection does not proceed", async () => {
    const b = uniq("block");
    await withBundles(
      [testBundle(b, [
        { name: "pii_gate", type: "pre_inject", priority: 90, condition: { field: "context.dimensions.data_sensitivity", operator: "gte", value: 7 } },
        { name: "after_gate", type: "pre_inject", priority: 10 },
      ], {
        pii_gate: "function () { return { status: 'abort', reason: 'PII present' }; }",
        after_gate: tag("after_gate"),
      })],
      async () => {
        const { pipeline } = await wire();
        try {
          pipeline.open({ session_id: "block", context: { dimensions: { data_sensitivity: 8 } }, constitution: base });
          const out = await pipeline.adapt("block", selection());
          expect(out).toMatchObject({ outcome: "blocked", reason: "PII present", aborted_by: "pii_gate", constitution: null, context: null, session_constitution: base });
          expect(out.trace[1]!.hook_results.map((h) => h.hook)).toEqual(["pii_gate"]);
          expect(pipeline.get("block")).toMatchObject({ constitution: base, last_known_good: base, context: { dimensions: { data_sensitivity: 8 } } });
          // The same selection with a harmless context goes through: the gate, not the pipeline, blocked it.
          const ok = await pipeline.adapt("block", { ...selection(), context: { dimensions: { data_sensitivity: 2 } } });
          expect(ok.outcome).toBe("inject");
          expect(pipeline.get("block")!.last_known_good).toEqual(v2);
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§3.3 an aborted transition keeps the previous state", async () => {
    const b = uniq("transition");
    await withBundles(
      [testBundle(b, [
        { name: "child_gate", type: "on_transition", priority: 90, condition: { field: "event.new_state", operator: "eq", value: "unrestricted" } },
        { name: "observe", type: "on_transition", priority: 10 },
      ], {
        child_gate: "function () { return { status: 'abort', reason: 'a child is present' }; }",
        observe: "function (input) { return { status: 'continue', annotations: { from: input.event.previous_state, to: input.event.new_state, session_state: input.session.state } }; }",
      })],
      async () => {
        const { pipeline } = await wire();
        try {
          pipeline.open({ session_id: "fsm", context: {}, constitution: base, state: "child-present" });
          const blocked = await pipeline.transition("fsm", { to: "unrestricted", trigger: "user_request" });
          expect(blocked).toMatchObject({ outcome: "blocked", state: "child-present", reason: "a child is present", aborted_by: "child_gate" });
          expect(pipeline.get("fsm")!.state).toBe("child-present");
          const moved = await pipeline.transition("fsm", { to: "professional", trigger: "meeting" });
          expect(moved).toMatchObject({ outcome: "transitioned", state: "professional", previous_state: "child-present" });
          // The hooks fired before the state changed: they saw the old state as the session's.
          expect(moved.trace[0]!.hook_results.map((h) => h.outcome)).toEqual(["skipped_predicate", "ok"]);
          expect(moved.trace[0]!.hook_results[1]!.annotations).toEqual({ from: "child-present", to: "professional", session_state: "child-present" });
          expect(pipeline.get("fsm")!.state).toBe("professional");
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§5.2 on_transition fires before any adaptation triggered by the transition", async () => {
    const b = uniq("transition-adapt");
    await withBundles(
      [testBundle(b, [
        { name: "on_t", type: "on_transition", priority: 0 },
        { name: "forbid", type: "on_transition", priority: 100, condition: { field: "event.new_state", operator: "eq", value: "forbidden" } },
        { name: "on_ps", type: "post_select", priority: 100 },
        { name: "on_pi", type: "pre_inject", priority: 100 },
      ], {
        on_t: tag("on_transition"),
        forbid: "function () { return { status: 'abort', reason: 'no' }; }",
        on_ps: tag("post_select"),
        on_pi: tag("pre_inject"),
      })],
      async () => {
        const { pipeline } = await wire();
        const fired = collect("hook.fired");
        try {
          pipeline.open({ session_id: "ta", context: {}, constitution: base, state: "professional" });
          const out = await pipeline.transition("ta", { to: "personal", trigger: "evening", adapt: selection() });
          expect(out.outcome).toBe("transitioned");
          expect(out.adaptation).toMatchObject({ outcome: "inject", constitution: v2, context: { trail: ["on_transition", "post_select", "pre_inject"] } });
          expect(fired.seen.filter((e) => e.session_id === "ta").map((e) => e.type)).toEqual(["on_transition", "post_select", "pre_inject"]);
          fired.seen.length = 0;
          const blocked = await pipeline.transition("ta", { to: "forbidden", trigger: "x", adapt: selection(base) });
          expect(blocked.outcome).toBe("blocked");
          expect(blocked.adaptation).toBeUndefined();
          expect(fired.seen.filter((e) => e.session_id === "ta").map((e) => e.type)).toEqual(["on_transition"]);
          expect(pipeline.get("ta")).toMatchObject({ state: "personal", constitution: v2 });
        } finally {
          fired.stop();
          await pipeline.closeAll();
        }
      },
    );
  });

  const ruleA = { id: "a-2", text: "Share personal anecdotes." };
  const ruleB = { id: "b-1", text: "Never share personal information.", safety_critical: true };
  const consA: Constitution = { id: "c-a", rules: [{ id: "a-1", text: "Be brief." }, ruleA] };
  const consB: Constitution = { id: "c-b", rules: [ruleB] };
  const conflictInput = (severity: "warning" | "error" | "critical" = "error") => ({
    constitutions: [consA, consB],
    conflicting_rules: [{ rule_a: ruleA, rule_b: ruleB, conflict_type: "contradiction" as const }],
    conflict_severity: severity,
  });

  test("§3.4 on_conflict fires before the default strategy", async () => {
    const b = uniq("conflict");
    await withBundles(
      [testBundle(b, [
        // Spec §9.4: merge the winners into input.constitution; unresolvable (critical) ⇒ no resolution here.
        { name: "org_resolver", type: "on_conflict", priority: 80, condition: { field: "event.conflict_severity", operator: "neq", value: "critical" } },
        { name: "observer", type: "on_conflict", priority: 10 },
      ], {
        // The safety-critical side wins (spec §8.2.4: a resolution may not drop a safety-critical rule).
        org_resolver: "function (input) { var winners = input.event.conflicting_rules.map(function (c) { return c.rule_b.safety_critical ? c.rule_b : c.rule_a; }); return { status: 'modify', modified_constitution: Object.assign({}, input.constitution, { id: 'org-resolved', rules: input.constitution.rules.concat(winners) }) }; }",
        observer: "function (input) { return { status: 'continue', annotations: { saw: input.constitution.id, rules: input.constitution.rules.map(function (r) { return r.id; }), constitutions: input.event.constitutions.length } }; }",
      })],
      async () => {
        // `reject` as default: had it run first, every conflict would fail.
        const { pipeline } = await wire({ conflictStrategy: "reject" });
        try {
          pipeline.open({ session_id: "cf", context: {}, constitution: base });
          const resolved = await pipeline.conflict("cf", conflictInput("error"));
          expect(resolved).toMatchObject({ outcome: "resolved", strategy: "hook" });
          expect(resolved.constitution.rules.map((r) => r.id)).toEqual(["a-1", "b-1"]);
          // The later hook saw the resolver's constitution: the chain ran, then no default was applied.
          expect(resolved.trace[0]!.hook_results[1]!.annotations).toEqual({ saw: "org-resolved", rules: ["a-1", "b-1"], constitutions: 2 });
          const unresolved = await pipeline.conflict("cf", conflictInput("critical"));
          expect(unresolved).toMatchObject({ outcome: "failed", strategy: "reject" });
          // The hooks ran first, on the composition base (the rules in no conflict), and resolved nothing.
          expect(unresolved.trace[0]!.hook_results.map((h) => [h.hook, h.outcome])).toEqual([["org_resolver", "skipped_predicate"], ["observer", "ok"]]);
          expect(unresolved.trace[0]!.hook_results[1]!.annotations).toEqual({ saw: "composed:c-a+c-b", rules: ["a-1"], constitutions: 2 });
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§3.4 with no resolving hook the runtime applies the configured default strategy", async () => {
    const b = uniq("conflict-default");
    await withBundles(
      [testBundle(b, [{ name: "note", type: "on_conflict" }], { note: "function () { return { status: 'continue', annotations: { noted: true } }; }" })],
      async () => {
        const restrictive = await wire({ conflictStrategy: "most_restrictive" });
        const priority = await wire({ conflictStrategy: "highest_priority" });
        try {
          restrictive.pipeline.open({ session_id: "mr", context: {}, constitution: base });
          const out = await restrictive.pipeline.conflict("mr", conflictInput());
          expect(out).toMatchObject({ outcome: "default", strategy: "most_restrictive", dropped_rules: ["a-2"] });
          expect(out.constitution.rules.map((r) => r.id)).toEqual(["a-1", "b-1"]);
          expect(out.trace[0]!.hook_results[0]!.annotations).toEqual({ noted: true });
          priority.pipeline.open({ session_id: "hp", context: {}, constitution: base });
          const ranked = { ...conflictInput(), constitutions: [{ ...consA, priority: 1 }, { ...consB, priority: 7 }] };
          expect(await priority.pipeline.conflict("hp", ranked)).toMatchObject({ outcome: "default", strategy: "highest_priority", constitution: { id: "c-b" } });
        } finally {
          await restrictive.pipeline.closeAll();
          await priority.pipeline.closeAll();
        }
      },
    );
  });

  test("§3.4 abort falls back to the last known-good constitution", async () => {
    const b = uniq("conflict-abort");
    await withBundles(
      [testBundle(b, [{ name: "escalate", type: "on_conflict", condition: { field: "event.conflict_severity", operator: "eq", value: "critical" } }], {
        escalate: "function (input) { return { status: 'abort', reason: 'Unresolvable conflict between ' + input.event.conflicting_rules[0].rule_a.id + ' and ' + input.event.conflicting_rules[0].rule_b.id + '; escalated to governance' }; }",
      })],
      async () => {
        const { pipeline } = await wire({ conflictStrategy: "most_restrictive" });
        try {
          pipeline.open({ session_id: "lkg", context: {}, constitution: base });
          expect((await pipeline.adapt("lkg", selection())).outcome).toBe("inject"); // last known-good: c-v2
          expect((await pipeline.conflict("lkg", conflictInput("error"))).outcome).toBe("default");
          expect(pipeline.get("lkg")!.constitution.id).toBe("composed:c-a+c-b");
          const out = await pipeline.conflict("lkg", conflictInput("critical"));
          expect(out).toMatchObject({ outcome: "failed", aborted_by: "escalate", reason: "Unresolvable conflict between a-2 and b-1; escalated to governance", constitution: v2 });
          expect(pipeline.get("lkg")).toMatchObject({ constitution: v2, last_known_good: v2 });
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  const violation = { output: "You idiot.", violated_rules: [{ id: "tone-1", text: "Be courteous." }], severity: "major" as const, violation_evidence: "insult" };

  test("§3.5 abort suppresses the output", async () => {
    const b = uniq("suppress");
    await withBundles(
      [testBundle(b, [{ name: "block", type: "on_violation", condition: { field: "event.severity", operator: "in", value: ["major", "critical"] } }], {
        block: "function (input) { return { status: 'abort', reason: 'blocked: ' + input.event.violated_rules[0].id }; }",
      })],
      async () => {
        const { pipeline } = await wire();
        try {
          pipeline.open({ session_id: "sup", context: {}, constitution: base });
          const out = await pipeline.violation("sup", violation);
          expect(out).toMatchObject({ outcome: "suppress", reason: "blocked: tone-1", aborted_by: "block" });
          expect(out.output).toBeNull(); // present and null: nothing may be delivered
          expect(JSON.stringify(out)).not.toContain("You idiot."); // the violating text is nowhere in the result
          // A minor violation is not the hook's business: the default (deliver) applies.
          expect(await pipeline.violation("sup", { ...violation, severity: "minor" })).toMatchObject({ outcome: "deliver", output: "You idiot." });
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§3.5 modify returns a retry directive with the modified context; retries are counted (spec §9.5)", async () => {
    const b = uniq("retry");
    await withBundles(
      [testBundle(b, [{ name: "violation_retry_with_strictness", type: "on_violation", priority: 95 }], {
        violation_retry_with_strictness: `function (input) {
          if (input.event.retry_count >= 3) return { status: 'abort', reason: 'Violation persists after 3 retries' };
          var ctx = Object.assign({}, input.context, { strictness_level: Math.min((input.context.strictness_level || 0) + 2, 10) });
          return { status: 'modify', modified_context: ctx, annotations: { action: 'retry_with_strictness', retry_number: input.event.retry_count + 1 } };
        }`,
      })],
      async () => {
        const { pipeline } = await wire();
        try {
          pipeline.open({ session_id: "retry", context: { strictness_level: 3 }, constitution: base });
          let out = await pipeline.violation("retry", violation);
          expect(out).toMatchObject({ outcome: "retry", context: { strictness_level: 5 }, retry_count: 1 });
          expect(out.output).toBeNull();
          expect(pipeline.get("retry")!.context).toEqual({ strictness_level: 3 });
          const levels: unknown[] = [];
          while (out.outcome === "retry") {
            out = await pipeline.violation("retry", { ...violation, retry_count: out.retry_count, context: out.context! });
            levels.push(out.context?.["strictness_level"]);
          }
          expect(levels).toEqual([7, 9, undefined]);
          expect(out).toMatchObject({ outcome: "suppress", retry_count: 3, reason: "Violation persists after 3 retries" });
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§5.2 on_violation fires before any default violation response: a correction preempts the default", async () => {
    const b = uniq("correct");
    await withBundles(
      [testBundle(b, [{ name: "soften", type: "on_violation", condition: { field: "event.severity", operator: "eq", value: "minor" } }], {
        soften: "function (input) { return { status: 'modify', annotations: { corrected_output: input.event.output.replace('idiot', 'friend') } }; }",
      })],
      async () => {
        const { pipeline } = await wire({ violationDefault: "suppress" });
        try {
          pipeline.open({ session_id: "fix", context: {}, constitution: base });
          expect(await pipeline.violation("fix", { ...violation, severity: "minor" })).toMatchObject({ outcome: "corrected", output: "You friend." });
          const fallback = await pipeline.violation("fix", violation);
          expect(fallback.outcome).toBe("suppress");
          expect(fallback.trace[0]!.hook_results[0]!.outcome).toBe("skipped_predicate");
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  const recordTick = "function (input) { return { status: 'continue', annotations: { event: input.event, ctx: input.context } }; }";

  test("§3.6 periodic never fires more often than once per second", async () => {
    const b = uniq("periodic-fast");
    await withBundles(
      [testBundle(b, [{ name: "too_fast", type: "periodic", metadata: { interval_ms: 10 } }], { too_fast: recordTick })],
      async () => {
        const { pipeline, ticks, run } = await wire();
        try {
          pipeline.open({ session_id: "fast", context: {}, constitution: base });
          await run(5500);
          expect(ticks).toHaveLength(5);
          const events = ticks.map((t) => t.result!.hook_results[0]!.annotations!["event"]);
          expect(events).toEqual([1, 2, 3, 4, 5].map((n) => ({ elapsed_ms: 1000, interval_ms: 1000, tick_count: n })));
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§3.6 the interval is per hook: each hook fires at its own interval_ms", async () => {
    const b = uniq("periodic-two");
    await withBundles(
      [testBundle(b, [
        { name: "every_second", type: "periodic", priority: 10, metadata: { interval_ms: 1000 } },
        { name: "every_2500", type: "periodic", priority: 90, metadata: { interval_ms: 2500 } },
      ], { every_second: recordTick, every_2500: recordTick })],
      async () => {
        const { pipeline, ticks, run } = await wire();
        try {
          pipeline.open({ session_id: "two", context: {}, constitution: base });
          await run(5000);
          const ran = ticks.map((t) => t.result!.hook_results.map((h) => h.hook));
          expect(ran.filter((r) => r[0] === "every_second")).toHaveLength(5);
          expect(ran.filter((r) => r[0] === "every_2500")).toHaveLength(2);
          expect(ran.every((r) => r.length === 1)).toBe(true);
          const slow = ticks.filter((t) => t.hook === "every_2500").map((t) => t.result!.hook_results[0]!.annotations!["event"]);
          expect(slow).toEqual([{ elapsed_ms: 2500, interval_ms: 2500, tick_count: 1 }, { elapsed_ms: 2500, interval_ms: 2500, tick_count: 2 }]);
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§3.6 periodic modify triggers context re-evaluation", async () => {
    const b = uniq("periodic-refresh");
    await withBundles(
      [testBundle(b, [
        { name: "context_staleness_check", type: "periodic", metadata: { interval_ms: 60000 } },
        { name: "see_context", type: "pre_inject" },
      ], {
        context_staleness_check: "function (input) { return { status: 'modify', modified_context: Object.assign({}, input.context, { refreshed_tick: input.event.tick_count }), annotations: { staleness_ms: input.event.elapsed_ms } }; }",
        see_context: "function (input) { return { status: 'continue', annotations: { refreshed_tick: input.context.refreshed_tick } }; }",
      })],
      async () => {
        const { pipeline, ticks, reevaluations, run } = await wire();
        try {
          pipeline.open({ session_id: "refresh", context: { user: "u1" }, constitution: base });
          await run(60_000);
          expect(ticks).toHaveLength(1);
          expect(ticks[0]).toMatchObject({ context_reevaluated: true, elapsed_ms: 60_000 });
          expect(reevaluations).toEqual([expect.objectContaining({ session_id: "refresh", hook: "context_staleness_check", previous_context: { user: "u1" }, context: { user: "u1", refreshed_tick: 1 } })]);
          expect(pipeline.get("refresh")!.context).toEqual({ user: "u1", refreshed_tick: 1 });
          // The re-evaluated context is what the next adaptation works with.
          const out = await pipeline.adapt("refresh", selection());
          expect(out.trace[1]!.hook_results[0]!.annotations).toEqual({ refreshed_tick: 1 });
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§3.6 a periodic abort is treated as continue: the session is unchanged and ticks go on", async () => {
    const b = uniq("periodic-abort");
    await withBundles(
      [testBundle(b, [{ name: "grumpy", type: "periodic", metadata: { interval_ms: 1000 } }], { grumpy: "function () { return { status: 'abort', reason: 'stale' }; }" })],
      async () => {
        const { pipeline, ticks, run } = await wire();
        try {
          pipeline.open({ session_id: "grumpy", context: { a: 1 }, constitution: base, state: "s" });
          await run(2000);
          expect(ticks.map((t) => [t.result!.status, t.context_reevaluated])).toEqual([["completed", false], ["completed", false]]);
          expect(pipeline.get("grumpy")).toMatchObject({ context: { a: 1 }, constitution: base, state: "s" });
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§5.2 periodic hooks never interrupt an in-progress chain of another type", async () => {
    const b = uniq("no-interrupt");
    await withBundles(
      [testBundle(b, [
        { name: "tick", type: "periodic", metadata: { interval_ms: 1000 } },
        { name: "ps", type: "post_select" },
        { name: "pi", type: "pre_inject" },
      ], { tick: recordTick, ps: tag("ps"), pi: tag("pi") })],
      async () => {
        const log: string[] = [];
        let firedDuringChain = 0;
        const { pipeline, waitTicks, time } = await wire({
          wrapFire: (fire) => async (type, input) => {
            log.push(`${type} start`);
            // The periodic timer falls due while the post_select chain is running.
            if (type === "post_select") firedDuringChain = time.next(1000);
            const result = await fire(type, input);
            log.push(`${type} end`);
            return result;
          },
        });
        try {
          pipeline.open({ session_id: "busy", context: {}, constitution: base });
          const out = await pipeline.adapt("busy", selection());
          await waitTicks(1);
          expect(firedDuringChain).toBe(1);
          expect(out.outcome).toBe("inject");
          expect(log).toEqual(["post_select start", "post_select end", "pre_inject start", "pre_inject end", "periodic start", "periodic end"]);
        } finally {
          await pipeline.closeAll();
        }
      },
    );
  });

  test("§3.6 periodic ticks stop when the session closes", async () => {
    const b = uniq("periodic-close");
    await withBundles(
      [testBundle(b, [{ name: "tick", type: "periodic", metadata: { interval_ms: 1000 } }], { tick: recordTick })],
      async () => {
        const { pipeline, ticks, run, time } = await wire();
        pipeline.open({ session_id: "closing", context: {}, constitution: base });
        await run(1000);
        expect(ticks).toHaveLength(1);
        await pipeline.close("closing");
        expect(time.pending).toBe(0);
        time.advance(10_000);
        await new Promise((r) => setTimeout(r, 20));
        expect(ticks).toHaveLength(1);
      },
    );
  });

  test("§6.3 registry changes reschedule: hooks installed after open start ticking, removed ones stop", async () => {
    const { pipeline, ticks, run, time } = await wire();
    try {
      pipeline.open({ session_id: "resched", context: {}, constitution: base });
      await run(3000);
      expect(ticks).toHaveLength(0);
      const b = uniq("late-periodic");
      await withBundles([testBundle(b, [{ name: "late", type: "periodic", metadata: { interval_ms: 1000 } }], { late: recordTick })], async () => {
        await new Promise((r) => setTimeout(r, 0)); // the reschedule pass runs in a microtask after the change
        await run(2000);
        expect(ticks.map((t) => [t.hook, t.tick_count])).toEqual([["late", 1], ["late", 2]]);
      });
      await new Promise((r) => setTimeout(r, 0));
      expect(time.pending).toBe(0);
      expect(pipeline.get("resched")!.periodic).toEqual([]);
    } finally {
      await pipeline.closeAll();
    }
  });

  test("§6.1 a session-scope periodic hook ticks only for its own session", async () => {
    await withBundles(
      [testBundle("sess-periodic", [{ name: "session_tick", type: "periodic", scope: "session", metadata: { interval_ms: 1000 } }], { session_tick: recordTick })],
      async () => {
        const { pipeline, ticks, run } = await wire();
        try {
          pipeline.open({ session_id: "mine", context: { who: "mine" }, constitution: base });
          pipeline.open({ session_id: "theirs", context: { who: "theirs" }, constitution: base });
          await rt.sessions.registerHook("mine", { bundle: "sess-periodic", hook: "session_tick" });
          await new Promise((r) => setTimeout(r, 0));
          await run(2000);
          expect(ticks.map((t) => [t.session_id, t.hook, t.scope])).toEqual([["mine", "session_tick", "session"], ["mine", "session_tick", "session"]]);
          expect(ticks[0]!.result!.hook_results[0]!.annotations!["ctx"]).toEqual({ who: "mine" });
        } finally {
          await pipeline.closeAll();
          rt.sessions.close("mine");
        }
      },
    );
  });
});
