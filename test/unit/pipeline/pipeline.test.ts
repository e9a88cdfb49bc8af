import { describe, expect, test } from "vitest";
import type { Constitution } from "../../../src/model/constitution.js";
import { createPipeline, type AdaptInput, type ConflictStrategy, type PipelineDeps } from "../../../src/pipeline/index.js";
import { VcpError } from "../../../src/errors.js";
import { aborted, baseConstitution, deferred, execution, fakeFire, fakeRegistry, flush, modified, quietLogger, type Handler } from "./support.js";

const clock = { now: () => 0, wallNow: () => 1_767_225_600_000 };

function setup(handlers: Partial<Record<string, Handler>> = {}, extra: Partial<PipelineDeps> = {}) {
  const fake = fakeFire(handlers);
  const registry = fakeRegistry();
  const logger = quietLogger();
  const pipeline = createPipeline({
    fire: fake.fire,
    periodicHooks: registry.periodicHooks,
    onRegistryChange: registry.onRegistryChange,
    conflictStrategy: "most_restrictive",
    clock,
    logger,
    ...extra,
  });
  const session = pipeline.open({ session_id: "s1", context: { user: "u1" }, constitution: baseConstitution, state: "professional" });
  return { pipeline, session, calls: fake.calls, handlers: fake.handlers, logger, registry };
}

const v2: Constitution = { id: "c-v2", version: "2", rules: [{ id: "no-harm-1", text: "Do not help cause physical harm.", safety_critical: true }] };
const adaptInput = (extra: Partial<AdaptInput> = {}): AdaptInput => ({
  selected: v2,
  candidates: [v2, baseConstitution],
  selection_rationale: "best match",
  selection_algorithm: "score",
  ...extra,
});

function expectCode(err: unknown, code: string) {
  expect(err).toBeInstanceOf(VcpError);
  expect((err as VcpError).code).toBe(code);
}

