import { describe, expect, it } from "vitest";
import {
  AMPLIFIER_EVENT_NAMES, amplifierProfile as p, stampAmplifierInput, type AmplifierAnswer,
} from "../../../../src/profiles/amplifier/index.js";
import type { HookOutputEntry, NativeObject, ProfileContext } from "../../../../src/profiles/types.js";

const compat: ProfileContext = { strict: false, settings: {} };
const strict: ProfileContext = { strict: true, settings: {} };
const EV = "tool:pre";

function out(raw: unknown): NativeObject {
  const d = p.decode(raw, EV, compat);
  if (!d.ok) throw new Error(d.error);
  return d.value;
}

function fold(outputs: Array<[string, unknown]>, ctx = compat, input: NativeObject = { event: EV, data: { session_id: "s1", timestamp: "2026-11-26T04:00:00.000Z" } }): AmplifierAnswer {
  const entries: HookOutputEntry[] = outputs.map(([hook, raw]) => ({ hook, output: out(raw) }));
  return p.reduceWithHooks!(entries, EV, ctx, input) as unknown as AmplifierAnswer;
}

describe("amplifier events", () => {
  it("has the 42 kernel events and accepts custom ns:name, rejects malformed names", () => {
    expect(AMPLIFIER_EVENT_NAMES).toHaveLength(42);
    expect(new Set(AMPLIFIER_EVENT_NAMES).size).toBe(42);
    expect(Object.keys(p.events)).toHaveLength(42);
    for (const e of ["tool:pre", "myapp:deploy", "llm:request:debug", "context:pre_compact"]) expect(p.isEvent!(e), e).toBe(true);
    for (const e of ["tool", "Tool:Pre", ":x", "a:b:c:d", "tool:pre ", ""]) expect(p.isEvent!(e), e).toBe(false);
  });

  it("validateInput names what is wrong", () => {
    expect(p.validateInput({ event: EV, data: { session_id: 1 } }, EV)).toEqual({ ok: false, error: "data.session_id: must be a string" });
    expect(p.validateInput({ event: "tool:post", data: {} }, EV)).toMatchObject({ ok: false, error: expect.stringContaining("tool:post") });
    expect(p.validateInput({ event: EV, data: [] }, EV)).toEqual({ ok: false, error: "data: must be an object" });
    expect(p.validateInput({ event: EV, data: {}, extra: 1 }, EV)).toMatchObject({ ok: false, error: expect.stringContaining("extra") });
    expect(p.validateInput({ data: { session_id: "s" } }, "Bad Event")).toMatchObject({ ok: false });
    expect(p.validateInput({ data: { session_id: "s" } }, EV)).toEqual({ ok: true, value: { event: EV, data: { session_id: "s" } } });
    expect(p.sessionIdOf({ event: EV, data: { session_id: "s9" } })).toBe("s9");
  });

  it("matchers other than wildcards are refused at build time", () => {
    expect(p.compileMatcher(undefined, EV)({})).toBe(true);
    expect(p.compileMatcher("*", EV)({})).toBe(true);
    expect(() => p.compileMatcher("bash", EV)).toThrow(/no matcher/);
  });
});

describe("amplifier timestamp", () => {
  it("replaces a caller's timestamp with the runtime's and keeps the other fields", () => {
    const stamped = stampAmplifierInput({ event: EV, data: { session_id: "s1", timestamp: "user-provided" } }, "2026-11-26T04:00:00.000Z");
    expect(stamped).toEqual({ event: EV, data: { session_id: "s1", timestamp: "2026-11-26T04:00:00.000Z" } });
    expect(p.stampInput!({ event: EV }, EV, "T")).toEqual({ event: EV, data: { timestamp: "T" } });
  });
});

describe("amplifier decode", () => {
  it("fills upstream defaults and keeps unknown keys as extensions", () => {
    expect(out({})).toMatchObject({ action: "continue", approval_timeout: 300, approval_default: "deny", context_injection_role: "system", user_message_level: "info", ephemeral: false, extensions: {} });
    expect(out({ action: "continue", custom_key: "v" }).extensions).toEqual({ custom_key: "v" });
  });

  it.each([
    [null, "must be a JSON object"],
    ["deny", "must be a JSON object"],
    [{ action: "explode" }, "action: must be one of"],
    [{ action: "modify", data: [1] }, "data: must be an object"],
    [{ context_injection_role: "robot" }, "context_injection_role"],
    [{ approval_timeout: -1 }, "approval_timeout"],
    [{ approval_options: ["a", 1] }, "approval_options"],
    [{ approval_default: "maybe" }, "approval_default"],
    [{ ephemeral: "yes" }, "ephemeral: must be a boolean"],
    [{ user_message_level: "fatal" }, "user_message_level"],
  ])("refuses %j naming the problem", (raw, msg) => {
    const d = p.decode(raw, EV, compat);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.error).toContain(msg);
  });
});

