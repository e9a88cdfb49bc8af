/**
 * claude-code = Claude Code 2.1.332 (issue 26 item 1), pure: every event of its hooks reference with
 * its input schema, matcher, output fields and merge rule; permissionDecision precedence; updatedInput
 * (and updatedToolOutput) folded in plan order, where Claude Code lets the last finisher win
 * (anthropics/claude-code#83353); each event's own refusal; its command-hook exit codes.
 */
import { describe, expect, test } from "vitest";
import { claudeCodeProfile as p, parseCommandResult, reduceClaude } from "../../../../src/profiles/claude-code/index.js";
import type { HookEventName } from "../../../../src/profiles/claude-code/types.js";
import type { NativeObject } from "../../../../src/profiles/types.js";
import { MAX_MATCHED_FIELD_LENGTH } from "../../../../src/profiles/common/native.js";
import { REQUIRED, SAMPLES } from "./samples.js";

const ctx = { strict: false, settings: {} };
const hso = (event: string, fields: NativeObject): NativeObject => ({ hookSpecificOutput: { hookEventName: event, ...fields } });
const specificOf = (out: NativeObject) => out["hookSpecificOutput"] as NativeObject | undefined;

// The event list of the 2.1.332 bundle (`Oc`), in its order.
const CLAUDE_2_1_332 = [
  "PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification", "UserPromptSubmit", "UserPromptExpansion",
  "SessionStart", "SessionEnd", "Stop", "StopFailure", "SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "PreModelSwitch",
  "PostModelSwitch", "PermissionRequest", "PermissionDenied", "Setup", "TeammateIdle", "TaskCreated", "TaskCompleted", "Elicitation",
  "ElicitationResult", "ConfigChange", "WorktreeCreate", "WorktreeRemove", "InstructionsLoaded", "CwdChanged", "FileChanged",
  "DirectoryAdded", "MessageDisplay", "PreSkillShellCommand",
] as const;

test("the profile has every event of Claude Code 2.1.332", () => {
  expect(Object.keys(p.events)).toEqual([...CLAUDE_2_1_332]);
  expect(Object.keys(SAMPLES).sort()).toEqual([...CLAUDE_2_1_332].sort());
});

describe("inputs: each event's schema", () => {
  test.each(CLAUDE_2_1_332)("%s: the input Claude Code writes is accepted as it is", (event) => {
    expect(p.validateInput(SAMPLES[event], event)).toEqual({ ok: true, value: SAMPLES[event] });
  });
  const missing = CLAUDE_2_1_332.flatMap((event) => REQUIRED[event].map((field) => [event, field] as const));
  test.each(missing)("%s without %s is refused naming the field", (event, field) => {
    const { [field]: _dropped, ...input } = SAMPLES[event];
    expect(p.validateInput(input, event)).toEqual({ ok: false, error: expect.stringMatching(new RegExp(`^${field}: `)) });
  });
  test.each(CLAUDE_2_1_332)("%s: another event's name in hook_event_name is refused", (event) => {
    expect(p.validateInput({ ...SAMPLES[event], hook_event_name: "Stop" === event ? "PreToolUse" : "Stop" }, event)).toEqual({ ok: false, error: expect.stringMatching(/^hook_event_name: must be/) });
  });
  test.each([
    ["PostToolBatch", { tool_calls: [{ tool_name: "Bash" }] }, /^tool_calls\.0\.tool_input: /],
    ["MessageDisplay", { index: -1 }, /^index: /],
    ["MessageDisplay", { final: "yes" }, /^final: /],
    ["ElicitationResult", { action: "maybe" }, /^action: /],
    ["FileChanged", { event: "rename" }, /^event: /],
    ["PreCompact", { trigger: "sometimes" }, /^trigger: /],
    ["PreSkillShellCommand", { tool_input: { cmd: "ls" } }, /^tool_input\.command: /],
    ["PreModelSwitch", { context_tokens: "many" }, /^context_tokens: /],
    ["InstructionsLoaded", { globs: "*.ts" }, /^globs: /],
  ] as const)("%s with %j is refused naming the field", (event, patch, error) => {
    expect(p.validateInput({ ...SAMPLES[event], ...patch }, event)).toEqual({ ok: false, error: expect.stringMatching(error) });
  });
  // Fields a matcher searches are bounded before any work (common/scan.ts).
  test.each([
    ["UserPromptExpansion", "command_name"], ["StopFailure", "error"], ["SubagentStart", "agent_type"], ["PreModelSwitch", "to_model"],
    ["Elicitation", "mcp_server_name"], ["ConfigChange", "source"], ["InstructionsLoaded", "load_reason"], ["FileChanged", "file_path"],
    ["DirectoryAdded", "source"], ["PermissionDenied", "tool_name"], ["PreSkillShellCommand", "tool_name"], ["Setup", "trigger"],
  ] as const)("%s: the matched field %s is bounded", (event, field) => {
    expect(p.validateInput({ ...SAMPLES[event], [field]: "x".repeat(MAX_MATCHED_FIELD_LENGTH + 1) }, event)).toEqual({ ok: false, error: expect.stringMatching(new RegExp(`^${field}: must be at most`)) });
  });
  test("values Claude Code may extend (a new SessionStart source, a new StopFailure error) are accepted", () => {
    expect(p.validateInput({ ...SAMPLES.SessionStart, source: "teleport" }, "SessionStart").ok).toBe(true);
    expect(p.validateInput({ ...SAMPLES.StopFailure, error: "quota_exceeded" }, "StopFailure").ok).toBe(true);
  });
});

