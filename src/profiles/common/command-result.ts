/**
 * How an agent reads one finished command hook (EventProfile `parseCommandResult`, PROFILES §3.2,
 * §3.3): the rule every Claude-shaped host shares, once. A profile passes only what its host does
 * differently (an {@link ExitCodeTable}): what exit 2 means, what plain text on stdout says, the host's
 * own words for a failure. Pure.
 *
 * | run                                    | shared rule                                                  |
 * |----------------------------------------|--------------------------------------------------------------|
 * | timed out, killed, no exit status      | failed: `timed out`, `killed by <signal>`, `exited without a status` |
 * | exit 0, stdout empty (after trimming)  | no answer (`{}`)                                             |
 * | exit 0, stdout a JSON object           | that object (a JSON string holding one is unwrapped once)    |
 * | exit 0, other text                     | the host's `plainStdout` (default: no answer)                |
 * | exit N ≠ 0 the host gives no meaning   | failed: `exit code N: <stderr>` (stderr trimmed, when any)   |
 *
 * A failed run's output is the profile's fail-open answer (`failed`), whatever made it fail: a script
 * that exits 1 is reported as a timeout is. The executor replaces it by the blocking answer when the
 * hook is `fail_closed` (chain/execute.ts).
 *
 * @module
 */
import { parseJsonObject } from "./native.js";
import type { CommandResult, NativeObject, ParsedCommand } from "../types.js";

/** The reason of an exit 2 whose stderr is empty, on the hosts that block on exit 2 without one (Claude Code, VS Code, Cursor). */
export const EXIT_2_WITHOUT_REASON = "Hook exited with code 2";

/** How a failed run is worded: the shared words, or the host's own where the user reads those (Codex). */
export interface FailureWords {
  /** A non-zero exit: `exit code 1`. */
  exitCode(code: number): string;
  /** A run that ended with no exit status and no signal. */
  readonly noStatus: string;
}

const SHARED_WORDS: FailureWords = { exitCode: (code) => `exit code ${code}`, noStatus: "exited without a status" };

/** What a host does differently from the shared rule (see the module's table). */
export interface ExitCodeTable {
  /** The output of a failed run: the profile's fail-open `failureOutput(hook, why, false, event)`. */
  failed(why: string): NativeObject;
  /** Exit 0 with stdout (trimmed, not empty) that is not a JSON object. Default: no answer. */
  plainStdout?(text: string): ParsedCommand;
  /**
   * A non-zero exit the host gives a meaning (exit 2 blocks on most hosts), with stderr and stdout
   * trimmed; `undefined` leaves the run to the shared rule (a failure naming the code and stderr).
   */
  exitCode?(code: number, stderr: string, stdout: string): ParsedCommand | undefined;
  /** Default: `exit code N`, `exited without a status`. */
  words?: FailureWords;
}

/**
 * Why a run that did not exit by itself failed — timed out, killed by a signal, or ended with no exit
 * status — or `undefined` when it exited with a code.
 *
 * @example
 * ```ts
 * unfinishedRun({ exitCode: null, signal: "SIGKILL", stdout: "", stderr: "" }); // "killed by SIGKILL"
 * ```
 */
export function unfinishedRun(result: CommandResult, words: FailureWords = SHARED_WORDS): string | undefined {
  if (result.timedOut === true) return "timed out";
  if (result.signal) return `killed by ${result.signal}`;
  if (result.exitCode === null) return words.noStatus;
  return undefined;
}

/**
 * The failure of a run that exited with `code`, naming its stderr (already trimmed) when there is any.
 *
 * @example
 * ```ts
 * exitFailure(1, "disk full"); // "exit code 1: disk full"
 * ```
 */
export function exitFailure(code: number, stderr: string, words: FailureWords = SHARED_WORDS): string {
  const what = words.exitCode(code);
  return stderr === "" ? what : `${what}: ${stderr}`;
}

/**
 * Read a finished command hook by the shared rule and the host's `table`.
 *
 * @example
 * ```ts
 * readCommandResult({ exitCode: 2, stdout: "", stderr: "no rm" }, {
 *   failed: (why) => ({ systemMessage: `Warning: h: ${why}` }),
 *   exitCode: (code, stderr) => (code === 2 ? { output: { decision: "block", reason: stderr } } : undefined),
 * }); // { output: { decision: "block", reason: "no rm" } }
 * ```
 */
export function readCommandResult(result: CommandResult, table: ExitCodeTable): ParsedCommand {
  const unfinished = unfinishedRun(result, table.words);
  if (unfinished !== undefined) return { output: table.failed(unfinished), failure: unfinished };
  const code = result.exitCode as number;
  const stdout = result.stdout.trim();
  if (code === 0) {
    if (stdout === "") return { output: {} };
    const json = parseJsonObject(stdout);
    if (json !== undefined) return { output: json };
    return table.plainStdout?.(stdout) ?? { output: {} };
  }
  const stderr = result.stderr.trim();
  const own = table.exitCode?.(code, stderr, stdout);
  if (own !== undefined) return own;
  const why = exitFailure(code, stderr, table.words);
  return { output: table.failed(why), failure: why };
}
