/**
 * The command-hook exit-code/stdout table of PROFILES §3.2, every row, gemini-cli and llxprt columns
 * side by side (the exec lane and the adapter read command hooks with these functions).
 */
import { describe, expect, test } from "vitest";
import { parseCommandResult as gemini } from "../../../../src/profiles/gemini-cli/index.js";
import { parseCommandResult as llxprt } from "../../../../src/profiles/llxprt/index.js";

type Row = [string, { exitCode: number | null; stdout: string; stderr: string; signal?: string; timedOut?: boolean }, unknown, unknown];

const warn = (why: string) => ({ decision: "allow", systemMessage: `Warning: h: ${why}` });

const ROWS: Row[] = [
  ["exit 0 + JSON: used", { exitCode: 0, stdout: '{"decision":"block","reason":"r"}', stderr: "" },
    { output: { decision: "block", reason: "r" } }, { output: { decision: "block", reason: "r" } }],
  ["exit 0 + double-encoded JSON: used", { exitCode: 0, stdout: JSON.stringify('{"decision":"deny"}'), stderr: "" },
    { output: { decision: "deny" } }, { output: { decision: "deny" } }],
  ["exit 0 + non-JSON text: allow + systemMessage", { exitCode: 0, stdout: " hi there \n", stderr: "" },
    { output: { decision: "allow", systemMessage: "hi there" } }, { output: { decision: "allow", systemMessage: "hi there" } }],
  ["exit 0, empty: allow, nothing else", { exitCode: 0, stdout: "", stderr: "" }, { output: {} }, { output: {} }],
  ["exit 0, empty stdout, text on stderr: gemini reads stderr, llxprt does not", { exitCode: 0, stdout: "", stderr: "note" },
    { output: { decision: "allow", systemMessage: "note" } }, { output: {} }],
  ["exit 1 + stderr: Warning", { exitCode: 1, stdout: "", stderr: "oops" },
    { output: { decision: "allow", systemMessage: "Warning: oops" }, failure: "exit code 1: oops" },
    { output: { decision: "allow", systemMessage: "Warning: oops" }, failure: "exit code 1: oops" }],
  ["exit 1 + stdout only: gemini warns with it, llxprt contributes nothing", { exitCode: 1, stdout: "partial", stderr: "" },
    { output: { decision: "allow", systemMessage: "Warning: partial" }, failure: "exit code 1: partial" },
    { output: {}, failure: "exit code 1" }],
  ["exit 2 + stderr: deny with it", { exitCode: 2, stdout: "", stderr: "no rm" },
    { output: { decision: "deny", reason: "no rm" } }, { output: { decision: "deny", reason: "no rm" } }],
  ["exit 2, no text: gemini nothing, llxprt deny with the fixed text", { exitCode: 2, stdout: "", stderr: "" },
    { output: {} }, { output: { decision: "deny", reason: "Hook exited with code 2 without an error message" } }],
  ["exit 2 + JSON: gemini lets the JSON decide, llxprt denies", { exitCode: 2, stdout: '{"decision":"allow"}', stderr: "" },
    { output: { decision: "allow" } }, { output: { decision: "deny", reason: "Hook exited with code 2 without an error message" } }],
  ["exit 3 + text: gemini deny, llxprt Warning", { exitCode: 3, stdout: "", stderr: "bad" },
    { output: { decision: "deny", reason: "bad" }, failure: "exit code 3: bad" },
    { output: { decision: "allow", systemMessage: "Warning: bad" }, failure: "exit code 3: bad" }],
  ["killed by a signal: failure (fail-open)", { exitCode: null, signal: "SIGKILL", stdout: "", stderr: "" },
    { output: warn("killed by SIGKILL"), failure: "killed by SIGKILL" }, { output: warn("killed by SIGKILL"), failure: "killed by SIGKILL" }],
  ["timed out: failure (fail-open)", { exitCode: null, signal: "SIGTERM", timedOut: true, stdout: '{"decision":"block"}', stderr: "" },
    { output: warn("timed out"), failure: "timed out" }, { output: warn("timed out"), failure: "timed out" }],
];

describe.each(ROWS)("%s", (_name, result, geminiExpected, llxprtExpected) => {
  test("gemini-cli", () => expect(gemini(result, "h", "BeforeTool")).toEqual(geminiExpected));
  test("llxprt", () => expect(llxprt(result, "h", "BeforeTool")).toEqual(llxprtExpected));
});

test("each agent profile carries its table as EventProfile.parseCommandResult (for the exec lane and the adapter)", async () => {
  const { geminiCliProfile } = await import("../../../../src/profiles/gemini-cli/index.js");
  const { llxprtProfile } = await import("../../../../src/profiles/llxprt/index.js");
  const { claudeCodeProfile } = await import("../../../../src/profiles/claude-code/index.js");
  const exit2 = { exitCode: 2, stdout: '{"decision":"allow"}', stderr: "" };
  expect(geminiCliProfile.parseCommandResult(exit2, "h", "BeforeTool").output).toEqual({ decision: "allow" });
  expect(llxprtProfile.parseCommandResult(exit2, "h", "BeforeTool").output).toMatchObject({ decision: "deny" });
  expect(claudeCodeProfile.parseCommandResult?.(exit2, "h", "PreToolUse").output).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
});
