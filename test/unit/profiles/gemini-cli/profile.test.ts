/**
 * gemini-cli profile (PROFILES §3.2), pure: every rule a user of Gemini CLI would notice — matching,
 * decoding, failure answers, observer stripping, sequential chaining and the merge rules per event,
 * each strict switch both ways.
 */
import { describe, expect, test } from "vitest";
import { geminiCliProfile as p } from "../../../../src/profiles/gemini-cli/index.js";
import type { NativeObject } from "../../../../src/profiles/types.js";

const compat = { strict: false, settings: {} };
const strict = { strict: true, settings: {} };
const tool = (name: string) => ({ session_id: "s", hook_event_name: "BeforeTool", tool_name: name, tool_input: {} });

describe("profile shape", () => {
  test("eleven events, parallel unless sequential, 60 s default capped at 30 s in the sandbox, ms config", () => {
    expect(Object.keys(p.events).sort()).toEqual(
      ["AfterAgent", "AfterModel", "AfterTool", "BeforeAgent", "BeforeModel", "BeforeTool", "BeforeToolSelection", "Notification", "PreCompress", "SessionEnd", "SessionStart"],
    );
    expect(p.execution).toBe("per_definition");
    expect(p.timeouts).toEqual({ default_ms: 60_000, max_ms: 30_000, config_unit: "ms" });
    expect(p.failure.default).toBe("open");
    expect(p.upstream.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(p.strictFixes).toHaveLength(2);
  });
  test("sessionIdOf reads session_id", () => {
    expect(p.sessionIdOf({ session_id: "abc" })).toBe("abc");
    expect(p.sessionIdOf({})).toBeUndefined();
  });
});

describe("compileMatcher", () => {
  test.each([
    [undefined, "anything", true],
    ["", "anything", true],
    ["*", "anything", true],
    ["  *  ", "anything", true],
    ["run_shell_command", "run_shell_command", true],
    ["Edit|Write", "EditTool", true], // unanchored search
    ["^Edit$", "EditTool", false],
    ["write_file", "read_file", false],
    ["mcp__.*", "mcp__github__issue", true],
  ])("tool event matcher %j on %s ⇒ %s", (pattern, name, expected) => {
    expect(p.compileMatcher(pattern, "BeforeTool")(tool(name))).toBe(expected);
    expect(p.compileMatcher(pattern, "AfterTool")({ ...tool(name), hook_event_name: "AfterTool" })).toBe(expected);
  });
  test("session and compress events match source/reason/trigger exactly, not as a regex", () => {
    expect(p.compileMatcher("startup", "SessionStart")({ source: "startup" })).toBe(true);
    expect(p.compileMatcher("start", "SessionStart")({ source: "startup" })).toBe(false);
    expect(p.compileMatcher("exit", "SessionEnd")({ reason: "exit" })).toBe(true);
    expect(p.compileMatcher("manual|auto", "PreCompress")({ trigger: "auto" })).toBe(false);
    expect(p.compileMatcher("auto", "PreCompress")({ trigger: "auto" })).toBe(true);
  });
  test("events without a match context ignore the matcher, as upstream does", () => {
    expect(p.compileMatcher("nothing_like_it", "BeforeModel")({ llm_request: {} })).toBe(true);
  });
  test("a pattern RE2 cannot compile is an INVALID_HOOK error naming it, never an exact-match fallback", () => {
    expect(() => p.compileMatcher("(?<=a)b", "BeforeTool")).toThrow(/matcher "\(\?<=a\)b" of gemini-cli BeforeTool is not an RE2 pattern/);
    expect(() => p.compileMatcher("(unclosed", "BeforeTool")).toThrow(expect.objectContaining({ code: "INVALID_HOOK" }));
  });
  test("an unknown event is refused", () => {
    expect(() => p.compileMatcher(undefined, "PreToolUse")).toThrow(/unknown gemini-cli event "PreToolUse"/);
  });
});

describe("validateInput", () => {
  test("a well-formed input passes with unknown keys kept", () => {
    const r = p.validateInput({ ...tool("x"), extra: 1, cwd: "/p" }, "BeforeTool");
    expect(r).toEqual({ ok: true, value: { ...tool("x"), extra: 1, cwd: "/p" } });
  });
  test.each([
    [{ hook_event_name: "BeforeTool", tool_name: "x", tool_input: {} }, "BeforeTool", /^session_id: /],
    [{ ...tool("x"), tool_input: "rm" }, "BeforeTool", /^tool_input: /],
    [{ ...tool("x"), tool_name: 3 }, "BeforeTool", /^tool_name: /],
    [{ ...tool("x"), hook_event_name: "AfterTool" }, "BeforeTool", /^hook_event_name: must be "BeforeTool"/],
    [{ session_id: "s", hook_event_name: "SessionStart", source: "boot" }, "SessionStart", /^source: /],
    [{ session_id: "s", hook_event_name: "PreCompress", trigger: "sometimes" }, "PreCompress", /^trigger: /],
    [{ session_id: "s", hook_event_name: "BeforeModel", llm_request: { messages: [{ role: "user", content: 1 }] } }, "BeforeModel", /^llm_request\.messages\.0\.content: /],
    [{ session_id: "s", hook_event_name: "AfterTool", tool_name: "x", tool_input: {} }, "AfterTool", /^tool_response: /],
    [[1, 2], "BeforeTool", /^input: expected a JSON object, got array/],
    [tool("x"), "Nope", /unknown gemini-cli event "Nope"/],
  ])("%j as %s is refused naming the field", (input, event, message) => {
    const r = p.validateInput(input, event);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });
});

describe("decode", () => {
  test("an object with unknown keys is kept as is", () => {
    expect(p.decode({ decision: "block", reason: "r", extra: { a: 1 } }, "BeforeTool", compat)).toEqual({ ok: true, value: { decision: "block", reason: "r", extra: { a: 1 } } });
  });
  test("undefined, null and empty text are an empty output (exit 0, no stdout)", () => {
    for (const raw of [undefined, null, "", "  "]) expect(p.decode(raw, "BeforeTool", compat)).toEqual({ ok: true, value: {} });
  });
  test("plain text becomes allow + systemMessage; JSON text (also double-encoded) is parsed", () => {
    expect(p.decode(" hello ", "AfterTool", compat)).toEqual({ ok: true, value: { decision: "allow", systemMessage: "hello" } });
    expect(p.decode('{"decision":"deny"}', "BeforeTool", compat)).toEqual({ ok: true, value: { decision: "deny" } });
    expect(p.decode(JSON.stringify('{"decision":"deny"}'), "BeforeTool", compat)).toEqual({ ok: true, value: { decision: "deny" } });
  });
  test.each([
    [{ decision: "maybe" }, /^decision: /],
    [{ continue: "no" }, /^continue: /],
    [{ hookSpecificOutput: { tool_input: "x" } }, /^hookSpecificOutput\.tool_input: /],
    [{ hookSpecificOutput: { toolConfig: { mode: "SOME" } } }, /^hookSpecificOutput\.toolConfig\.mode: /],
    [{ hookSpecificOutput: { toolConfig: { allowedFunctionNames: [1] } } }, /^hookSpecificOutput\.toolConfig\.allowedFunctionNames\.0: /],
    [[], /^output: expected a JSON object, got array/],
    [42, /^output: expected a JSON object, got number/],
  ])("wrong types are refused naming the field: %j", (raw, message) => {
    const r = p.decode(raw, "BeforeTool", compat);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toMatch(message);
  });
});

describe("failureOutput", () => {
  test("fail-open: allow + Warning systemMessage naming the hook", () => {
    expect(p.failureOutput("h1", "boom", false, "BeforeTool", compat)).toEqual({ decision: "allow", systemMessage: "Warning: h1: boom" });
  });
  test("fail_closed on a blocking event: block with a fail-closed reason", () => {
    expect(p.failureOutput("h1", "timed out", true, "BeforeTool", compat)).toEqual({ decision: "block", reason: "fail-closed: h1: timed out" });
  });
  test("fail_closed on BeforeToolSelection takes every tool away; on a non-blocking event it stops the agent", () => {
    const sel = p.failureOutput("h", "x", true, "BeforeToolSelection", compat);
    expect(p.reduce([{}, sel], "BeforeToolSelection", compat)).toEqual({ hookSpecificOutput: { hookEventName: "BeforeToolSelection", toolConfig: { mode: "NONE", allowedFunctionNames: [] } } });
    expect(p.failureOutput("h", "x", true, "SessionEnd", compat)).toMatchObject({ continue: false, stopReason: "fail-closed: h: x" });
  });
});

describe("answerFields (what a session-trust observer said, withheld by the executor)", () => {
  test("every field that would reach the answer is named, messages and context included", () => {
    const out = { decision: "block", reason: "r", systemMessage: "m", continue: false, hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: { a: 1 }, additionalContext: "c" } };
    expect([...p.answerFields(out, "BeforeTool")].sort()).toEqual(["continue", "decision", "hookSpecificOutput.additionalContext", "hookSpecificOutput.tool_input", "reason", "systemMessage"]);
  });
  test("an allow, continue:true and suppressOutput:false say nothing", () => {
    expect(p.answerFields({ decision: "allow", continue: true, suppressOutput: false, hookSpecificOutput: { hookEventName: "BeforeTool" } }, "BeforeTool")).toEqual([]);
  });
  test("toolConfig of a BeforeToolSelection observer is named", () => {
    expect(p.answerFields({ hookSpecificOutput: { toolConfig: { mode: "NONE" } } }, "BeforeToolSelection")).toEqual(["hookSpecificOutput.toolConfig"]);
  });
});

