// The copilot profile's reading of a finished command hook (an imported Copilot hook in the command lane)
// and of toolArgs, checked against what the real Copilot CLI 1.0.102 does (run offline, 2026-11-28).
import { describe, expect, test } from "vitest";
import { copilotProfile, parseCommandResult, toolArgsOf } from "../../../src/profiles/copilot/index.js";

const done = (exitCode: number, stdout = "", stderr = "") => ({ exitCode, stdout, stderr });

describe("copilot command hooks", () => {
  test("preToolUse exit 2 denies with stderr as the reason (Copilot 1.0.102: 'hook exited with code 2')", () => {
    expect(parseCommandResult(done(2, "", "no rm\n"), "h", "preToolUse").output).toEqual({ permissionDecision: "deny", permissionDecisionReason: "no rm" });
    expect(parseCommandResult(done(2), "h", "preToolUse").output).toEqual({ permissionDecision: "deny", permissionDecisionReason: "hook exited with code 2" });
  });
  test("permissionRequest exit 2 is a deny merged over stdout's JSON; stderr is ignored", () => {
    expect(parseCommandResult(done(2, '{"message":"not now","behavior":"allow"}', "x"), "h", "permissionRequest").output).toEqual({ message: "not now", behavior: "deny" });
  });
  test("exit 1 is a failed hook, which fail_closed turns into a deny", () => {
    const r = parseCommandResult(done(1, "", "boom"), "h", "preToolUse");
    expect(r.failure).toBe("exit code 1: boom");
    expect(copilotProfile.failureOutput("h", r.failure!, true, "preToolUse", { strict: false, settings: {} })).toEqual({ permissionDecision: "deny", permissionDecisionReason: "fail-closed: h: exit code 1: boom" });
  });
  test("permissionRequest as the real CLI 1.0.102 sends it (toolInput, no toolArgs) validates, and its subject is the command", () => {
    const input = { hookName: "permissionRequest", sessionId: "s1", timestamp: 1795866966744, cwd: "/p", toolName: "bash", toolInput: { command: "echo hi > hello.txt" }, permissionSuggestions: [] };
    expect(copilotProfile.validateInput(input, "permissionRequest")).toMatchObject({ ok: true });
    expect(copilotProfile.subjectOf!(input, "permissionRequest")).toMatchObject({ tool: "bash", command: "echo hi > hello.txt" });
  });
  test("toolArgs: a JSON string (cloud agent reference) and an object (CLI 1.0.102 sends one) read the same", () => {
    expect(toolArgsOf('{"command":"ls"}')).toEqual({ command: "ls" });
    expect(toolArgsOf({ command: "ls" })).toEqual({ command: "ls" });
    expect(toolArgsOf("not json")).toBe("not json");
  });
});