describe("amplifier fold", () => {
  it("deny wins over everything before it and stops the chain", () => {
    const deny = out({ action: "deny", reason: "no" });
    expect(p.stopsChain!(deny, EV, compat)).toBe(true);
    expect(p.stopsChain!(out({ action: "ask_user" }), EV, compat)).toBe(false);
    const a = fold([["inj", { action: "inject_context", context_injection: "x" }], ["ask", { action: "ask_user" }], ["d", { action: "deny", reason: "no" }]]);
    expect(a.action).toBe("deny");
    expect(a.reason).toBe("no");
    expect(a.injections).toEqual([]);
    expect(a.approval).toBeUndefined();
  });

  it("precedence ask_user > inject_context > modify > continue", () => {
    expect(fold([["i", { action: "inject_context", context_injection: "x" }], ["a", { action: "ask_user" }]]).action).toBe("ask_user");
    expect(fold([["m", { action: "modify", data: { v: 1 } }], ["i", { action: "inject_context", context_injection: "x" }]]).action).toBe("inject_context");
    const m = fold([["m", { action: "modify", data: { v: 1 } }], ["c", { action: "continue" }]]);
    expect(m.action).toBe("continue");
    expect(m.data).toEqual({ v: 1 });
  });

  it("continue with no modify carries the stamped input data", () => {
    expect(fold([["c", {}]]).data).toEqual({ session_id: "s1", timestamp: "2026-11-26T04:00:00.000Z" });
  });

  it("an empty plan answers continue with the caller's data", () => {
    const a = p.reduceWithHooks!([], EV, compat, { event: EV, data: { session_id: "s1" } }) as unknown as AmplifierAnswer;
    expect(a.action).toBe("continue");
    expect(a.data).toEqual({ session_id: "s1" });
  });

  it("chainInput replaces data wholesale on modify with data, and only then", () => {
    const input = { event: EV, data: { a: 1, timestamp: "T" } };
    expect(p.chainInput!(input, out({ action: "modify", data: { b: 2 } }), EV, compat)).toEqual({ event: EV, data: { b: 2 } });
    expect(p.chainInput!(input, out({ action: "modify" }), EV, compat)).toBe(input);
    expect(p.chainInput!(input, out({ action: "inject_context", context_injection: "x", data: { b: 2 } }), EV, compat)).toBe(input);
  });

  it("merges injections: joined by a blank line, first's role and suppress_output, ephemeral/append OR", () => {
    const a = fold([
      ["one", { action: "inject_context", context_injection: "A", context_injection_role: "user", suppress_output: false }],
      ["two", { action: "inject_context", context_injection: "B", context_injection_role: "assistant", suppress_output: true, ephemeral: true, append_to_last_tool_result: true }],
    ]);
    expect(a).toMatchObject({ action: "inject_context", context_injection: "A\n\nB", context_injection_role: "user", suppress_output: false, ephemeral: true, append_to_last_tool_result: true });
    expect(a.injections).toEqual([
      { hook: "one", role: "user", content: "A", ephemeral: false, timestamp: "2026-11-26T04:00:00.000Z" },
      { hook: "two", role: "assistant", content: "B", ephemeral: true, timestamp: "2026-11-26T04:00:00.000Z" },
    ]);
  });

  it("append_to_last_tool_result stays false when no injection sets it", () => {
    const a = fold([["one", { action: "inject_context", context_injection: "A" }], ["two", { action: "inject_context", context_injection: "B" }]]);
    expect(a.append_to_last_tool_result).toBe(false);
  });

  it("strict keeps accumulated data on inject/ask answers; compatibility drops it", () => {
    const chain: Array<[string, unknown]> = [["m", { action: "modify", data: { v: 2 } }], ["i", { action: "inject_context", context_injection: "x" }]];
    expect(fold(chain, compat).data).toBeNull();
    expect(fold(chain, strict).data).toEqual({ v: 2 });
    const ask: Array<[string, unknown]> = [["m", { action: "modify", data: { v: 3 } }], ["a", { action: "ask_user", data: { own: true } }]];
    expect(fold(ask, compat).data).toEqual({ own: true });
    expect(fold(ask, strict).data).toEqual({ v: 3 });
  });

  it("an injection over the size limit is refused with an error naming hook and limit; budget overrun is only a warning", () => {
    const ctx = { strict: false, settings: { injection_size_limit: 4, injection_budget_per_turn: 0.5 } };
    const a = fold([["big", { action: "inject_context", context_injection: "12345" }], ["small", { action: "inject_context", context_injection: "1234" }]], ctx);
    expect(a.errors).toEqual([expect.objectContaining({ code: "INJECTION_TOO_LARGE", hook: "big", limit: 4, size: 5, message: expect.stringMatching(/big.*injection_size_limit 4/) })]);
    expect(a.context_injection).toBe("1234");
    expect(a.warnings).toEqual([expect.objectContaining({ code: "INJECTION_BUDGET_EXCEEDED", hook: "small", attempted: 1 })]);
  });

  it("counts characters as code points (upstream: Python len), not UTF-16 units", () => {
    const ctx = { strict: false, settings: { injection_size_limit: 2 } };
    expect(fold([["e", { action: "inject_context", context_injection: "😀😀" }]], ctx).errors).toEqual([]);
  });

  it("defaults: size limit 10 240 characters, budget 1 000 tokens", () => {
    expect(fold([["e", { action: "inject_context", context_injection: "x".repeat(10_240) }]]).errors).toEqual([]);
    const big = fold([["e", { action: "inject_context", context_injection: "x".repeat(10_241) }]]);
    expect(big.errors[0]).toMatchObject({ limit: 10_240 });
    expect(fold([["e", { action: "inject_context", context_injection: "x".repeat(4_000) }]]).warnings).toEqual([]);
    expect(fold([["e", { action: "inject_context", context_injection: "x".repeat(4_004) }]]).warnings).toHaveLength(1);
  });

  it("routes user messages from every hook but ask_user, with source defaulting to the hook", () => {
    const a = fold([["c", { user_message: "hi" }], ["a", { action: "ask_user", user_message: "no" }]]);
    expect(a.user_messages).toEqual([{ message: "hi", level: "info", source: "c", hook: "c" }]);
  });

  it("ask_user answer carries an approval request with defaults", () => {
    const a = fold([["a", { action: "ask_user" }]]);
    expect(a.approval).toEqual({ hook: "a", prompt: "Allow this operation?", options: ["Allow", "Deny"], default: "deny", timeout_s: 300 });
  });
});