describe("verdictOf", () => {
  test.each([
    [{ decision: "block" }, "BeforeTool", "block"],
    [{ decision: "deny" }, "BeforeModel", "block"],
    [{ continue: false }, "AfterTool", "block"],
    [{ decision: "ask" }, "BeforeTool", "ask"],
    [{ hookSpecificOutput: { tool_input: { a: 1 } } }, "BeforeTool", "modify"],
    [{ hookSpecificOutput: { toolConfig: { mode: "NONE" } } }, "BeforeToolSelection", "modify"],
    [{ decision: "allow" }, "BeforeTool", "allow"],
    [{ decision: "block" }, "Notification", "allow"],
  ])("%j on %s ⇒ %s", (out, event, verdict) => {
    expect(p.verdictOf(out as NativeObject, event)).toBe(verdict);
  });
});

describe("chainInput (sequential)", () => {
  test("BeforeAgent appends additionalContext to the prompt after a blank line", () => {
    const next = p.chainInput!({ prompt: "fix it" }, { hookSpecificOutput: { additionalContext: "repo uses pnpm" } }, "BeforeAgent", compat);
    expect(next["prompt"]).toBe("fix it\n\nrepo uses pnpm");
  });
  test("BeforeModel shallow-merges llm_request", () => {
    const next = p.chainInput!({ llm_request: { model: "a", config: { temperature: 1 } } }, { hookSpecificOutput: { llm_request: { config: { topK: 2 } } } }, "BeforeModel", compat);
    expect(next["llm_request"]).toEqual({ model: "a", config: { topK: 2 } });
  });
  test("BeforeTool shallow-merges tool_input", () => {
    const next = p.chainInput!({ tool_input: { command: "rm -rf /", dir: "/" } }, { hookSpecificOutput: { tool_input: { command: "ls" } } }, "BeforeTool", compat);
    expect(next["tool_input"]).toEqual({ command: "ls", dir: "/" });
  });
  test("other events and outputs without hookSpecificOutput leave the input unchanged", () => {
    const input = { tool_input: { a: 1 } };
    expect(p.chainInput!(input, { decision: "allow" }, "BeforeTool", compat)).toBe(input);
    expect(p.chainInput!(input, { hookSpecificOutput: { tool_input: { a: 2 } } }, "AfterTool", compat)).toBe(input);
  });
});