describe("matchers: the field Claude Code tests on each event", () => {
  test.each([
    ["PostToolUseFailure", "Bash", {}, true],
    ["PermissionDenied", "Edit|Write", {}, false],
    ["PreSkillShellCommand", "PowerShell", {}, false],
    ["UserPromptExpansion", "deploy", {}, true],
    ["UserPromptExpansion", "deploy", { command_name: "deploy-staging" }, false],
    ["StopFailure", "rate_limit|overloaded", {}, true],
    ["SubagentStart", "Explore", {}, true],
    ["SubagentStop", "general-purpose", {}, true], // a hyphenated name is one exact name
    ["SubagentStop", "general", {}, false],
    ["PreModelSwitch", "opus", {}, false], // exact on the resolved to_model
    ["PreModelSwitch", "opus", { to_model: "opus" }, true],
    ["PostModelSwitch", "claude-opus-.*", {}, true], // a regex on to_model
    ["Setup", "maintenance", {}, false],
    ["Elicitation", "github", {}, true],
    ["ElicitationResult", "slack", {}, false],
    ["ConfigChange", "policy_settings, project_settings", {}, true], // `,` separates names too
    ["InstructionsLoaded", "nested_traversal", {}, false],
    ["DirectoryAdded", "slash_command", {}, true],
    ["Notification", "permission_prompt", {}, true],
    ["SessionStart", "fork", {}, true],
    ["PreCompact", "manual", {}, false],
    ["PostCompact", "manual", {}, true],
    ["FileChanged", "\\.envrc$", {}, true], // the base name
    ["FileChanged", "^\\.envrc$", {}, true], // the base name, not the path
    ["FileChanged", "^/home", {}, false],
    ["FileChanged", "envrc", {}, false], // a plain name is exact
    // Events without a matcher: Claude Code ignores it, so it matches everything.
    ["PostToolBatch", "Bash", {}, true],
    ["TaskCreated", "never", {}, true],
    ["MessageDisplay", "x", {}, true],
    ["WorktreeCreate", "x", {}, true],
    ["CwdChanged", "x", {}, true],
  ] as const)("%s %j ⇒ %s", (event, pattern, patch, expected) => {
    expect(p.compileMatcher(pattern, event)({ ...SAMPLES[event], ...patch })).toBe(expected);
  });
  test("on tool events `Edit, Write` is a list of exact names (Claude Code reads `,` like `|`)", () => {
    const m = p.compileMatcher("Edit, Write", "PreToolUse");
    expect(m({ tool_name: "Write" })).toBe(true);
    expect(m({ tool_name: "NotebookWrite" })).toBe(false);
    expect(m.cost).toBe(0);
  });
});

