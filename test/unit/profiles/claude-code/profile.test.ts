/**
 * claude-code profile (PROFILES §3.3), pure: matching (plain word exact, else regex), decoding, the
 * permission precedence, updatedInput, joined context, failure answers, observer stripping, and the
 * command-hook exit codes (2 = block, other non-zero = non-blocking error).
 */
import { describe, expect, test } from "vitest";
import { claudeCodeProfile as p, parseCommandResult } from "../../../../src/profiles/claude-code/index.js";
import type { NativeObject } from "../../../../src/profiles/types.js";

const ctx = { strict: false, settings: {} };
const pre = (decision?: string, reason?: string, extra: NativeObject = {}) => ({
  hookSpecificOutput: { hookEventName: "PreToolUse", ...(decision ? { permissionDecision: decision } : {}), ...(reason ? { permissionDecisionReason: reason } : {}), ...extra },
});

test("shape: Claude Code's 34 events, parallel, timeout configured in seconds, no strict switches", () => {
  expect(Object.keys(p.events)).toHaveLength(34);
  expect(p.execution).toBe("parallel");
  expect(p.timeouts).toEqual({ default_ms: 60_000, max_ms: 30_000, config_unit: "s" });
  expect(p.strictFixes).toEqual([]);
});

describe("compileMatcher", () => {
  test.each([
    ["Write", "Write", true],
    ["Write", "NotebookWrite", false], // a plain word is exact
    ["Edit|Write", "Write", true],
    ["Edit|Write", "MultiEdit", false], // a list of plain words is exact too
    ["Notebook.*", "NotebookEdit", true],
    ["mcp__memory__.*", "mcp__memory__create", true],
    ["^Bash$", "Bash", true],
    ["*", "Anything", true],
    ["", "Anything", true],
    [undefined, "Anything", true],
  ])("%j on %s ⇒ %s", (pattern, name, expected) => {
    expect(p.compileMatcher(pattern, "PreToolUse")({ tool_name: name })).toBe(expected);
  });
  test("other matcher fields: SessionStart source, PreCompact trigger, Notification type", () => {
    expect(p.compileMatcher("compact", "SessionStart")({ source: "compact" })).toBe(true);
    expect(p.compileMatcher("auto", "PreCompact")({ trigger: "manual" })).toBe(false);
    expect(p.compileMatcher("permission_prompt", "Notification")({ notification_type: "permission_prompt" })).toBe(true);
    expect(p.compileMatcher("Bash", "Stop")({})).toBe(true); // Stop has no matcher
  });
  test("a pattern RE2 cannot compile is refused naming it", () => {
    expect(() => p.compileMatcher("Bash(?=x)", "PreToolUse")).toThrow(/matcher "Bash\(\?=x\)" of claude-code PreToolUse/);
  });
});

describe("validateInput / decode", () => {
  test("inputs: the bad field is named", () => {
    const bad = p.validateInput({ session_id: "s", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: [] }, "PreToolUse");
    expect(bad).toEqual({ ok: false, error: expect.stringMatching(/^tool_input: /) });
    expect(p.validateInput({ session_id: "s", hook_event_name: "PostToolUse", tool_name: "Bash", tool_input: {} }, "PostToolUse")).toEqual({ ok: false, error: expect.stringMatching(/^tool_response: /) });
    expect(p.validateInput({ session_id: "s", hook_event_name: "UserPromptSubmit", prompt: "hi", extra: 1 }, "UserPromptSubmit").ok).toBe(true);
    expect(p.validateInput({}, "BeforeTool")).toEqual({ ok: false, error: expect.stringMatching(/unknown claude-code event "BeforeTool"/) });
  });
  test("outputs: unknown keys kept, wrong types refused naming the field", () => {
    expect(p.decode({ ...pre("allow"), extra: true }, "PreToolUse", ctx)).toEqual({ ok: true, value: { ...pre("allow"), extra: true } });
    expect(p.decode(pre("maybe"), "PreToolUse", ctx)).toEqual({ ok: false, error: expect.stringMatching(/^hookSpecificOutput\.permissionDecision: /) });
    expect(p.decode({ hookSpecificOutput: { updatedInput: "ls" } }, "PreToolUse", ctx)).toEqual({ ok: false, error: expect.stringMatching(/^hookSpecificOutput\.updatedInput: /) });
    expect(p.decode({ decision: "deny" }, "Stop", ctx)).toEqual({ ok: false, error: expect.stringMatching(/^decision: /) });
  });
  test("plain text is context on UserPromptSubmit, nothing elsewhere", () => {
    expect(p.decode("remember X", "UserPromptSubmit", ctx)).toEqual({ ok: true, value: { hookSpecificOutput: { hookEventName: "UserPromptSubmit", additionalContext: "remember X" } } });
    expect(p.decode("verbose text", "PreToolUse", ctx)).toEqual({ ok: true, value: {} });
  });
});

