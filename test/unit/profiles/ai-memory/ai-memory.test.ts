import { describe, expect, it } from "vitest";
import {
  AI_MEMORY_EVENTS, CLASS_DEADLINES_MS, aiMemoryProfile as p, hookBudgetMs, parseCommandResult, requiredEventAnswer,
} from "../../../../src/profiles/ai-memory/index.js";
import type { HookOutputEntry, NativeObject, ProfileContext } from "../../../../src/profiles/types.js";

const compat: ProfileContext = { strict: false, settings: {} };
const strict: ProfileContext = { strict: true, settings: {} };

function dec(raw: unknown, event = "pre_store", ctx = compat): NativeObject {
  const d = p.decode(raw, event, ctx);
  if (!d.ok) throw new Error(d.error);
  return d.value;
}

function line(outputs: Array<[string, unknown]>, ctx = compat, event = "pre_store") {
  const entries: HookOutputEntry[] = outputs.map(([hook, raw]) => ({ hook, output: dec(raw, event, ctx) }));
  return p.present(p.reduceWithHooks!(entries, event, ctx, {}), event, ctx);
}

describe("ai-memory events and classes", () => {
  it("has 25 events with upstream's class deadlines", () => {
    expect(Object.keys(AI_MEMORY_EVENTS)).toHaveLength(25);
    const tally: Record<string, number> = {};
    for (const spec of Object.values(AI_MEMORY_EVENTS)) tally[spec.class!] = (tally[spec.class!] ?? 0) + 1;
    expect(tally).toEqual({ write: 17, read: 4, index: 1, transcript: 2, hot_path: 1 });
    expect(AI_MEMORY_EVENTS.pre_store!.chain_deadline_ms).toBe(5_000);
    expect(AI_MEMORY_EVENTS.post_search!.chain_deadline_ms).toBe(2_000);
    expect(AI_MEMORY_EVENTS.on_index_eviction!.chain_deadline_ms).toBe(1_000);
    expect(AI_MEMORY_EVENTS.pre_transcript_store!.chain_deadline_ms).toBe(5_000);
    expect(AI_MEMORY_EVENTS.pre_recall_expand!.chain_deadline_ms).toBe(CLASS_DEADLINES_MS.hot_path);
    expect(AI_MEMORY_EVENTS.pre_reflect!.pre).toBe(true);
    expect(AI_MEMORY_EVENTS.on_compaction_rollback!.pre).toBe(false);
  });

  it("validateInput wants the envelope for this event", () => {
    expect(p.validateInput({ event: "pre_store", payload: {} }, "pre_store")).toEqual({ ok: true, value: { event: "pre_store", payload: {} } });
    expect(p.validateInput({ event: "post_store", payload: {} }, "pre_store")).toMatchObject({ ok: false, error: expect.stringContaining("post_store") });
    expect(p.validateInput({ event: "pre_store" }, "pre_store")).toEqual({ ok: false, error: "payload: required" });
    expect(p.validateInput({ event: "pre_store", payload: {}, x: 1 }, "pre_store")).toMatchObject({ ok: false, error: expect.stringContaining("x: unknown field") });
    expect(p.validateInput({ event: "pre_nothing", payload: {} }, "pre_nothing")).toMatchObject({ ok: false });
    expect(p.sessionIdOf({ event: "pre_store", payload: { session_id: "x" } })).toBeUndefined();
  });

  it("matchers are namespace globs; a bad glob is a build error", () => {
    const m = p.compileMatcher("team/*", "pre_store");
    expect(m({ event: "pre_store", payload: { namespace: "team/alpha" } })).toBe(true);
    expect(m({ event: "pre_store", payload: { namespace: "personal" } })).toBe(false);
    expect(m({ event: "pre_store", payload: {} })).toBe(false);
    expect(p.compileMatcher("*", "pre_store")({})).toBe(true);
  });
});

