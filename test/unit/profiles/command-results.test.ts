// How each agent profile reads a finished command hook (EventProfile.parseCommandResult; the shared rule
// is src/profiles/common/command-result.ts). A failed run is the hook's failure whatever made it fail:
// a script that exits 1 reaches the user as the same warning a timeout does, and a killed run names
// its signal. What exit 2 means stays each host's own.
import { describe, expect, test } from "vitest";
import { getProfile } from "../../../src/profiles/index.js";
import type { CommandResult } from "../../../src/profiles/types.js";

const run = (over: Partial<CommandResult>): CommandResult => ({ exitCode: 0, signal: null, stdout: "", stderr: "", ...over });
const parse = (profile: string, result: CommandResult, event: string) => getProfile(profile).parseCommandResult!(result, "guard", event);

describe("a script that exits 1 warns the user, as its timeout does", () => {
  test.each([
    ["claude-code", "PreToolUse", "exit code 1: disk full"],
    ["vscode", "PreToolUse", "exit code 1: disk full"],
    // Codex's own words, which its UI shows for a failed hook.
    ["codex", "PreToolUse", "hook exited with code 1: disk full"],
  ])("%s", (profile, event, why) => {
    const exited = parse(profile, run({ exitCode: 1, stderr: " disk full\n" }), event);
    expect(exited).toEqual({ output: { systemMessage: `Warning: guard: ${why}` }, failure: why });
    const timedOut = parse(profile, run({ exitCode: null, signal: "SIGTERM", timedOut: true }), event);
    expect(timedOut).toEqual({ output: { systemMessage: "Warning: guard: timed out" }, failure: "timed out" });
  });

  test("hosts that say nothing for a failed hook still say nothing (Copilot, Cursor, OpenHands, goose)", () => {
    for (const [profile, event] of [["copilot", "preToolUse"], ["cursor", "preToolUse"], ["openhands", "PreToolUse"], ["goose", "PreToolUse"]] as const) {
      expect(parse(profile, run({ exitCode: 1, stderr: "disk full" }), event).output, profile).toEqual({});
    }
  });
});

describe("the shared parts of the rule, on every profile that reads exit codes", () => {
  const readers = ["claude-code", "codex", "copilot", "vscode", "cursor", "openhands", "llxprt", "gemini-cli", "repo-yaml"] as const;
  const events: Record<(typeof readers)[number], string> = {
    "claude-code": "PreToolUse", codex: "PreToolUse", copilot: "preToolUse", vscode: "PreToolUse", cursor: "preToolUse",
    openhands: "PreToolUse", llxprt: "BeforeTool", "gemini-cli": "BeforeTool", "repo-yaml": "PreAbilityCall",
  };

  test.each(readers)("%s: a killed run names its signal; exit 0 with a JSON object is that object; empty stdout says nothing", (profile) => {
    const event = events[profile];
    expect(parse(profile, run({ exitCode: null, signal: "SIGKILL" }), event).failure).toBe("killed by SIGKILL");
    expect(parse(profile, run({ stdout: ' {"reason":"r"}\n' }), event)).toEqual({ output: { reason: "r" } });
    expect(parse(profile, run({ stdout: " \n" }), event)).toEqual({ output: {} });
  });
});

describe("exit 2 stays each host's own", () => {
  test.each([
    ["claude-code", "PreToolUse", { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Hook exited with code 2" } }],
    ["vscode", "PreToolUse", { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "Hook exited with code 2" } }],
    ["cursor", "beforeShellExecution", { permission: "deny", user_message: "Hook exited with code 2", agent_message: "Hook exited with code 2" }],
    ["copilot", "preToolUse", { permissionDecision: "deny", permissionDecisionReason: "hook exited with code 2" }],
    ["openhands", "PreToolUse", { decision: "deny", reason: "Blocked by hook" }],
    ["goose", "PreToolUse", { decision: "block", reason: expect.any(String) }],
  ])("%s %s, no stderr: blocked with the host's reason", (profile, event, output) => {
    expect(parse(profile, run({ exitCode: 2 }), event)).toEqual({ output });
  });

  test("codex: exit 2 without a reason on stderr is a failed hook, in Codex's words", () => {
    const why = "PreToolUse hook exited with code 2 but did not write a blocking reason to stderr";
    expect(parse("codex", run({ exitCode: 2 }), "PreToolUse")).toEqual({ output: { systemMessage: `Warning: guard: ${why}` }, failure: why });
  });
});
