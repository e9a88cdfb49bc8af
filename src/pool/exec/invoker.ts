/**
 * The invoker of a chain that holds exec hooks (PROFILES §6). Such a chain runs the profile executor
 * (chain/execute.ts, the one executor) in the main process, because the sandbox host must never
 * start a process; each hook then goes where it belongs:
 *
 *   hook.exec set ──► the command lane (run.ts): re-hash through the opened fd, spawn, supervise
 *                     └─► { kind: "command", run | refused }   the profile's exit-code table reads it
 *   otherwise     ──► `sandboxed(request)`: one action in the sandbox (a one-hook task, pool/supervisor.ts)
 *
 * Only JSON crosses either way, as for a whole chain in a worker: the executor hands over the input as
 * the same text for both kinds of hook, so two exec hooks of one event each read the whole input.
 */
import { VcpError } from "../../errors.js";
import type { ActionInvoker, CommandInvokeOutcome, InvokeOutcome, InvokeRequest } from "../../model/chain.js";
import { commandSpecOf, type ExecSettings } from "./spec.js";
import { runCommandHook, type CommandOptions, type CommandSpec } from "./run.js";

export interface LaneInvokerOptions {
  /** The deployment's `exec` settings (env_allow, wrapper, output cap). */
  settings: ExecSettings;
  /** Config `exec.shell`: honoured again at spawn time, whatever install saw. */
  shellAllowed: boolean;
  /** Config `exec.enabled`: checked again at spawn time; off, every script is refused (EXEC_DISABLED). */
  enabled: boolean;
  /** The profile's SIGTERM → SIGKILL grace (`EventProfile.failure.term_grace_ms`; ai-memory 0). */
  termGraceMs: number;
  /** Write the input as one line (with a final newline), as ai-memory's wire does; default the JSON alone. */
  stdinLine?: boolean;
  /**
   * The agent's hook environment of this event (checked against the profile's documented names by the
   * runtime): set for each script next to `settings.env_allow`.
   */
  hookEnv?: Readonly<Record<string, string>>;
  /** Runs one sandboxed action (the backend's one-hook task). */
  sandboxed(request: InvokeRequest): Promise<InvokeOutcome>;
}

/**
 * @example
 * ```ts
 * const invoker = createLaneInvoker({ settings: config.exec, enabled: true, shellAllowed: false, termGraceMs: 5000,
 *   sandboxed: (request) => backend.invokeAction!(request) });
 * const result = await runChain(plan, request, { invoker, clock });
 * ```
 */
export function createLaneInvoker(options: LaneInvokerOptions): ActionInvoker {
  return {
    // Each exec hook is its own process and each sandboxed one its own task: a parallel group overlaps.
    concurrent: true,
    async invoke(request: InvokeRequest): Promise<InvokeOutcome> {
      const exec = request.hook.exec;
      if (exec === undefined) return options.sandboxed(request);
      if (!options.enabled) {
        // SECURITY: the deployment's switch is the lane's first gate at spawn time too, not only at install.
        return { kind: "command", sha256: exec.sha256, refused: { code: "EXEC_DISABLED", message: `exec hook ${request.hook.name}: exec.enabled is off in this deployment; the script was not run` } };
      }
      // The executor's budget (min(timeout_ms, what the chain deadline leaves)) is the script's timeout;
      // the profile's grace and the lane's 1 s for orphaned pipes come on top (run.ts).
      const spec = commandSpecOf(exec, options.settings, { timeout_ms: Math.max(1, Math.ceil(request.budgetMs)), term_grace_ms: options.termGraceMs });
      return runExecHook(request.hook.name, spec, options.stdinLine === true ? `${request.inputJson}\n` : request.inputJson, { shellAllowed: options.shellAllowed, ...(options.hookEnv !== undefined ? { extraEnv: options.hookEnv } : {}) });
    },
  };
}

/**
 * Run one exec hook's script through the lane: how it ended, or — when it was not started (a changed
 * script: EXEC_HASH_MISMATCH; a shell string the deployment no longer allows; a file that cannot be
 * opened) — the coded refusal, never a throw. `execRecordOf` (chain/contract.ts) turns either into the
 * record results and audit carry; the profile's exit-code table reads `run`.
 *
 * @example
 * ```ts
 * const outcome = await runExecHook("guard", spec, JSON.stringify(input));
 * if (outcome.run !== undefined) profile.parseCommandResult!(outcome.run, "guard", "BeforeTool");
 * ```
 */
export async function runExecHook(hook: string, spec: CommandSpec, stdinText: string, options: CommandOptions = {}): Promise<CommandInvokeOutcome> {
  try {
    const run = await runCommandHook(spec, stdinText, options);
    return {
      kind: "command",
      sha256: run.sha256,
      run: { exitCode: run.exitCode, signal: run.signal, stdout: run.stdout, stderr: run.stderr, timedOut: run.timedOut, truncated: run.truncated, durationMs: run.durationMs },
    };
  } catch (err) {
    // The executor records the code and applies the hook's fail mode.
    const error = err instanceof VcpError ? err : new VcpError("EXEC_SPAWN_FAILED", `exec hook ${hook}: ${err instanceof Error ? err.message : String(err)}`, { hook });
    return { kind: "command", sha256: spec.sha256, refused: { code: error.code, message: error.message } };
  }
}