describe("ai-memory decisions (upstream HookDecision::parse)", () => {
  it("undefined, null and {} allow", () => {
    for (const raw of [undefined, null, {}]) expect(dec(raw)).toEqual({ action: "allow" });
  });

  it("deny code defaults to 403; a non-integer code falls back to 403", () => {
    expect(dec({ action: "deny", reason: "r" })).toEqual({ action: "deny", reason: "r", code: 403 });
    expect(dec({ action: "deny", reason: "r", code: 451 })).toEqual({ action: "deny", reason: "r", code: 451 });
    expect(dec({ action: "deny", reason: "r", code: "451" })).toEqual({ action: "deny", reason: "r", code: 403 });
  });

  it.each([
    [[1], "must be a JSON object"],
    [{ reason: "x" }, 'missing required "action"'],
    [{ action: 3 }, '"action" must be a string'],
    [{ action: "explode" }, 'unknown action "explode"'],
    [{ action: "modify" }, 'action="modify" missing required field "delta"'],
    [{ action: "modify", delta: { tier: "huge" } }, "delta.tier must be one of short, mid, long"],
    [{ action: "modify", delta: { priority: 1.5 } }, "delta.priority"],
    [{ action: "deny" }, 'action="deny" missing required field "reason"'],
    [{ action: "ask_user", options: [] }, 'missing required field "prompt"'],
    [{ action: "ask_user", prompt: "p" }, 'missing required field "options"'],
    [{ action: "ask_user", prompt: "p", options: [1] }, '"options" must be an array of strings'],
    [{ action: "ask_user", prompt: "p", options: [], default: 1 }, '"default" must be a string'],
  ])("refuses %j: %s", (raw, msg) => {
    const d = p.decode(raw, "pre_store", compat);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.error).toContain(msg);
  });

  it("modify on a post_ event degrades to allow with a warning", () => {
    const v = dec({ action: "modify", delta: { title: "x" } }, "post_store");
    expect(v.action).toBe("allow");
    expect(v.warning).toMatch(/post_store/);
    expect(line([["h", { action: "modify", delta: { title: "x" } }]], compat, "post_store")).toEqual({ native: { action: "allow" }, exit_code: 0, stderr: expect.stringContaining("h: modify returned for post_store") });
  });

  it("null delta fields are unset; unknown delta keys are dropped (compat) or refused (strict)", () => {
    expect(dec({ action: "modify", delta: { title: null, tags: ["a"], colour: "red" } })).toEqual({ action: "modify", delta: { tags: ["a"] } });
    const d = p.decode({ action: "modify", delta: { colour: "red" } }, "pre_store", strict);
    expect(d).toMatchObject({ ok: false, error: expect.stringContaining("delta.colour is not a memory field") });
  });
});

describe("ai-memory chain fold", () => {
  it("modify deltas compose, later fields win", () => {
    expect(line([["a", { action: "modify", delta: { title: "1", priority: 2 } }], ["b", { action: "modify", delta: { title: "2" } }]]).native)
      .toEqual({ action: "modify", delta: { title: "2", priority: 2 } });
  });

  it("chainInput merges the delta into the payload (top-level overwrite); a non-object payload becomes the delta", () => {
    const out = dec({ action: "modify", delta: { title: "new", metadata: { a: 1 } } });
    expect(p.chainInput!({ event: "pre_store", payload: { title: "old", metadata: { b: 2 }, keep: 1 } }, out, "pre_store", compat))
      .toEqual({ event: "pre_store", payload: { title: "new", metadata: { a: 1 }, keep: 1 } });
    expect(p.chainInput!({ event: "pre_store", payload: "raw" }, out, "pre_store", compat)).toEqual({ event: "pre_store", payload: { title: "new", metadata: { a: 1 } } });
    const input = { event: "pre_store", payload: {} };
    expect(p.chainInput!(input, dec({ action: "allow" }), "pre_store", compat)).toBe(input);
  });

  it("deny stops the chain; allow and modify do not", () => {
    expect(p.stopsChain!(dec({ action: "deny", reason: "r" }), "pre_store", compat)).toBe(true);
    expect(p.stopsChain!(dec({ action: "allow" }), "pre_store", compat)).toBe(false);
    expect(p.stopsChain!(dec({ action: "ask_user", prompt: "p", options: [] }), "pre_store", compat)).toBe(false);
  });

  it("allow clears queued AskUsers in compatibility mode and keeps them in strict", () => {
    const chain: Array<[string, unknown]> = [["q", { action: "ask_user", prompt: "p", options: ["y"] }], ["a", { action: "allow" }]];
    expect(line(chain, compat).native).toEqual({ action: "allow" });
    expect(line(chain, strict).native).toEqual({ action: "ask_user", prompt: "p", options: ["y"], queued: [{ prompt: "p", options: ["y"], hook: "q" }] });
  });

  it("modify clears queued AskUsers in both modes", () => {
    const chain: Array<[string, unknown]> = [["q", { action: "ask_user", prompt: "p", options: [] }], ["m", { action: "modify", delta: { title: "t" } }]];
    expect(line(chain, compat).native).toEqual({ action: "modify", delta: { title: "t" } });
    expect(line(chain, strict).native).toEqual({ action: "modify", delta: { title: "t" } });
  });

  it("AskUser after a modify wins over ModifiedAllow", () => {
    expect(line([["m", { action: "modify", delta: { title: "t" } }], ["q", { action: "ask_user", prompt: "p", options: [] }]]).native)
      .toMatchObject({ action: "ask_user", prompt: "p" });
  });

  it("empty chain allows", () => {
    expect(p.present(p.reduce([], "pre_store", compat), "pre_store", compat)).toEqual({ native: { action: "allow" }, exit_code: 0 });
  });
});

