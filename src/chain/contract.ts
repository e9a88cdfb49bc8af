/**
 * The chain-result and lifecycle-event contract (spec §4.3, §6.4): what a hook's record in a chain
 * result holds, what an empty chain answers, and in which order a hook's events come. The executor
 * (execute.ts), the sandbox supervisor's crash path (pool/crash.ts), the wire packing of events
 * (pool/events.ts) and the runtime's empty-chain shortcut all build them here, so they cannot drift.
 *
 * Events of one chain, per hook in plan order:
 * ```
 *  disabled / predicate false /
 *  chain deadline spent         hook.skipped
 *  executed                     hook.fired · [hook.error | hook.timeout] · hook.completed
 *  after the loop               [hook.cascade_failure]
 * ```
 * Which of error/timeout follows a `hook.fired` is fixed by the hook's outcome ({@link failureEventOf}).
 */
import type { HookType } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import type { Outcome } from "../model/result.js";
import type { ChainOrigin, InputSummary, LifecycleEvent } from "../observe/events.js";
import type { ChainRequest, ChainResult, CommandInvokeOutcome, ExecRunRecord, HookExecution } from "../model/chain.js";

/**
 * A hook's record in a chain result, before the verdict is known (`status: continue`). The
 * record names the bundle revision that ran it or was skipped (`bundle_digest`).
 *
 * @example
 * ```ts
 * const record = hookExecution(hook, "skipped_predicate", 0);
 * ```
 */
export function hookExecution(hook: ResolvedHook, outcome: Outcome, durationMs: number): HookExecution {
  const execution: HookExecution = {
    hook: hook.name,
    bundle: hook.action.bundle,
    scope: hook.scope,
    trust: hook.trust,
    status: "continue",
    outcome,
    duration_ms: durationMs,
  };
  // Which revision ran or was skipped: a skip is as much a decision of that revision as a run.
  if (hook.action.digest !== undefined) execution.bundle_digest = hook.action.digest;
  return execution;
}

/**
 * The answer for a chain with no hook to run: completed, the caller's own context and constitution
 * handed back, no hook record, no time (the fire path adds its decision). `type`: a VCP chain's hook type; `undefined` for another profile's.
 *
 * @example
 * ```ts
 * if (plan.hooks.length === 0) return emptyChainResult(vcpTypeOf(plan), request);
 * ```
 */
export function emptyChainResult(type: HookType | undefined, request: Pick<ChainRequest, "chainId" | "context" | "constitution">): ChainResult {
  return {
    chain_id: request.chainId,
    ...(type !== undefined ? { type } : {}),
    status: "completed",
    reason: null,
    aborted_by: null,
    context: request.context,
    constitution: request.constitution,
    cascade_failure: false,
    hook_results: [],
    duration_ms: 0,
  };
}

/** The event that follows `hook.fired` for an outcome: `hook.error`, `hook.timeout`, or none. */
export function failureEventOf(outcome: Outcome): "hook.error" | "hook.timeout" | undefined {
  if (outcome === "timeout") return "hook.timeout";
  // exec_nonzero / exec_signal: a script (event profiles' command lane) that failed by its profile's table.
  if (outcome === "error" || outcome === "crashed" || outcome === "invalid_result" || outcome === "exec_nonzero" || outcome === "exec_signal") return "hook.error";
  return undefined;
}

/** `hook.fired`: an executed hook is about to run on an input described by `summary`. */
export function hookFiredEvent(hook: string, origin: ChainOrigin, chainId: string, sessionId: string, summary: InputSummary): LifecycleEvent {
  return { event: "hook.fired", payload: { hook, ...origin, chain_id: chainId, session_id: sessionId, input_summary: summary } };
}

/** `hook.completed`: the last event of an executed hook, repeating its record's verdict. */
export function hookCompletedEvent(execution: HookExecution, origin: ChainOrigin, chainId: string): LifecycleEvent {
  return {
    event: "hook.completed",
    payload: { hook: execution.hook, ...origin, chain_id: chainId, status: execution.status, outcome: execution.outcome, duration_ms: execution.duration_ms },
  };
}

/**
 * The error text of a hook stopped at its own `timeout_ms` (spec §5.4), in VCP and event-profile
 * chains alike.
 */
export function timeoutText(elapsedMs: number, budgetMs: number, timeoutMs: number): string {
  return `timed out after ${Math.round(elapsedMs)} ms (budget ${budgetMs} ms, timeout_ms ${timeoutMs})`;
}

/**
 * The error text of a hook the whole-chain deadline stopped before its own `timeout_ms`
 * (`deadline_exceeded`, DESIGN §4.3): the deadline, not the hook, ran out.
 */
export function deadlineCutText(elapsedMs: number, budgetMs: number, timeoutMs: number): string {
  return `stopped by the chain deadline after ${Math.round(elapsedMs)} ms: the deadline left it ${budgetMs} ms of its timeout_ms ${timeoutMs}`;
}

/**
 * The one record of an exec hook's run (PROFILES §6) that results, audit and status carry: how the
 * script ended, or the code it was refused with before it started.
 *
 * @example
 * ```ts
 * execution.exec = execRecordOf(await runExecHook("guard", spec, inputJson)); // { command_sha256, exit_code: 2, … }
 * ```
 */
export function execRecordOf(invoked: CommandInvokeOutcome): ExecRunRecord {
  const run = invoked.run;
  return {
    command_sha256: invoked.sha256,
    exit_code: run?.exitCode ?? null,
    signal: run?.signal ?? null,
    duration_ms: run?.durationMs ?? 0,
    timed_out: run?.timedOut === true,
    truncated: run?.truncated === true,
    ...(invoked.refused !== undefined ? { error_code: invoked.refused.code } : {}),
  };
}