describe("outputs: each event's fields", () => {
  test("an output naming another event is refused (Claude Code ignores it as 'incorrect event name')", () => {
    expect(p.decode(hso("PostToolUse", { additionalContext: "x" }), "PreToolUse", ctx)).toEqual({ ok: false, error: expect.stringMatching(/^hookSpecificOutput\.hookEventName: must be "PreToolUse"/) });
    expect(p.decode({ hookSpecificOutput: { additionalContext: "x" } }, "PostToolUse", ctx).ok).toBe(true); // no name: this event's
  });
  test.each([
    ["PreModelSwitch", { permissionDecision: "defer" }, "permissionDecision"], // no defer on a model switch
    ["PermissionDenied", { retry: "yes" }, "retry"],
    ["SessionStart", { watchPaths: "/a" }, "watchPaths"],
    ["SessionStart", { reloadSkills: 1 }, "reloadSkills"],
    ["UserPromptSubmit", { suppressOriginalPrompt: "true" }, "suppressOriginalPrompt"],
    ["Elicitation", { action: "ok" }, "action"],
    ["ElicitationResult", { content: "acme/app" }, "content"],
    ["WorktreeCreate", { worktreePath: 7 }, "worktreePath"],
    ["MessageDisplay", { displayContent: ["x"] }, "displayContent"],
    ["CwdChanged", { watchPaths: [1] }, "watchPaths"],
    ["PreSkillShellCommand", { updatedInput: "ls" }, "updatedInput"],
    ["PostToolUse", { classifierContext: {} }, "classifierContext"],
  ] as const)("%s %j is refused naming the field", (event, fields, field) => {
    expect(p.decode(hso(event, fields), event, ctx)).toEqual({ ok: false, error: expect.stringMatching(new RegExp(`^hookSpecificOutput\\.${field}`)) });
  });
  test("plain text: context on UserPromptExpansion and PostModelSwitch, the path on WorktreeCreate, nothing elsewhere", () => {
    expect(p.decode("use the staging cluster", "UserPromptExpansion", ctx)).toEqual({ ok: true, value: hso("UserPromptExpansion", { additionalContext: "use the staging cluster" }) });
    expect(p.decode("cache is cold", "PostModelSwitch", ctx)).toEqual({ ok: true, value: hso("PostModelSwitch", { additionalContext: "cache is cold" }) });
    expect(p.decode("/home/dev/wt/fix", "WorktreeCreate", ctx)).toEqual({ ok: true, value: hso("WorktreeCreate", { worktreePath: "/home/dev/wt/fix" }) });
    expect(p.decode("noise", "PostToolBatch", ctx)).toEqual({ ok: true, value: {} });
  });
});

describe("permissionDecision precedence (Claude Code's fold: deny > defer > ask > allow)", () => {
  const pre = (event: string, d: string) => hso(event, { permissionDecision: d });
  const levels = ["allow", "ask", "defer", "deny"];
  const table = levels.flatMap((a) => levels.map((b) => [a, b, levels[Math.max(levels.indexOf(a), levels.indexOf(b))]!] as const));
  test.each(table)("PreToolUse %s + %s ⇒ %s (either order)", (a, b, winner) => {
    expect(specificOf(reduceClaude([pre("PreToolUse", a), pre("PreToolUse", b)], "PreToolUse"))?.["permissionDecision"]).toBe(winner);
    expect(specificOf(reduceClaude([pre("PreToolUse", b), pre("PreToolUse", a)], "PreToolUse"))?.["permissionDecision"]).toBe(winner);
  });
  test.each(table)("PreSkillShellCommand %s + %s ⇒ %s", (a, b, winner) => {
    expect(specificOf(reduceClaude([pre("PreSkillShellCommand", a), pre("PreSkillShellCommand", b)], "PreSkillShellCommand"))?.["permissionDecision"]).toBe(winner);
  });
  const modelLevels = ["allow", "ask", "deny"];
  test.each(modelLevels.flatMap((a) => modelLevels.map((b) => [a, b, modelLevels[Math.max(modelLevels.indexOf(a), modelLevels.indexOf(b))]!] as const)))(
    "PreModelSwitch %s + %s ⇒ %s (deny > ask > allow, no defer)", (a, b, winner) => {
      expect(specificOf(reduceClaude([pre("PreModelSwitch", a), pre("PreModelSwitch", b)], "PreModelSwitch"))?.["permissionDecision"]).toBe(winner);
    },
  );
  test("the deprecated top-level decision counts on every permission event", () => {
    expect(reduceClaude([{ decision: "block", reason: "no opus today" }, pre("PreModelSwitch", "allow")], "PreModelSwitch")).toEqual(hso("PreModelSwitch", { permissionDecision: "deny", permissionDecisionReason: "no opus today" }));
  });
  test.each([
    [hso("PreSkillShellCommand", { permissionDecision: "allow" }), "allow"],
    [hso("PreSkillShellCommand", { permissionDecision: "ask" }), "block"],
    [hso("PreSkillShellCommand", { permissionDecision: "defer" }), "block"],
    [hso("PreSkillShellCommand", { updatedInput: { command: "ls" } }), "block"], // never applied: any value keeps it from running
    [hso("PreModelSwitch", { permissionDecision: "ask" }), "ask"],
    [hso("PreModelSwitch", { permissionDecision: "deny" }), "block"],
  ])("verdictOf %j ⇒ %s", (out, verdict) => {
    const event = (out["hookSpecificOutput"] as NativeObject)["hookEventName"] as string;
    expect(p.verdictOf(out, event)).toBe(verdict);
  });
});

