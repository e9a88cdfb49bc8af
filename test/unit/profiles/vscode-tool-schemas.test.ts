// The vscode profile checks a PreToolUse `updatedInput` against the input schema of VS Code's built-in
// tool (src/profiles/vscode/tool-schemas.ts), as VS Code does before it uses the rewrite. The
// conformance cases (test/profiles/vscode/updated-input-*.yaml) run it through the library and the route.
import { describe, expect, test } from "vitest";
import { vscodeProfile } from "../../../src/profiles/vscode/index.js";
import { toolInputProblem, VSCODE_TOOL_SCHEMAS } from "../../../src/profiles/vscode/tool-schemas.js";

const terminal = { command: "ls", explanation: "List", goal: "Look", isBackground: false };

describe("toolInputProblem", () => {
  test("a rewrite that keeps the tool's fields fits; extra properties are allowed (no schema forbids them)", () => {
    expect(toolInputProblem("run_in_terminal", terminal, "updatedInput")).toBeUndefined();
    expect(toolInputProblem("run_in_terminal", { ...terminal, timeout: 0, note: "x" }, "updatedInput")).toBeUndefined();
  });

  test("a missing required property, a wrong type, a nested item: named by field", () => {
    expect(toolInputProblem("run_in_terminal", { command: "ls", explanation: "List", isBackground: false }, "updatedInput")).toEqual({ field: "updatedInput.goal", rule: "is required" });
    // No type coercion (VS Code's own ajv would take "false"): the rewrite carries the schema's types.
    expect(toolInputProblem("run_in_terminal", { ...terminal, isBackground: "false" }, "updatedInput")).toEqual({ field: "updatedInput.isBackground", rule: "must be a boolean" });
    expect(toolInputProblem("read_file", { filePath: "/p/a.ts", startLine: "1", endLine: 9 }, "u")).toEqual({ field: "u.startLine", rule: "must be a number" });
    const replacements = [{ filePath: "/p/a", oldString: "a", newString: "b" }, { filePath: "/p/b", oldString: "a" }];
    expect(toolInputProblem("multi_replace_string_in_file", { explanation: "x", replacements }, "u")).toEqual({ field: "u.replacements[1].newString", rule: "is required" });
    expect(toolInputProblem("multi_replace_string_in_file", { explanation: "x", replacements: [] }, "u")).toEqual({ field: "u.replacements", rule: "must hold at least 1 item" });
    expect(toolInputProblem("fetch_webpage", { urls: "https://x", query: "q" }, "u")).toEqual({ field: "u.urls", rule: "must be an array" });
  });

  test("a tool whose schema is not known here (MCP, extensions, inherited names) is not checked", () => {
    for (const name of ["mcp_github_create_issue", "editFiles", "__proto__", "constructor", "toString"]) {
      expect(toolInputProblem(name, { anything: 1 }, "u"), name).toBeUndefined();
    }
  });

  test("every schema names its source", () => {
    for (const [name, { source }] of Object.entries(VSCODE_TOOL_SCHEMAS)) expect(source, name).toMatch(/vscode/);
  });
});

describe("vscodeProfile.checkOutput", () => {
  const input = { sessionId: "s1", hookEventName: "PreToolUse", tool_name: "run_in_terminal", tool_input: terminal };
  const ask = (updatedInput: unknown, extra: Record<string, unknown> = {}) => ({
    ...extra,
    hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "sure?", updatedInput },
  });

  test("a misfit keeps the decision, drops the rewrite and adds a warning after the hook's own message", () => {
    const misfit = vscodeProfile.checkOutput!(ask({ ...terminal, command: 1 }, { systemMessage: "note" }), input, "PreToolUse", "guard");
    expect(misfit?.error).toBe("hookSpecificOutput.updatedInput.command: must be a string (the input schema of VS Code's run_in_terminal tool)");
    expect(misfit?.kept).toEqual({
      systemMessage: `note\nWarning: guard: ${misfit!.error}; the rewrite was dropped`,
      hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "sure?" },
    });
  });

  test("a fitting rewrite, an output without one, and other events pass", () => {
    expect(vscodeProfile.checkOutput!(ask(terminal), input, "PreToolUse", "guard")).toBeUndefined();
    expect(vscodeProfile.checkOutput!({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny" } }, input, "PreToolUse", "guard")).toBeUndefined();
    expect(vscodeProfile.checkOutput!({ decision: "block", reason: "r" }, { ...input, hookEventName: "PostToolUse" }, "PostToolUse", "guard")).toBeUndefined();
  });
});
