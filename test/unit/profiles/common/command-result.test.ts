// The command-result rule every agent profile shares (src/profiles/common/command-result.ts): a run
// that did not finish failed; exit 0 means stdout is the answer; another exit code failed, naming it
// and stderr — unless the host's table gives the code a meaning.
import { describe, expect, test } from "vitest";
import { exitFailure, readCommandResult, unfinishedRun, type ExitCodeTable } from "../../../../src/profiles/common/command-result.js";
import type { CommandResult } from "../../../../src/profiles/types.js";

const run = (over: Partial<CommandResult>): CommandResult => ({ exitCode: 0, signal: null, stdout: "", stderr: "", ...over });
const warn: ExitCodeTable = { failed: (why) => ({ warning: why }) };

describe("readCommandResult", () => {
  test("a run that did not finish: timed out, killed by its signal, no status; the host's failed output", () => {
    expect(readCommandResult(run({ exitCode: null, signal: "SIGTERM", timedOut: true, stdout: '{"a":1}' }), warn)).toEqual({ output: { warning: "timed out" }, failure: "timed out" });
    expect(readCommandResult(run({ exitCode: null, signal: "SIGKILL" }), warn)).toEqual({ output: { warning: "killed by SIGKILL" }, failure: "killed by SIGKILL" });
    expect(readCommandResult(run({ exitCode: null }), warn)).toEqual({ output: { warning: "exited without a status" }, failure: "exited without a status" });
  });

  test("exit 0: empty stdout says nothing, a JSON object is the answer, other text is the host's (default nothing)", () => {
    expect(readCommandResult(run({ stdout: "\n  " }), warn)).toEqual({ output: {} });
    expect(readCommandResult(run({ stdout: ' {"decision":"block"}\n' }), warn)).toEqual({ output: { decision: "block" } });
    expect(readCommandResult(run({ stdout: JSON.stringify('{"x":1}') }), warn)).toEqual({ output: { x: 1 } });
    expect(readCommandResult(run({ stdout: "[1]" }), warn)).toEqual({ output: {} });
    expect(readCommandResult(run({ stdout: "hi\n" }), { ...warn, plainStdout: (text) => ({ output: { said: text } }) })).toEqual({ output: { said: "hi" } });
  });

  test("another exit code: failed, naming the code and the trimmed stderr, unless the host gives it a meaning", () => {
    expect(readCommandResult(run({ exitCode: 1, stderr: " oops \n" }), warn)).toEqual({ output: { warning: "exit code 1: oops" }, failure: "exit code 1: oops" });
    expect(readCommandResult(run({ exitCode: 3 }), warn)).toEqual({ output: { warning: "exit code 3" }, failure: "exit code 3" });
    const blocks: ExitCodeTable = { ...warn, exitCode: (code, stderr, stdout) => (code === 2 ? { output: { blocked: stderr, stdout } } : undefined) };
    expect(readCommandResult(run({ exitCode: 2, stderr: " no \n", stdout: " out " }), blocks)).toEqual({ output: { blocked: "no", stdout: "out" } });
    expect(readCommandResult(run({ exitCode: 4, stderr: "x" }), blocks).failure).toBe("exit code 4: x");
  });

  test("a host's own words for a failure", () => {
    const words = { exitCode: (code: number) => `hook exited with code ${code}`, noStatus: "hook exited without a status code" };
    expect(readCommandResult(run({ exitCode: 7 }), { ...warn, words }).failure).toBe("hook exited with code 7");
    expect(unfinishedRun(run({ exitCode: null }), words)).toBe("hook exited without a status code");
    expect(exitFailure(7, "e", words)).toBe("hook exited with code 7: e");
  });
});