describe("ai-memory fail modes, deadlines, required events", () => {
  it("a failed hook: open ⇒ allow with a warning, closed ⇒ deny 503 naming the hook and fail_mode=closed", () => {
    expect(p.failureOutput("h", "boom", false, "pre_store", compat)).toMatchObject({ action: "allow", warning: expect.stringContaining("boom") });
    expect(p.failureOutput("h", "boom", true, "pre_store", compat)).toEqual({ action: "deny", reason: "hook h errored under fail_mode=closed: boom", code: 503 });
  });

  it("per-hook budget is min(timeout, remaining class deadline); spent ⇒ undefined", () => {
    expect(hookBudgetMs(1_000, "pre_store", 0)).toBe(1_000);
    expect(hookBudgetMs(1_000, "pre_store", 4_500)).toBe(500);
    expect(hookBudgetMs(1_000, "pre_recall_expand", 20)).toBe(30);
    expect(hookBudgetMs(1_000, "pre_recall_expand", 50)).toBeUndefined();
    expect(hookBudgetMs(1_000, "pre_search", 2_001)).toBeUndefined();
    expect(p.hookBudgetMs!(10, "on_index_eviction", 995)).toBe(5);
  });

  it("deadline exhausted: open ⇒ skipped, closed ⇒ deny 504 that stops the chain", () => {
    expect(p.deadlineExhaustedOutput!("h", false, "pre_store", compat)).toBeUndefined();
    const closed = p.deadlineExhaustedOutput!("h", true, "pre_store", compat)!;
    expect(closed).toEqual({ action: "deny", reason: "hook h skipped under fail_mode=closed: chain class deadline exhausted", code: 504 });
    expect(p.stopsChain!(closed, "pre_store", compat)).toBe(true);
  });

  it("required_events: deny 503 for a listed event with no hook, nothing for the others", () => {
    const ctx = { strict: false, settings: { required_events: ["pre_store"] } };
    const agg = requiredEventAnswer("pre_store", ctx)!;
    expect(p.present(agg, "pre_store", ctx).native).toEqual({ action: "deny", reason: "required event pre_store has no enabled hook (required_events, enforce mode)", code: 503 });
    expect(requiredEventAnswer("pre_recall", ctx)).toBeUndefined();
    expect(p.emptyPlanAnswer!("pre_store", compat)).toBeUndefined();
  });

  it("answerFields: what an observer's decision would have said (withheld by the executor); an allow says nothing", () => {
    expect(p.answerFields(dec({ action: "deny", reason: "r" }), "pre_store")).toEqual(["action", "reason", "code"]);
    expect(p.answerFields(dec({ action: "allow" }), "pre_store")).toEqual([]);
    expect(p.answerFields(dec({}), "pre_store")).toEqual([]);
  });
});

describe("parseCommandResult (ai-memory command hooks)", () => {
  it("the last non-empty stdout line is the decision", () => {
    expect(parseCommandResult({ stdout: 'debug: starting\n{"action":"deny","reason":"x","code":451}\n\n', exitCode: 0 }, "pre_store", false))
      .toEqual({ ok: true, value: { action: "deny", reason: "x", code: 451 } });
  });

  it("empty stdout allows", () => {
    expect(parseCommandResult({ stdout: "\n  \n", exitCode: 0 }, "pre_store", false)).toEqual({ ok: true, value: { action: "allow" } });
  });

  it("non-zero exit, signal and timeout are errors whatever stdout says", () => {
    expect(parseCommandResult({ stdout: '{"action":"allow"}', stderr: "bad", exitCode: 2 }, "pre_store", false)).toEqual({ ok: false, error: "hook child exited (code 2): bad" });
    expect(parseCommandResult({ stdout: "", exitCode: null }, "pre_store", false)).toMatchObject({ ok: false, error: expect.stringContaining("<signaled>") });
    expect(parseCommandResult({ stdout: '{"action":"allow"}', exitCode: 0, timedOut: true, timeoutMs: 50 }, "pre_store", false)).toEqual({ ok: false, error: "hook timed out after 50ms" });
  });

  it("a last line that is not a decision object is an error", () => {
    expect(parseCommandResult({ stdout: '{"action":"allow"}\nok', exitCode: 0 }, "pre_store", false)).toMatchObject({ ok: false, error: expect.stringContaining("malformed") });
    expect(parseCommandResult({ stdout: "null", exitCode: 0 }, "pre_store", false)).toEqual({ ok: false, error: "hook decision must be a JSON object" });
  });
});

describe("ai-memory settings", () => {
  it("required_events must name ai-memory events; unknown settings are refused", async () => {
    const { aiMemorySettingsSchema } = await import("../../../../src/profiles/ai-memory/index.js");
    expect(aiMemorySettingsSchema.parse({ required_events: ["pre_store"] })).toEqual({ required_events: ["pre_store"] });
    const bad = aiMemorySettingsSchema.safeParse({ required_events: ["pre_stor"] });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]).toMatchObject({ path: ["required_events", 0], message: "not an ai-memory event" });
    expect(aiMemorySettingsSchema.safeParse({ fail_mode: "closed" }).success).toBe(false);
  });
});
