/**
 * An exec hook's run as the chain sees it: the command lane's raw result turned into a native output by
 * the profile's exit-code table (PROFILES §3.2, §3.3, §3.5), plus the record that marks it unsandboxed.
 * The profile's parser is a parameter: this file knows the lane, not any agent's protocol.
 */
import { VcpError } from "../../errors.js";
import type { CommandResult as ProfileCommandResult, ParsedCommand } from "../../profiles/types.js";
import { runCommandHook, type CommandOptions, type CommandResult, type CommandSpec } from "./run.js";

/** What a profile's `parseCommandResult` reads: the process's end and output. */
export interface CommandOutcome {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * A profile's exit-code table (`EventProfile.parseCommandResult`): `(result, hook name, event) →
 * { output, failure? }`. Pure. `failure` set ⇒ the run failed (the caller applies the profile's
 * failure rule: `failureOutput`, or its blocking answer for a fail-closed hook).
 */
export type ParseCommandResult = (result: ProfileCommandResult, hook: string, event: string) => ParsedCommand;

/** Per-hook record for results, audit and status (PROFILES §6). */
export interface ExecRecord {
  readonly hook: string;
  readonly sandboxed: false;
  readonly command_sha256: string;
  readonly exit_code: number | null;
  readonly signal: string | null;
  readonly duration_ms: number;
  readonly timed_out: boolean;
  readonly truncated: boolean;
  /** `ok` (exit 0), `exec_nonzero`, `exec_signal` (killed, timeout included) or `exec_refused` (not run). */
  readonly outcome: "ok" | "exec_nonzero" | "exec_signal" | "exec_refused";
  /** For `exec_refused`: the error code (`EXEC_HASH_MISMATCH`, …). */
  readonly error_code?: string;
}

export interface ExecHookRun {
  /** The profile's reading of the run; `undefined` when the hook was refused before it started. */
  readonly output: Record<string, unknown> | undefined;
  /** Set when the profile's table reads the run as a failure (timeout, signal, an exit code that is not a decision). */
  readonly failure?: string;
  readonly record: ExecRecord;
  readonly raw?: CommandResult;
  /** Why it was not run (a coded error the caller audits and treats as the hook's failure). */
  readonly error?: VcpError;
}

/**
 * Run one exec hook and parse its result with the profile's table. A refused hook (changed file, shell
 * not allowed, missing executable) does not throw: it comes back with `error` set and `output`
 * undefined, so the chain applies the profile's failure rule (`failureOutput`) and the audit names the code.
 *
 * @example
 * ```ts
 * const run = await runExecHook("guard", "BeforeTool", spec, JSON.stringify(input), geminiParse);
 * outputs.push(run.output ?? profile.failureOutput("guard", run.error!.message, failClosed, "BeforeTool", ctx));
 * ```
 */
export async function runExecHook(
  hook: string,
  event: string,
  spec: CommandSpec,
  stdinText: string,
  parse: ParseCommandResult,
  options: CommandOptions = {},
): Promise<ExecHookRun> {
  let raw: CommandResult;
  try {
    raw = await runCommandHook(spec, stdinText, options);
  } catch (err) {
    const error = err instanceof VcpError ? err : new VcpError("EXEC_SPAWN_FAILED", `exec hook ${hook}: ${(err as Error).message}`, { hook });
    return {
      output: undefined,
      error,
      record: { hook, sandboxed: false, command_sha256: spec.sha256, exit_code: null, signal: null, duration_ms: 0, timed_out: false, truncated: false, outcome: "exec_refused", error_code: error.code },
    };
  }
  const outcome = raw.signal !== null || raw.timedOut ? "exec_signal" : raw.exitCode === 0 ? "ok" : "exec_nonzero";
  const parsed = parse({ exitCode: raw.exitCode, signal: raw.signal, stdout: raw.stdout, stderr: raw.stderr, timedOut: raw.timedOut }, hook, event);
  return {
    output: parsed.output,
    ...(parsed.failure !== undefined ? { failure: parsed.failure } : {}),
    raw,
    record: {
      hook,
      sandboxed: false,
      command_sha256: raw.sha256,
      exit_code: raw.exitCode,
      signal: raw.signal,
      duration_ms: raw.durationMs,
      timed_out: raw.timedOut,
      truncated: raw.truncated,
      outcome,
    },
  };
}

/**
 * Several exec hooks on one event, as upstream runs them in parallel: each gets the whole `stdinText`
 * on its own pipe (no shared stream to drain), and the results come back in plan order.
 */
export function runExecHooks(
  hooks: ReadonlyArray<{ name: string; spec: CommandSpec }>,
  event: string,
  stdinText: string,
  parse: ParseCommandResult,
  options: CommandOptions = {},
): Promise<ExecHookRun[]> {
  return Promise.all(hooks.map((h) => runExecHook(h.name, event, h.spec, stdinText, parse, options)));
}