describe("rewrites fold in plan order, not completion order (anthropics/claude-code#83353)", () => {
  test("PreToolUse: two hooks rewrite tool_input; the later one in plan order wins, every time", () => {
    const first = hso("PreToolUse", { permissionDecision: "allow", updatedInput: { command: "npm test -- --ci" } });
    const second = hso("PreToolUse", { updatedInput: { command: "timeout 600 npm test" } });
    for (let i = 0; i < 5; i++) {
      expect(specificOf(reduceClaude([first, second], "PreToolUse"))).toEqual({ hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: { command: "timeout 600 npm test" } });
      expect(specificOf(reduceClaude([second, first], "PreToolUse"))?.["updatedInput"]).toEqual({ command: "npm test -- --ci" });
    }
  });
  test("a hook that rewrites nothing leaves an earlier rewrite alone (claude-code#15897, #16117)", () => {
    expect(specificOf(reduceClaude([hso("PreToolUse", { updatedInput: { command: "ls" } }), {}, hso("PreToolUse", { permissionDecision: "allow" })], "PreToolUse"))?.["updatedInput"]).toEqual({ command: "ls" });
  });
  test("PostToolUse: updatedToolOutput and updatedMCPToolOutput, last in plan order", () => {
    const r = reduceClaude([hso("PostToolUse", { updatedToolOutput: "redacted-1" }), hso("PostToolUse", { updatedToolOutput: "redacted-2", updatedMCPToolOutput: { a: 1 } }), {}], "PostToolUse");
    expect(specificOf(r)).toEqual({ hookEventName: "PostToolUse", updatedToolOutput: "redacted-2", updatedMCPToolOutput: { a: 1 } });
  });
});