describe("reduce: OR-decision events", () => {
  test("nothing ran ⇒ the neutral answer {}", () => {
    expect(p.reduce([], "BeforeTool", compat)).toEqual({});
  });
  test("one output still gets the defaults (applied even to one output)", () => {
    expect(p.reduce([{}], "BeforeTool", compat)).toEqual({ continue: true, suppressOutput: false, decision: "allow" });
  });
  test("any block wins; reasons joined with a newline", () => {
    expect(p.reduce([{ decision: "allow", reason: "Hook 1 allowed" }, { decision: "block", reason: "Hook 2 blocked" }], "BeforeTool", compat)).toEqual({
      continue: true, suppressOutput: false, decision: "block", reason: "Hook 1 allowed\nHook 2 blocked",
    });
  });
  test("continue:false from any hook; every stopReason and systemMessage joined", () => {
    const r = p.reduce([{ continue: false, stopReason: "a", systemMessage: "m1" }, { continue: false, stopReason: "b", systemMessage: "m2" }], "AfterTool", compat);
    expect(r).toEqual({ continue: false, suppressOutput: false, stopReason: "a\nb", systemMessage: "m1\nm2" });
  });
  test("ask is kept when nothing blocks (gemini-cli)", () => {
    expect(p.reduce([{ decision: "allow" }, { decision: "ask" }], "BeforeTool", compat)["decision"]).toBe("ask");
    expect(p.reduce([{ decision: "ask" }, { decision: "deny" }], "BeforeTool", compat)["decision"]).toBe("deny");
  });
  test("suppressOutput and clearContext OR; hookSpecificOutput shallow-merged, later wins; additionalContext joined", () => {
    const r = p.reduce([
      { suppressOutput: true, hookSpecificOutput: { clearContext: true, additionalContext: "one", x: 1 } },
      { hookSpecificOutput: { clearContext: false, additionalContext: "two", x: 2 } },
    ], "AfterAgent", compat);
    expect(r).toEqual({ continue: true, suppressOutput: true, decision: "allow", hookSpecificOutput: { clearContext: true, additionalContext: "one\ntwo", x: 2 } });
  });
  test("the blocking check reads only the top-level decision (a permissionDecision deny does not block)", () => {
    expect(p.reduce([{ hookSpecificOutput: { permissionDecision: "deny" } }], "BeforeTool", compat)["decision"]).toBe("allow");
  });
});