describe("reduce", () => {
  test("permissionDecision precedence deny > defer > ask > allow, whatever the order", () => {
    const order = ["allow", "ask", "defer", "deny"];
    for (let i = 0; i < order.length; i++) {
      const outs = order.slice(0, i + 1).reverse().map((d) => pre(d));
      expect((p.reduce(outs, "PreToolUse", ctx)["hookSpecificOutput"] as NativeObject)["permissionDecision"]).toBe(order[i]);
    }
  });
  test("the reasons of the winning level are joined; lower levels' reasons dropped", () => {
    const r = p.reduce([pre("allow", "fine"), pre("deny", "rm -rf"), pre("ask", "hmm"), pre("deny", "sudo")], "PreToolUse", ctx);
    expect(r["hookSpecificOutput"]).toEqual({ hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "rm -rf\nsudo" });
  });
  test("the deprecated top-level decision approve/block maps to allow/deny", () => {
    expect(p.reduce([{ decision: "block", reason: "old" }, pre("allow")], "PreToolUse", ctx)["hookSpecificOutput"]).toEqual({ hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "old" });
  });
  test("updatedInput: the last hook in plan order that sets it replaces the whole tool_input", () => {
    const r = p.reduce([pre(undefined, undefined, { updatedInput: { command: "a" } }), pre("allow"), pre(undefined, undefined, { updatedInput: { command: "b" } })], "PreToolUse", ctx);
    expect(r["hookSpecificOutput"]).toEqual({ hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: { command: "b" } });
  });
  test("additionalContext and systemMessage joined with a newline; continue:false and suppressOutput any wins", () => {
    const r = p.reduce([
      { systemMessage: "m1", hookSpecificOutput: { additionalContext: "c1" } },
      { continue: false, stopReason: "stop", suppressOutput: true, systemMessage: "m2", hookSpecificOutput: { additionalContext: "c2" } },
    ], "PostToolUse", ctx);
    expect(r).toEqual({ continue: false, stopReason: "stop", suppressOutput: true, systemMessage: "m1\nm2", hookSpecificOutput: { hookEventName: "PostToolUse", additionalContext: "c1\nc2" } });
  });
  test("decision block on Stop: any block wins, reasons joined", () => {
    expect(p.reduce([{}, { decision: "block", reason: "tests fail" }, { decision: "block", reason: "lint" }], "Stop", ctx)).toEqual({ decision: "block", reason: "tests fail\nlint" });
  });
  test("PermissionRequest: deny beats allow; an allow's updatedInput is kept when nothing denies", () => {
    const allow = { hookSpecificOutput: { decision: { behavior: "allow", updatedInput: { file_path: "/p/a" } } } };
    const deny = { hookSpecificOutput: { decision: { behavior: "deny", message: "no" } } };
    expect(p.reduce([allow], "PermissionRequest", ctx)).toEqual({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "allow", updatedInput: { file_path: "/p/a" } } } });
    expect(p.reduce([allow, deny], "PermissionRequest", ctx)).toEqual({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "no" } } });
  });
  test("nothing ran ⇒ {} (a valid empty http-hook body)", () => {
    expect(p.present(p.reduce([], "PreToolUse", ctx), "PreToolUse", ctx)).toEqual({ native: {}, exit_code: 0 });
  });
});