describe("merge rules of the other fields", () => {
  test.each([
    ["SessionStart", [{ sessionTitle: "a", initialUserMessage: "m1", watchPaths: ["/a", "/b"] }, { sessionTitle: "b", watchPaths: ["/b", "/c"], reloadSkills: true }, { reloadSkills: false }],
      { sessionTitle: "b", initialUserMessage: "m1", watchPaths: ["/a", "/b", "/c"], reloadSkills: true }],
    ["UserPromptSubmit", [{ sessionTitle: "x", suppressOriginalPrompt: true }, { sessionTitle: "y", suppressOriginalPrompt: false, additionalContext: "c" }],
      { sessionTitle: "y", suppressOriginalPrompt: true, additionalContext: "c" }],
    ["PermissionDenied", [{ retry: false }, { retry: true }, { retry: false }], { retry: true }],
    ["WorktreeCreate", [{}, { worktreePath: "/wt/one" }, { worktreePath: "/wt/two" }], { worktreePath: "/wt/one" }],
    ["MessageDisplay", [{ displayContent: "one" }, { displayContent: "two" }], { displayContent: "two" }],
    ["FileChanged", [{ watchPaths: ["/a"] }, { watchPaths: ["/a", "/b"] }], { watchPaths: ["/a", "/b"] }],
    ["PostToolBatch", [{ additionalContext: "lint: 2 warnings" }, { additionalContext: "tests: green" }], { additionalContext: "lint: 2 warnings\ntests: green" }],
    ["PostToolUse", [{ classifierContext: "user said yes" }, { classifierContext: "in scope" }], { classifierContext: "user said yes\nin scope" }],
  ] as const)("%s %j ⇒ %j", (event, outputs, expected) => {
    expect(specificOf(reduceClaude(outputs.map((o) => hso(event, o)), event))).toEqual({ hookEventName: event, ...expected });
  });
  test("fields an event does not read are dropped from its answer", () => {
    expect(reduceClaude([hso("Setup", { watchPaths: ["/a"], additionalContext: "y" })], "Setup")).toEqual(hso("Setup", { additionalContext: "y" }));
    expect(reduceClaude([hso("SessionEnd", { additionalContext: "x" })], "SessionEnd")).toEqual({});
  });
  test("terminalSequence: each hook's, in plan order", () => {
    expect(reduceClaude([{ terminalSequence: "\u001b]9;build done\u0007" }, {}, { terminalSequence: "\u0007" }], "Stop")).toEqual({ terminalSequence: "\u001b]9;build done\u0007\u0007" });
  });
  test("decision block counts only where the event can block", () => {
    for (const event of ["PostToolBatch", "TaskCreated", "TaskCompleted", "TeammateIdle", "ConfigChange", "PreCompact", "UserPromptExpansion", "SubagentStop"]) {
      expect(reduceClaude([{ decision: "block", reason: "r1" }, { decision: "block", reason: "r2" }], event)).toEqual({ decision: "block", reason: "r1\nr2" });
    }
    for (const event of ["SessionStart", "SubagentStart", "StopFailure", "InstructionsLoaded", "CwdChanged", "MessageDisplay", "Setup"]) {
      expect(reduceClaude([{ decision: "block", reason: "r" }], event)).toEqual({});
    }
  });
  test("Elicitation: decline (or decision block) > cancel > accept; accept keeps the last content", () => {
    const e = (fields: NativeObject, top: NativeObject = {}) => ({ ...top, ...hso("Elicitation", fields) });
    expect(reduceClaude([e({ action: "accept", content: { repo: "a" } }), e({ action: "accept", content: { repo: "b" } })], "Elicitation")).toEqual(e({ action: "accept", content: { repo: "b" } }));
    expect(reduceClaude([e({ action: "accept", content: { repo: "a" } }), e({ action: "cancel" })], "Elicitation")).toEqual(e({ action: "cancel" }));
    expect(reduceClaude([e({ action: "decline" }), e({ action: "cancel" }), e({ action: "accept", content: { repo: "a" } })], "Elicitation")).toEqual(e({ action: "decline" }));
    expect(reduceClaude([{ decision: "block", reason: "no secrets to MCP" }, e({ action: "accept", content: { token: "t" } })], "ElicitationResult")).toEqual({ decision: "block", reason: "no secrets to MCP", hookSpecificOutput: { hookEventName: "ElicitationResult", action: "decline" } });
  });
  test("PermissionRequest: an allow keeps every hook's updatedPermissions in plan order; a deny drops them", () => {
    const allow = (rules: unknown[]) => hso("PermissionRequest", { decision: { behavior: "allow", updatedPermissions: rules } });
    expect(reduceClaude([allow([{ type: "addRules", rules: [{ toolName: "Bash" }] }]), allow([{ type: "setMode", mode: "acceptEdits" }])], "PermissionRequest")).toEqual(
      hso("PermissionRequest", { decision: { behavior: "allow", updatedPermissions: [{ type: "addRules", rules: [{ toolName: "Bash" }] }, { type: "setMode", mode: "acceptEdits" }] } }),
    );
    expect(reduceClaude([allow([{ type: "setMode", mode: "bypassPermissions" }]), hso("PermissionRequest", { decision: { behavior: "deny", message: "no" } })], "PermissionRequest")).toEqual(
      hso("PermissionRequest", { decision: { behavior: "deny", message: "no" } }),
    );
  });
  test("a blocked WorktreeCreate gives no worktree path", () => {
    expect(reduceClaude([hso("WorktreeCreate", { worktreePath: "/wt/x" }), { decision: "block", reason: "no worktrees in CI" }], "WorktreeCreate")).toEqual({ decision: "block", reason: "no worktrees in CI" });
  });
});