describe("sessions", () => {
  test("open generates an id when absent; a duplicate id is SESSION_EXISTS and changes nothing", () => {
    const { pipeline } = setup();
    const generated = pipeline.open({ context: {}, constitution: baseConstitution });
    expect(generated.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(generated.state).toBeNull();
    expect(generated.last_known_good).toEqual(baseConstitution);
    let error: unknown;
    try {
      pipeline.open({ session_id: "s1", context: { other: true }, constitution: v2 });
    } catch (err) {
      error = err;
    }
    expectCode(error, "SESSION_EXISTS");
    expect(pipeline.get("s1")!.context).toEqual({ user: "u1" });
    expect(pipeline.list().map((s) => s.session_id).sort()).toEqual([generated.session_id, "s1"].sort());
  });

  test("open validates at the boundary: the error names the field", () => {
    const { pipeline } = setup();
    expect(() => pipeline.open({ session_id: "x", context: [] as never, constitution: baseConstitution })).toThrow(/^context: must be an object$/);
    expect(() => pipeline.open({ session_id: "x", context: {}, constitution: { id: "k", rules: [{ text: "no id" }] } as never })).toThrow(/^constitution\.rules\[0\]\.id: is required$/);
    expect(() => pipeline.open({ session_id: "", context: {}, constitution: baseConstitution })).toThrow(/session_id/);
    expect(pipeline.get("x")).toBeUndefined();
  });

  test("a session id follows the same rule as the HTTP route's {id}: one the API could not address is refused", () => {
    const { pipeline } = setup();
    for (const id of ["has space", "a/b", "x".repeat(257)]) {
      expect(() => pipeline.open({ session_id: id, context: {}, constitution: baseConstitution })).toThrow(/^session_id: must match \[A-Za-z0-9\._:-\]\{1,256\}$/);
    }
    expect(pipeline.open({ session_id: "tenant-1:chat.42_a", context: {}, constitution: baseConstitution }).session_id).toBe("tenant-1:chat.42_a");
  });

  test("an operation on an unknown or closed session is SESSION_NOT_FOUND", async () => {
    const { pipeline, calls } = setup();
    await pipeline.adapt("nope", adaptInput()).then(
      () => expect.unreachable(),
      (err) => expectCode(err, "SESSION_NOT_FOUND"),
    );
    await pipeline.close("s1");
    expect(pipeline.get("s1")).toBeUndefined();
    await pipeline.transition("s1", { to: "personal", trigger: "t" }).then(
      () => expect.unreachable(),
      (err) => expectCode(err, "SESSION_NOT_FOUND"),
    );
    await expect(pipeline.close("s1")).rejects.toThrow(/not open/);
    expect(calls).toHaveLength(0);
  });

  test("views are frozen copies: mutating the caller's objects or a view cannot change the session", () => {
    const { pipeline } = setup();
    const context = { nested: { a: 1 } };
    const view = pipeline.open({ session_id: "s2", context, constitution: baseConstitution });
    context.nested.a = 2;
    expect(pipeline.get("s2")!.context).toEqual({ nested: { a: 1 } });
    expect(Object.isFrozen(view.context)).toBe(true);
    expect(() => {
      (view.constitution.rules as unknown[]).push({ id: "x", text: "x" });
    }).toThrow();
  });

  test("close waits for operations accepted before it, then forgets the session", async () => {
    const gate = deferred();
    const { pipeline } = setup({ post_select: async () => (await gate.promise, {}) });
    const adapt = pipeline.adapt("s1", adaptInput());
    const closed = pipeline.close("s1");
    let closedYet = false;
    void closed.then(() => (closedYet = true));
    await flush();
    expect(closedYet).toBe(false);
    gate.resolve();
    expect((await adapt).outcome).toBe("inject");
    await closed;
    expect(pipeline.get("s1")).toBeUndefined();
  });
});

describe("adapt", () => {
  test("post_select completes before pre_inject fires, and pre_inject gets post_select's final context and constitution", async () => {
    const log: string[] = [];
    const gate = deferred();
    const replaced: Constitution = { id: "c-compliance", rules: baseConstitution.rules };
    const { pipeline, calls } = setup({
      post_select: async (input) => {
        log.push("post_select start");
        await gate.promise;
        log.push("post_select end");
        return modified({ context: { ...input.context, audited: true }, constitution: replaced })(input);
      },
      pre_inject: () => (log.push("pre_inject start"), {}),
    });
    const pending = pipeline.adapt("s1", adaptInput());
    await flush();
    expect(log).toEqual(["post_select start"]);
    gate.resolve();
    const out = await pending;
    expect(log).toEqual(["post_select start", "post_select end", "pre_inject start"]);
    expect(calls[1]!.input.constitution).toEqual(replaced);
    expect(calls[1]!.input.context).toEqual({ user: "u1", audited: true });
    expect(out).toMatchObject({ outcome: "inject", constitution: replaced, context: { user: "u1", audited: true }, reason: null });
    expect(out.trace.map((t) => t.type)).toEqual(["post_select", "pre_inject"]);
  });

  test("post_select gets the selection as constitution and the candidates, rationale, algorithm and scores as event", async () => {
    const { pipeline, calls } = setup();
    await pipeline.adapt("s1", adaptInput({ scores: { "c-v2": 0.9 } }));
    expect(calls[0]).toMatchObject({
      type: "post_select",
      input: {
        constitution: v2,
        context: { user: "u1" },
        session: { id: "s1", state: "professional" },
        event: { candidates: [v2, baseConstitution], selection_rationale: "best match", selection_algorithm: "score", scores: { "c-v2": 0.9 } },
      },
    });
  });

  test("inject updates the session's context, constitution and last known-good to the chain's final values", async () => {
    const { pipeline } = setup({ pre_inject: modified({ context: { user: "u1", pii: "[redacted]" } }) });
    const out = await pipeline.adapt("s1", adaptInput());
    expect(out.outcome).toBe("inject");
    const view = pipeline.get("s1")!;
    expect(view.constitution).toEqual(v2);
    expect(view.last_known_good).toEqual(v2);
    expect(view.context).toEqual({ user: "u1", pii: "[redacted]" });
  });

  test("a post_select abort cancels the cycle: pre_inject never fires and the session is unchanged", async () => {
    const { pipeline, calls } = setup({ post_select: () => aborted("not compliant", "gate") });
    const before = pipeline.get("s1")!;
    const out = await pipeline.adapt("s1", adaptInput({ context: { user: "u2" } }));
    // Nothing may be injected: the fields a caller injects from are null (issue 11 defect 8).
    expect(out).toMatchObject({ outcome: "cancelled", reason: "not compliant", aborted_by: "gate", constitution: null, context: null, session_constitution: baseConstitution });
    expect(calls.map((c) => c.type)).toEqual(["post_select"]);
    expect(out.trace).toHaveLength(1);
    expect(pipeline.get("s1")).toMatchObject({ constitution: before.constitution, context: before.context, last_known_good: before.last_known_good });
  });

  test("a pre_inject abort blocks injection: the session keeps its constitution, context and last known-good", async () => {
    const { pipeline } = setup({ post_select: modified({ context: { user: "changed" } }), pre_inject: () => aborted("PII present", "pii") });
    const out = await pipeline.adapt("s1", adaptInput());
    expect(out).toMatchObject({ outcome: "blocked", reason: "PII present", aborted_by: "pii", constitution: null, context: null, session_constitution: baseConstitution });
    expect(out.trace.map((t) => t.type)).toEqual(["post_select", "pre_inject"]);
    const view = pipeline.get("s1")!;
    expect(view.constitution).toEqual(baseConstitution);
    expect(view.last_known_good).toEqual(baseConstitution);
    expect(view.context).toEqual({ user: "u1" });
  });

  test("pre_inject's raw_constitution is the caller's text unless post_select replaced the constitution; injection fields default", async () => {
    const replaced: Constitution = { id: "c-r", rules: [{ id: "a", text: "Line A." }, { id: "b", text: "Line B." }] };
    const first = setup();
    await first.pipeline.adapt("s1", adaptInput({ raw_constitution: "caller text", injection_target: "slot-1", injection_format: "prefix" }));
    expect(first.calls[1]!.input.event).toEqual({ injection_target: "slot-1", injection_format: "prefix", raw_constitution: "caller text" });
    const second = setup({ post_select: modified({ constitution: replaced }) });
    await second.pipeline.adapt("s1", adaptInput({ raw_constitution: "caller text" }));
    expect(second.calls[1]!.input.event).toEqual({ injection_target: "system", injection_format: "system_prompt", raw_constitution: "Line A.\nLine B." });
  });

  test("a bad input is rejected naming the field before any chain fires", async () => {
    const { pipeline, calls } = setup();
    await expect(pipeline.adapt("s1", adaptInput({ injection_format: "banner" as never }))).rejects.toThrow(/^injection_format: must be one of/);
    await expect(pipeline.adapt("s1", adaptInput({ selected: { rules: [] } as never }))).rejects.toThrow(/^selected/);
    await expect(pipeline.adapt("s1", adaptInput({ scores: { a: "high" } as never }))).rejects.toThrow(/^scores\.a/);
    expect(calls).toHaveLength(0);
  });

  test("a failing fire rejects the operation, leaves the session unchanged, and the session keeps working", async () => {
    let fail = true;
    const { pipeline } = setup({
      pre_inject: () => {
        if (fail) throw new VcpError("SANDBOX_OVERLOADED", "busy");
        return {};
      },
    });
    await expect(pipeline.adapt("s1", adaptInput())).rejects.toThrow("busy");
    expect(pipeline.get("s1")!.constitution).toEqual(baseConstitution);
    fail = false;
    expect((await pipeline.adapt("s1", adaptInput())).outcome).toBe("inject");
  });
});

describe("serialization", () => {
  test("operations of one session never interleave; other sessions are not held up", async () => {
    const gate = deferred();
    const log: string[] = [];
    const { pipeline } = setup({
      post_select: async (input) => {
        log.push(`${input.session.id} post_select start`);
        if (input.session.id === "s1") await gate.promise;
        log.push(`${input.session.id} post_select end`);
        return {};
      },
      pre_inject: (input) => (log.push(`${input.session.id} pre_inject`), {}),
      on_violation: (input) => (log.push(`${input.session.id} on_violation`), {}),
    });
    pipeline.open({ session_id: "s2", context: {}, constitution: baseConstitution });
    const a = pipeline.adapt("s1", adaptInput());
    const v = pipeline.violation("s1", { output: "o", violated_rules: [], severity: "minor", violation_evidence: "e" });
    const other = pipeline.adapt("s2", adaptInput());
    await other;
    expect(log).toEqual(["s1 post_select start", "s2 post_select start", "s2 post_select end", "s2 pre_inject"]);
    gate.resolve();
    await Promise.all([a, v]);
    expect(log.filter((l) => l.startsWith("s1"))).toEqual(["s1 post_select start", "s1 post_select end", "s1 pre_inject", "s1 on_violation"]);
  });
});

describe("transition", () => {
  test("on_transition fires before the state changes; abort keeps the previous state", async () => {
    const { pipeline, calls } = setup({ on_transition: (input) => (input.event.new_state === "child-present" ? aborted("not allowed", "gate") : {}) });
    const blocked = await pipeline.transition("s1", { to: "child-present", trigger: "camera" });
    expect(blocked).toMatchObject({ outcome: "blocked", state: "professional", previous_state: "professional", reason: "not allowed", aborted_by: "gate" });
    expect(pipeline.get("s1")!.state).toBe("professional");
    const ok = await pipeline.transition("s1", { to: "personal", trigger: "user", metadata: { by: "user" } });
    expect(ok).toMatchObject({ outcome: "transitioned", state: "personal", previous_state: "professional" });
    expect(calls[1]!.input.event).toEqual({ previous_state: "professional", new_state: "personal", trigger: "user", transition_metadata: { by: "user" } });
    expect(calls[1]!.input.session.state).toBe("professional");
    expect(pipeline.get("s1")!.state).toBe("personal");
  });

  test("the first transition of a session without a state has previous_state null", async () => {
    const { pipeline, calls } = setup();
    pipeline.open({ session_id: "fresh", context: {}, constitution: baseConstitution });
    await pipeline.transition("fresh", { to: "adult", trigger: "start" });
    expect(calls[0]!.input.event.previous_state).toBeNull();
  });

  test("a transition adopts the chain's context but ignores a constitution change (only adapt decides injection)", async () => {
    const { pipeline } = setup({ on_transition: modified({ context: { user: "u1", mode: "personal" }, constitution: v2 }) });
    const out = await pipeline.transition("s1", { to: "personal", trigger: "t" });
    expect(out.context).toEqual({ user: "u1", mode: "personal" });
    expect(pipeline.get("s1")).toMatchObject({ context: { user: "u1", mode: "personal" }, constitution: baseConstitution });
  });

  test("a triggered adaptation runs only after on_transition completed, and not at all when the transition is blocked", async () => {
    let block = false;
    const { pipeline, calls } = setup({ on_transition: () => (block ? aborted("no", "gate") : modified({ context: { mode: "personal" } })({} as never)) });
    const out = await pipeline.transition("s1", { to: "personal", trigger: "t", adapt: adaptInput() });
    expect(calls.map((c) => c.type)).toEqual(["on_transition", "post_select", "pre_inject"]);
    expect(calls[1]!.input.context).toEqual({ mode: "personal" });
    expect(out.adaptation).toMatchObject({ outcome: "inject", constitution: v2 });
    block = true;
    const blocked = await pipeline.transition("s1", { to: "work", trigger: "t", adapt: adaptInput({ selected: baseConstitution }) });
    expect(blocked.adaptation).toBeUndefined();
    expect(calls.map((c) => c.type)).toEqual(["on_transition", "post_select", "pre_inject", "on_transition"]);
    expect(pipeline.get("s1")!.constitution).toEqual(v2);
  });

  test("to must be a non-empty string; the adapt part is validated before anything fires", async () => {
    const { pipeline, calls } = setup();
    await expect(pipeline.transition("s1", { to: "", trigger: "t" })).rejects.toThrow(/^to:/);
    // The HTTP route's rules are the runtime's (model/pipeline-input.ts): a long state, a misspelt field.
    await expect(pipeline.transition("s1", { to: "x".repeat(257), trigger: "t" })).rejects.toThrow(/^to: /);
    await expect(pipeline.transition("s1", { to: "x", trigger: "t", metdata: {} } as never)).rejects.toThrow(/^metdata: is not a known field$/);
    await expect(pipeline.transition("s1", { to: "x", trigger: "t", adapt: adaptInput({ candidates: "all" as never }) })).rejects.toThrow(/^adapt\.candidates/);
    expect(calls).toHaveLength(0);
  });
});

describe("conflict", () => {
  const a: Constitution = { id: "a", rules: [{ id: "a1", text: "A1" }, { id: "a2", text: "A2" }], priority: 1 };
  const b: Constitution = { id: "b", rules: [{ id: "b1", text: "B1", safety_critical: true }], priority: 2 };
  const conflicts = [{ rule_a: { id: "a2", text: "A2" }, rule_b: { id: "b1", text: "B1", safety_critical: true }, conflict_type: "contradiction" as const }];
  const input = { constitutions: [a, b], conflicting_rules: conflicts, conflict_severity: "error" as const };

  function conflictSetup(strategy: ConflictStrategy, handler?: Handler) {
    return setup(handler ? { on_conflict: handler } : {}, { conflictStrategy: strategy });
  }

  test("on_conflict gets the composition base, the constitutions and the conflicts; without a resolution the default strategy applies", async () => {
    const { pipeline, calls } = conflictSetup("most_restrictive");
    const out = await pipeline.conflict("s1", input);
    expect(calls[0]!.input.constitution).toMatchObject({ id: "composed:a+b", rules: [{ id: "a1" }] });
    expect(calls[0]!.input.event).toMatchObject({ constitutions: [a, b], conflicting_rules: conflicts, composition_strategy: "most_restrictive", conflict_severity: "error" });
    expect(out).toMatchObject({ outcome: "default", strategy: "most_restrictive", dropped_rules: ["a2"] });
    expect(out.constitution.rules.map((r) => r.id)).toEqual(["a1", "b1"]);
    expect(pipeline.get("s1")!.constitution).toEqual(out.constitution);
    expect(pipeline.get("s1")!.last_known_good).toEqual(baseConstitution);
  });

  test("a modify returning a constitution resolves the conflict and the default strategy is not applied", async () => {
    const mine: Constitution = { id: "org-policy", rules: [{ id: "a1", text: "A1" }, { id: "b1", text: "B1", safety_critical: true }] };
    const { pipeline } = conflictSetup("reject", modified({ constitution: mine }));
    const out = await pipeline.conflict("s1", input);
    expect(out).toMatchObject({ outcome: "resolved", strategy: "hook", constitution: mine });
    expect(pipeline.get("s1")!.constitution).toEqual(mine);
  });

  test("a resolution that drops a safety-critical rule of a constitution being composed is integrity_rejected, whatever the hook was shown", async () => {
    // The hook gets the composition base (a1 only): b1 is in a conflict, so the base leaves it out.
    const dropsFlagged: Constitution = { id: "org-policy", rules: [{ id: "a1", text: "A1" }, { id: "a2", text: "A2" }] };
    const first = conflictSetup("most_restrictive", modified({ constitution: dropsFlagged }));
    const out = await first.pipeline.conflict("s1", input);
    expect(out).toMatchObject({ outcome: "failed", strategy: "hook", constitution: baseConstitution, reason: "integrity_rejected: the resolution drops safety-critical rule b1 of constitution b" });
    expect(first.pipeline.get("s1")!.constitution).toEqual(baseConstitution);

    // A rule the deployment designates safety-critical (not flagged in the constitution): a2.
    const configured = setup({ on_conflict: modified({ constitution: { id: "org-policy", rules: [{ id: "a1", text: "A1" }, { id: "b1", text: "B1", safety_critical: true }] } }) }, { conflictStrategy: "most_restrictive", safetyCriticalRuleIds: ["a2"] });
    expect(await configured.pipeline.conflict("s1", input)).toMatchObject({ outcome: "failed", reason: expect.stringContaining("drops safety-critical rule a2 of constitution a") });

    // Keeping the rule but editing or un-flagging it is no better.
    const unflagged = conflictSetup("most_restrictive", modified({ constitution: { id: "org-policy", rules: [{ id: "a1", text: "A1" }, { id: "b1", text: "B1" }] } }));
    expect(await unflagged.pipeline.conflict("s1", input)).toMatchObject({ outcome: "failed", reason: expect.stringContaining("edits or un-flags safety-critical rule b1") });
  });

  test("default strategies never drop a configured safety-critical rule", async () => {
    // a2 (configured) contradicts b1 (flagged): most_restrictive cannot keep both, so it fails instead of dropping a2.
    const restrictive = setup({}, { conflictStrategy: "most_restrictive", safetyCriticalRuleIds: ["a2"] });
    expect(await restrictive.pipeline.conflict("s1", input)).toMatchObject({ outcome: "failed", strategy: "most_restrictive", reason: expect.stringContaining("safety-critical rules 'a2' and 'b1'") });
    // highest_priority picks b whole, which lacks the configured a1: it fails rather than drop it.
    const priority = setup({}, { conflictStrategy: "highest_priority", safetyCriticalRuleIds: ["a1"] });
    expect(await priority.pipeline.conflict("s1", input)).toMatchObject({ outcome: "failed", strategy: "highest_priority", reason: "highest_priority: constitution b wins, but it drops safety-critical rule a1 of constitution a; no safety-critical rule may be dropped" });
  });

  test("a modify of the context only is no resolution: the default strategy applies", async () => {
    const { pipeline } = conflictSetup("highest_priority", modified({ context: { noted: true } }));
    const out = await pipeline.conflict("s1", input);
    expect(out).toMatchObject({ outcome: "default", strategy: "highest_priority", constitution: b, dropped_rules: ["a1", "a2"] });
    expect(pipeline.get("s1")!.context).toEqual({ noted: true });
  });

  test("abort fails the composition and the session falls back to its last known-good constitution", async () => {
    let abort = false;
    const { pipeline } = conflictSetup("most_restrictive", () => (abort ? aborted("escalated", "org") : {}));
    await pipeline.adapt("s1", adaptInput()); // last known-good becomes v2
    await pipeline.conflict("s1", input); // current becomes the composition
    expect(pipeline.get("s1")!.constitution.id).toBe("composed:a+b");
    abort = true;
    const out = await pipeline.conflict("s1", input);
    expect(out).toMatchObject({ outcome: "failed", constitution: v2, reason: "escalated", aborted_by: "org", dropped_rules: [] });
    expect(pipeline.get("s1")!.constitution).toEqual(v2);
  });

  test("the reject strategy, and an unresolvable most_restrictive conflict, fail and fall back", async () => {
    const rejecting = conflictSetup("reject");
    expect(await rejecting.pipeline.conflict("s1", input)).toMatchObject({ outcome: "failed", strategy: "reject", constitution: baseConstitution, aborted_by: null });
    const strict = conflictSetup("most_restrictive");
    const sc = { constitutions: [{ id: "x", rules: [{ id: "x1", text: "X", safety_critical: true }] }, b], conflict_severity: "critical" as const,
      conflicting_rules: [{ rule_a: { id: "x1", text: "X" }, rule_b: { id: "b1", text: "B1" }, conflict_type: "contradiction" as const }] };
    const out = await strict.pipeline.conflict("s1", sc);
    expect(out).toMatchObject({ outcome: "failed", strategy: "most_restrictive", constitution: baseConstitution, reason: expect.stringContaining("safety-critical") });
  });

  test("conflict input is validated", async () => {
    const { pipeline, calls } = conflictSetup("most_restrictive");
    await expect(pipeline.conflict("s1", { ...input, constitutions: [] })).rejects.toThrow(/^constitutions: must hold at least 1/);
    await expect(pipeline.conflict("s1", { ...input, conflict_severity: "fatal" as never })).rejects.toThrow(/^conflict_severity/);
    await expect(pipeline.conflict("s1", { ...input, conflicting_rules: [{ rule_a: { id: "a" } }] as never })).rejects.toThrow(/^conflicting_rules\[0\]\.rule_b: is required$/);
    expect(calls).toHaveLength(0);
  });
});

describe("violation", () => {
  const input = { output: "rude reply", violated_rules: [{ id: "tone-1", text: "Be courteous." }], severity: "major" as const, violation_evidence: "insult" };

  test("abort suppresses the output: no output at all", async () => {
    const { pipeline } = setup({ on_violation: () => aborted("persisting", "enforcer") });
    const out = await pipeline.violation("s1", { ...input, retry_count: 3 });
    expect(out).toMatchObject({ outcome: "suppress", retry_count: 3, reason: "persisting", aborted_by: "enforcer" });
    // Always present and null: a caller reading `output ?? original` never delivers the violating output.
    expect(out.output).toBeNull();
    expect(out.context).toBeNull();
  });

  test("a modify of the context is a retry directive: the modified context and retry_count + 1; the session is unchanged", async () => {
    const { pipeline, calls } = setup({ on_violation: modified({ context: { user: "u1", strictness_level: 7 } }) });
    const out = await pipeline.violation("s1", { ...input, retry_count: 1 });
    expect(out).toMatchObject({ outcome: "retry", context: { user: "u1", strictness_level: 7 }, retry_count: 2 });
    expect(out.output).toBeNull();
    expect(calls[0]!.input.event).toEqual({ ...input, retry_count: 1 });
    expect(calls[0]!.input.constitution).toEqual(baseConstitution);
    expect(pipeline.get("s1")!.context).toEqual({ user: "u1" });
    await pipeline.violation("s1", { ...input, retry_count: 2, context: out.context! });
    expect(calls[1]!.input.context).toEqual({ user: "u1", strictness_level: 7 });
  });

  test("a modify carrying annotations.corrected_output is a correction; it wins over a retry directive, the last correction in chain order wins", async () => {
    const { pipeline } = setup({
      on_violation: (i) => ({
        context: { ...i.context, strictness_level: 9 },
        hook_results: [
          execution("first", "modify", { annotations: { corrected_output: "first fix" } }),
          execution("retry", "modify", { modified_context: true }),
          execution("second", "modify", { annotations: { corrected_output: "polite reply" } }),
          execution("denied", "continue", { outcome: "capability_denied", annotations: { corrected_output: "session hook text" } }),
        ],
      }),
    });
    const out = await pipeline.violation("s1", input);
    expect(out).toMatchObject({ outcome: "corrected", output: "polite reply", retry_count: 0 });
    expect(out.context).toBeNull();
  });

  test("no hook acting ⇒ the configured default: deliver (the original output) or suppress", async () => {
    const delivering = setup({ on_violation: () => ({ hook_results: [execution("log", "continue", { annotations: { corrected_output: "ignored: not a modify" } })] }) });
    expect(await delivering.pipeline.violation("s1", input)).toMatchObject({ outcome: "deliver", output: "rude reply", retry_count: 0 });
    const suppressing = setup({}, { violationDefault: "suppress" });
    const out = await suppressing.pipeline.violation("s1", input);
    expect(out.outcome).toBe("suppress");
    expect(out.output).toBeNull();
  });

  test("violation input is validated", async () => {
    const { pipeline, calls } = setup();
    await expect(pipeline.violation("s1", { ...input, retry_count: -1 })).rejects.toThrow(/^retry_count/);
    await expect(pipeline.violation("s1", { ...input, severity: "bad" as never })).rejects.toThrow(/^severity/);
    await expect(pipeline.violation("s1", { ...input, violated_rules: [{ text: "x" }] as never })).rejects.toThrow(/^violated_rules\[0\]\.id: is required$/);
    expect(calls).toHaveLength(0);
  });
});

describe("pipeline without sessions", () => {
  test("closeAll closes every session", async () => {
    const { pipeline } = setup();
    pipeline.open({ session_id: "s2", context: {}, constitution: baseConstitution });
    await pipeline.closeAll();
    expect(pipeline.list()).toEqual([]);
  });
});

describe("input bounds (limits.json_depth, limits.input_bytes)", () => {
  function deep(depth: number): Record<string, unknown> {
    let v: Record<string, unknown> = {};
    for (let i = 0; i < depth; i++) v = { d: v };
    return v;
  }

  test.each([
    ["metadata", { metadata: deep(3000) }],
    ["context", { context: deep(100) }],
    ["constitution", { constitution: { ...baseConstitution, extra: deep(100) } }],
    ["context", { context: { blob: "x".repeat(1024 * 1024) } }],
  ])("open refuses a %s beyond the bounds: INVALID_INPUT naming it, no session", (field, change) => {
    const { pipeline } = setup();
    let error: unknown;
    try {
      pipeline.open({ session_id: "bounded", context: {}, constitution: baseConstitution, ...change } as never);
    } catch (err) {
      error = err;
    }
    expectCode(error, "INVALID_INPUT");
    expect((error as VcpError).details).toMatchObject({ field });
    expect(pipeline.get("bounded")).toBeUndefined();
  });

  test("every operation bounds its fields before any chain fires; nothing about the session changes", async () => {
    const { pipeline, calls } = setup();
    const before = pipeline.get("s1");
    const refused = async (p: Promise<unknown>, field: string) =>
      p.then(
        () => expect.unreachable(),
        (err) => {
          expectCode(err, "INVALID_INPUT");
          expect((err as VcpError).details).toMatchObject({ field });
        },
      );
    await refused(pipeline.adapt("s1", adaptInput({ context: deep(65) })), "context");
    await refused(pipeline.transition("s1", { to: "x", trigger: "t", metadata: deep(65) }), "metadata");
    await refused(pipeline.transition("s1", { to: "x", trigger: "t", adapt: adaptInput({ scores: deep(65) as never }) }), "adapt.scores");
    await refused(pipeline.conflict("s1", { constitutions: [{ ...baseConstitution, extra: deep(64) }] as never, conflicting_rules: [], conflict_severity: "warning" }), "constitutions");
    await refused(pipeline.violation("s1", { output: "o".repeat(1024 * 1024 + 1), violated_rules: [], severity: "minor", violation_evidence: "e" }), "output");
    expect(calls).toHaveLength(0);
    expect(pipeline.get("s1")).toEqual(before);
  });

  test("the bounds come from deps.inputBounds", () => {
    const { pipeline } = setup({}, { inputBounds: { maxDepth: 4, maxBytes: 1 << 20 } });
    expect(() => pipeline.open({ context: deep(5), constitution: baseConstitution })).toThrow(/context: nests arrays\/objects deeper than 4 levels/);
  });

  test("a violation whose correcting hook's annotations were truncated is suppressed, never delivered", async () => {
    const { pipeline } = setup({
      on_violation: () => ({
        hook_results: [
          execution("first", "modify", { annotations: { corrected_output: "small fix" } }),
          execution("rewriter", "modify", { annotations: { _truncated: true, bytes: 900_000, limit: 65536, cap: "per_hook" } }),
        ],
      }),
    });
    const out = await pipeline.violation("s1", { output: "rude reply", violated_rules: [], severity: "major", violation_evidence: "insult" });
    expect(out).toMatchObject({ outcome: "suppress", reason: expect.stringContaining("rewriter") });
    expect(out.output).toBeNull();
  });
});