describe("reduce: BeforeModel/AfterModel field replacement, strict switch both ways", () => {
  const outs = [{ decision: "block", reason: "pii" }, { decision: "allow", reason: "ok", hookSpecificOutput: { llm_request: { model: "m2" } } }];
  test("compat: the later allow overrides the earlier block (upstream)", () => {
    expect(p.reduce(outs, "BeforeModel", compat)).toEqual({ decision: "allow", reason: "ok", hookSpecificOutput: { llm_request: { model: "m2" } } });
  });
  test("strict: any block wins", () => {
    expect(p.reduce(outs, "BeforeModel", strict)).toEqual({ decision: "block", reason: "pii", hookSpecificOutput: { llm_request: { model: "m2" } } });
    expect(p.reduce([{ continue: false, stopReason: "s" }, { continue: true }], "AfterModel", strict)).toMatchObject({ continue: false, stopReason: "s" });
    expect(p.reduce([{ continue: false, stopReason: "s" }, { continue: true }], "AfterModel", compat)).toMatchObject({ continue: true, stopReason: "s" });
  });
});

describe("reduce: BeforeToolSelection", () => {
  const sel = (mode: string | undefined, names?: string[]) => ({ hookSpecificOutput: { toolConfig: { ...(mode ? { mode } : {}), ...(names ? { allowedFunctionNames: names } : {}) } } });
  const cfg = (r: NativeObject) => (r["hookSpecificOutput"] as NativeObject)["toolConfig"];
  test("NONE wins and empties the list", () => {
    expect(cfg(p.reduce([sel("ANY", ["tool1", "tool2"]), sel("NONE", [])], "BeforeToolSelection", compat))).toEqual({ mode: "NONE", allowedFunctionNames: [] });
  });
  test("ANY over AUTO; names are the sorted union (compat)", () => {
    expect(cfg(p.reduce([sel("AUTO", ["tool1"]), sel("ANY", ["tool3", "tool2"])], "BeforeToolSelection", compat))).toEqual({ mode: "ANY", allowedFunctionNames: ["tool1", "tool2", "tool3"] });
  });
  test("strict: the names are intersected (a hook can take a tool away)", () => {
    expect(cfg(p.reduce([sel("AUTO", ["a", "b"]), sel("AUTO", ["b", "c"])], "BeforeToolSelection", strict))).toEqual({ mode: "AUTO", allowedFunctionNames: ["b"] });
  });
  test("no toolConfig at all ⇒ AUTO with an empty list, other fields dropped (upstream)", () => {
    expect(p.reduce([{ systemMessage: "x" }], "BeforeToolSelection", compat)).toEqual({ hookSpecificOutput: { hookEventName: "BeforeToolSelection", toolConfig: { mode: "AUTO", allowedFunctionNames: [] } } });
  });
});

describe("reduce: other events shallow-merge", () => {
  test("later fields win", () => {
    expect(p.reduce([{ systemMessage: "a", suppressOutput: true }, { systemMessage: "b" }], "Notification", compat)).toEqual({ systemMessage: "b", suppressOutput: true });
  });
});

describe("present", () => {
  test("the merged JSON with exit 0, for allow and block alike", () => {
    expect(p.present({ decision: "block", reason: "no" }, "BeforeTool", compat)).toEqual({ native: { decision: "block", reason: "no" }, exit_code: 0 });
    expect(p.present({}, "BeforeTool", compat)).toEqual({ native: {}, exit_code: 0 });
  });
});