describe("each event's own refusal (a failed fail_closed hook, a refused request)", () => {
  const REFUSAL = Object.fromEntries(CLAUDE_2_1_332.map((event) => [event, { continue: false, stopReason: "R" } as NativeObject])) as unknown as Record<HookEventName, NativeObject>;
  for (const event of ["PreToolUse", "PreSkillShellCommand", "PreModelSwitch"] as const) REFUSAL[event] = hso(event, { permissionDecision: "deny", permissionDecisionReason: "R" });
  REFUSAL.PermissionRequest = hso("PermissionRequest", { decision: { behavior: "deny", message: "R" } });
  for (const event of ["Elicitation", "ElicitationResult"] as const) REFUSAL[event] = { decision: "block", reason: "R", ...hso(event, { action: "decline" }) };
  for (const event of ["UserPromptSubmit", "UserPromptExpansion"] as const) REFUSAL[event] = { decision: "block", reason: "R", ...hso(event, { suppressOriginalPrompt: true }) };
  for (const event of ["PostToolUse", "PostToolUseFailure", "PostToolBatch", "Stop", "SubagentStop", "PreCompact", "TeammateIdle", "TaskCreated", "TaskCompleted", "ConfigChange", "WorktreeCreate"] as const) {
    REFUSAL[event] = { decision: "block", reason: "R" };
  }
  test.each(CLAUDE_2_1_332)("%s", (event) => {
    expect(p.refusalAnswer("R", event, ctx)).toEqual({ native: REFUSAL[event], exit_code: 2, stderr: "R" });
    expect(p.verdictOf(REFUSAL[event]!, event)).toBe("block");
  });
});

describe("command hooks: exit codes per event", () => {
  const run = (exitCode: number, stdout: string, stderr: string, event: string) => parseCommandResult({ exitCode, stdout, stderr }, "h", event).output;
  test("exit 2 blocks where the event can block, and is shown to the user elsewhere", () => {
    expect(run(2, "", "tests fail: stop here", "PostToolBatch")).toEqual({ decision: "block", reason: "tests fail: stop here" });
    expect(run(2, "", "no secrets", "Elicitation")).toEqual({ decision: "block", reason: "no secrets", ...hso("Elicitation", { action: "decline" }) });
    expect(run(2, "", "no skill shell", "PreSkillShellCommand")).toEqual(hso("PreSkillShellCommand", { permissionDecision: "deny", permissionDecisionReason: "no skill shell" }));
    expect(run(2, "", "x", "SubagentStart")).toEqual({ systemMessage: "x" });
    expect(run(2, "", "x", "InstructionsLoaded")).toEqual({ systemMessage: "x" });
  });
  test("exit 0 + plain text: the worktree path on WorktreeCreate, context on UserPromptExpansion", () => {
    expect(run(0, "/home/dev/wt/fix\n", "", "WorktreeCreate")).toEqual(hso("WorktreeCreate", { worktreePath: "/home/dev/wt/fix" }));
    expect(run(0, "mind the prod flag", "", "UserPromptExpansion")).toEqual(hso("UserPromptExpansion", { additionalContext: "mind the prod flag" }));
  });
});

test("verdicts of the rewrite fields: modify", () => {
  expect(p.verdictOf(hso("PostToolUse", { updatedToolOutput: "x" }), "PostToolUse")).toBe("modify");
  expect(p.verdictOf(hso("MessageDisplay", { displayContent: "x" }), "MessageDisplay")).toBe("modify");
  expect(p.verdictOf(hso("ElicitationResult", { action: "accept", content: { a: 1 } }), "ElicitationResult")).toBe("modify");
  expect(p.verdictOf(hso("Elicitation", { action: "cancel" }), "Elicitation")).toBe("block");
  expect(p.verdictOf({ decision: "block" }, "SessionStart")).toBe("allow"); // cannot block
});

test("an unknown future event: recognised by the pattern, never one of the events", () => {
  expect(p.unknownEventPattern?.test("PostToolBatchV2")).toBe(true);
  expect(p.unknownEventPattern?.test("before_tool")).toBe(false);
  expect(p.unknownEventPattern?.test("X".repeat(65))).toBe(false);
  expect(p.validateInput({}, "PostToolBatchV2")).toEqual({ ok: false, error: expect.stringMatching(/unknown claude-code event/) });
  expect(() => p.compileMatcher("*", "PostToolBatchV2")).toThrow(/unknown claude-code event/);
});