describe("failure, observers, verdicts, chaining", () => {
  test("fail-open: a warning only; fail_closed: the event's own refusal", () => {
    expect(p.failureOutput("h", "boom", false, "PreToolUse", ctx)).toEqual({ systemMessage: "Warning: h: boom" });
    expect(p.failureOutput("h", "boom", true, "PreToolUse", ctx)).toEqual(pre("deny", "fail-closed: h: boom"));
    expect(p.failureOutput("h", "boom", true, "UserPromptSubmit", ctx)).toEqual({ decision: "block", reason: "fail-closed: h: boom", hookSpecificOutput: { hookEventName: "UserPromptSubmit", suppressOriginalPrompt: true } });
    expect(p.failureOutput("h", "boom", true, "SessionStart", ctx)).toEqual({ continue: false, stopReason: "fail-closed: h: boom" });
    expect(p.failureOutput("h", "boom", true, "PermissionRequest", ctx)).toEqual({ hookSpecificOutput: { hookEventName: "PermissionRequest", decision: { behavior: "deny", message: "fail-closed: h: boom" } } });
  });
  test("answerFields: a permission allow is a decision too; every field an observer sets is named", () => {
    const said = p.answerFields({ systemMessage: "seen", ...pre("allow", "ok", { updatedInput: { a: 1 }, additionalContext: "c" }) }, "PreToolUse");
    expect([...said].sort()).toEqual([
      "hookSpecificOutput.additionalContext", "hookSpecificOutput.permissionDecision", "hookSpecificOutput.permissionDecisionReason", "hookSpecificOutput.updatedInput", "systemMessage",
    ]);
  });
  test.each([
    [pre("deny"), "PreToolUse", "block"],
    [pre("ask"), "PreToolUse", "ask"],
    [pre("defer"), "PreToolUse", "ask"],
    [pre(undefined, undefined, { updatedInput: {} }), "PreToolUse", "modify"],
    [pre("allow"), "PreToolUse", "allow"],
    [{ decision: "block" }, "Stop", "block"],
    [{ continue: false }, "SessionStart", "block"],
    [{ hookSpecificOutput: { additionalContext: "x" } }, "UserPromptSubmit", "allow"],
  ])("verdictOf %j on %s ⇒ %s", (out, event, verdict) => {
    expect(p.verdictOf(out as NativeObject, event)).toBe(verdict);
  });
  test("chainInput: updatedInput replaces the whole tool_input", () => {
    expect(p.chainInput!({ tool_input: { command: "rm -rf /", timeout: 5 } }, pre(undefined, undefined, { updatedInput: { command: "ls" } }), "PreToolUse", ctx)).toEqual({ tool_input: { command: "ls" } });
  });
});

describe("parseCommandResult: exit 2 = block, other non-zero = non-blocking error", () => {
  const run = (exitCode: number | null, stdout: string, stderr: string, event = "PreToolUse", extra = {}) => parseCommandResult({ exitCode, stdout, stderr, ...extra }, "h", event);
  test.each([
    ["exit 0 + JSON: used", run(0, JSON.stringify(pre("ask")), ""), { output: pre("ask") }],
    ["exit 0, empty", run(0, "", "noise"), { output: {} }],
    ["exit 0 + text on PreToolUse: transcript only", run(0, "hello", ""), { output: {} }],
    ["exit 0 + text on SessionStart: context", run(0, "hello", "", "SessionStart"), { output: { hookSpecificOutput: { hookEventName: "SessionStart", additionalContext: "hello" } } }],
    ["exit 2 on PreToolUse: deny with stderr, stdout ignored", run(2, JSON.stringify(pre("allow")), "no rm"), { output: pre("deny", "no rm") }],
    ["exit 2 on Stop: block with stderr", run(2, "", "keep going", "Stop"), { output: { decision: "block", reason: "keep going" } }],
    ["exit 2 on PostToolUse: stderr to the model", run(2, "", "lint failed", "PostToolUse"), { output: { decision: "block", reason: "lint failed" } }],
    ["exit 2 on Notification: shown to the user only", run(2, "", "x", "Notification"), { output: { systemMessage: "x" } }],
    // A non-blocking error warns the user as every failed hook does (a timeout, a signal, below).
    ["exit 1: non-blocking error", run(1, "", "oops"), { output: { systemMessage: "Warning: h: exit code 1: oops" }, failure: "exit code 1: oops" }],
    ["exit 3: non-blocking error", run(3, "", ""), { output: { systemMessage: "Warning: h: exit code 3" }, failure: "exit code 3" }],
    ["signal: failure, fail-open", run(null, "", "", "PreToolUse", { signal: "SIGKILL" }), { output: { systemMessage: "Warning: h: killed by SIGKILL" }, failure: "killed by SIGKILL" }],
    ["timeout: failure, fail-open", run(null, "", "", "PreToolUse", { timedOut: true }), { output: { systemMessage: "Warning: h: timed out" }, failure: "timed out" }],
  ])("%s", (_name, got, expected) => {
    expect(got).toEqual(expected);
  });
});

test("answerFields: continue:true and suppressOutput:false say nothing; anything else is named", () => {
  expect(p.answerFields({ continue: true, suppressOutput: false }, "Stop")).toEqual([]);
  expect(p.answerFields({ continue: true, stopReason: "x", systemMessage: "m" }, "Stop")).toEqual(["stopReason", "systemMessage"]);
  expect(p.answerFields({ decision: "block", reason: "r" }, "Stop")).toEqual(["decision", "reason"]);
});