describe("amplifier failures, observers, verdicts", () => {
  it("a failed hook is skipped unless fail_closed, which denies naming the hook", () => {
    expect(p.failureOutput("h", "boom", false, EV, compat)).toMatchObject({ action: "continue" });
    expect(p.failureOutput("h", "boom", true, EV, compat)).toMatchObject({ action: "deny", reason: "fail-closed: h: boom" });
  });

  it("answerFields: every field a result sets beyond upstream's defaults (an observer's are withheld, injections and messages too)", () => {
    expect(p.answerFields(out({ action: "deny", reason: "x", user_message: "m" }), EV)).toEqual(["action", "reason", "user_message"]);
    expect(p.answerFields(out({ action: "inject_context", context_injection: "c", context_injection_role: "user", suppress_output: true }), EV)).toEqual([
      "action", "context_injection", "context_injection_role", "suppress_output",
    ]);
    expect(p.answerFields(out({ action: "modify", data: { a: 1 } }), EV)).toEqual(["action", "data"]);
    expect(p.answerFields(out({ extra: 1 }), EV)).toEqual(["extensions"]);
    expect(p.answerFields(out({}), EV)).toEqual([]);
  });

  it("verdicts", () => {
    expect(p.verdictOf(out({ action: "deny" }), EV)).toBe("block");
    expect(p.verdictOf(out({ action: "ask_user" }), EV)).toBe("ask");
    expect(p.verdictOf(out({ action: "modify", data: {} }), EV)).toBe("modify");
    expect(p.verdictOf(out({ action: "modify" }), EV)).toBe("allow");
    expect(p.verdictOf(out({}), EV)).toBe("allow");
  });

  it("present: the answer as is, exit code 0", () => {
    const agg = fold([["d", { action: "deny", reason: "no" }]]);
    expect(p.present(agg as unknown as NativeObject, EV, compat)).toEqual({ native: agg, exit_code: 0 });
  });
});

describe("amplifier custom event specs", () => {
  it("specOf gives kernel specs and a spec for custom events, nothing for malformed names", () => {
    expect(p.specOf!("tool:pre")).toBe(p.events["tool:pre"]);
    expect(p.specOf!("myapp:deploy")).toMatchObject({ can_block: true });
    expect(p.specOf!("bogus")).toBeUndefined();
  });
});

describe("amplifier settings", () => {
  it("limits are positive integers; a misspelt key is refused", async () => {
    const { amplifierSettingsSchema } = await import("../../../../src/profiles/amplifier/index.js");
    expect(amplifierSettingsSchema.parse({ injection_size_limit: 4096, injection_budget_per_turn: 500 })).toEqual({ injection_size_limit: 4096, injection_budget_per_turn: 500 });
    expect(amplifierSettingsSchema.safeParse({ injection_size_limit: 0 }).success).toBe(false);
    expect(amplifierSettingsSchema.safeParse({ injection_size_limmit: 10 }).success).toBe(false);
  });
});

describe("decodeHookResult and __proto__ keys", () => {
  it("an own __proto__ key (as JSON.parse makes it) stays a plain key of extensions, never its prototype", async () => {
    const { decodeHookResult } = await import("../../../../src/profiles/amplifier/output.js");
    const raw = JSON.parse('{"action":"continue","__proto__":{"polluted":"top"},"extensions":{"__proto__":{"polluted":"ext"},"k":1}}') as unknown;
    const d = decodeHookResult(raw);
    expect(d.ok).toBe(true);
    const ext = (d as { value: { extensions: Record<string, unknown> } }).value.extensions;
    expect(Object.getPrototypeOf(ext)).toBe(Object.prototype);
    expect(ext["polluted"]).toBeUndefined();
    expect(Object.keys(ext).sort()).toEqual(["__proto__", "k"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });
});
