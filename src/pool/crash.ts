import { failureEventOf, hookCompletedEvent, hookExecution, hookFiredEvent } from "../chain/contract.js";
import { chainOriginOf, vcpTypeOf, type ProfilePlanRef } from "../chain/plan.js";
import type { ChainRequest } from "../model/chain.js";
import type { ResolvedHook } from "../model/hook.js";
import type { LifecycleEvent } from "../observe/events.js";
import type { ChainValue } from "./protocol.js";
import type { SlotRecord } from "./slots.js";

/**
 * Who a hook is, as crash attribution and quarantine see it: the bundle revision whose code ran, the
 * hook's position in the task's hook list, and — for the record — its name, scope and session. Names
 * are not unique (a session hook may be named like another bundle's deployment hook), so nothing here
 * is ever looked up by name.
 */
export interface HookIdentity {
  digest: string;
  bundle: string;
  hook: string;
  scope: "deployment" | "session";
  sessionId?: string;
  /** Position of the hook in the hook list sent with the task. */
  position: number;
}

/** What the supervisor knows about a task named in a slot record (undefined: not pending, stale record). */
export interface PendingTaskView {
  /** The hook at `position` if its name is `name`; undefined when the record does not match the list. */
  hookAt(position: number | undefined, name: string): HookIdentity | undefined;
  /** Digests of every enabled hook of the chain (empty for a load). */
  digests: readonly string[];
  /** Digest of the bundle a pending load is loading. */
  loadDigest?: string;
}

/**
 * The hook a slot record names: the one at `position` of the list sent with the task, provided its
 * name matches the record's (a cross-check, never a lookup). Undefined when they disagree or the hook
 * has no revision: such a record stays anonymous and can make a crash ambiguous, never blame a bundle.
 */
export function hookIdentityAt(hooks: readonly ResolvedHook[], position: number | undefined, name: string): HookIdentity | undefined {
  if (position === undefined) return undefined;
  const hook = hooks[position];
  const digest = hook?.action.digest;
  if (hook === undefined || hook.name !== name || digest === undefined) return undefined;
  return {
    digest,
    bundle: hook.action.bundle,
    hook: hook.name,
    scope: hook.scope,
    ...(hook.session_id !== undefined ? { sessionId: hook.session_id } : {}),
    position,
  };
}

export type CulpritReason = "only-running" | "overran" | "wedged";

/**
 * What the supervisor concludes from the slot records of a dead host (see slots.ts). Only records of
 * tasks still pending count, and "R"; each is a *participant* that may have killed the host:
 *
 * ```
 *  "I" (inside a hook)   → that hook, by position in its task's list      (one digest)
 *  "L" (load)            → the bundle being loaded (its top-level code)
 *  "C" (chain code)      → the runtime's own code working on the chain's input or its reply:
 *                          any of its digests, or the caller's input            (uncertain)
 *  "R" (runaway run)     → the bundle whose discarded run the worker ended the process for; its
 *                          hook already returned, so no hook of a pending chain is its  (uncertain)
 *  a record that does not match its task's list                          (uncertain)
 *
 *  all participants certain and of one digest             → the culprit ("only-running"); a load
 *                                                           that was the only code running is `soleLoad`
 *  else                                                   → every digest becomes a suspect, nobody
 *                                                           is quarantined
 * ```
 *
 * SECURITY: a bundle is quarantined only when no other code could have killed the host. There is no
 * "repeat suspect" rule: a bundle that was merely running during two crashes (say, a busy innocent one
 * next to two revisions of an attacker's) is no more guilty than any bystander. Suspects run alone
 * instead (supervisor.ts), so a suspect's next crash is unambiguous.
 */
export interface CrashAttribution {
  /** taskId → the hook that was inside its action. */
  running: Map<number, HookIdentity>;
  /** digest → the task and hook that crashed the host. */
  culprits: Map<string, { taskId: number; hook: HookIdentity; why: CulpritReason }>;
  /** Digests that were running during an ambiguous crash. */
  suspects: string[];
  /** Task id of a bundle load that was the only code running when the host died. */
  soleLoad?: number;
}

export function attributeCrash(records: readonly SlotRecord[], pending: (taskId: number) => PendingTaskView | undefined): CrashAttribution {
  const running = new Map<number, HookIdentity>();
  const culprits: CrashAttribution["culprits"] = new Map();
  /** Every digest any participant could stand for; `uncertain` when a participant cannot be pinned on one. */
  const possible = new Set<string>();
  let uncertain = false;
  const loads: number[] = [];
  for (const record of records) {
    if (record.phase === "R") {
      // SECURITY: the worker ended the process for this revision's runaway run; the hooks running at
      // that moment are bystanders, so the crash is never pinned on one of them alone.
      uncertain = true;
      if (record.digest !== undefined) possible.add(record.digest);
      continue;
    }
    const task = pending(record.taskId);
    if (task === undefined) continue; // stale record of a task that already finished
    switch (record.phase) {
      case "L":
        if (task.loadDigest !== undefined) possible.add(task.loadDigest);
        else uncertain = true;
        loads.push(record.taskId);
        break;
      case "C":
        // SECURITY: host code on the caller's input (predicates) or on the chain's reply; the input
        // may be the attacker's, so this never pins a crash on the chain's bundles.
        uncertain = true;
        for (const digest of task.digests) possible.add(digest);
        if (task.loadDigest !== undefined) possible.add(task.loadDigest);
        break;
      case "I": {
        const hook = record.hook === undefined ? undefined : task.hookAt(record.position, record.hook);
        if (hook === undefined) {
          // SECURITY: never fall back to a lookup by name; whatever ran there stays anonymous.
          uncertain = true;
          for (const digest of task.digests) possible.add(digest);
          break;
        }
        running.set(record.taskId, hook);
        possible.add(hook.digest);
        break;
      }
    }
  }
  const attribution: CrashAttribution = { running, culprits, suspects: [] };
  if (uncertain || possible.size !== 1) {
    attribution.suspects = [...possible];
    return attribution;
  }
  // One bundle's code and nothing else was running: it killed the host.
  const [digest] = [...possible] as [string];
  const hooked = [...running].find(([, hook]) => hook.digest === digest);
  if (hooked !== undefined) culprits.set(digest, { taskId: hooked[0], hook: hooked[1], why: "only-running" });
  if (loads.length === 1) attribution.soleLoad = loads[0]!;
  return attribution;
}

/**
 * The answer for a chain that was inside `hook` when the sandbox host died (DESIGN §4.1): the hook is
 * recorded with `outcome` and the chain goes no further. Fail-open (status `completed`, the request's
 * own context and constitution) unless the hook is `fail_closed`, which aborts the chain, exactly as
 * runChain treats a `crashed` or `timeout` invoke outcome. Results of earlier hooks of the chain died
 * with the worker and are not reported; their modifications are not applied.
 *
 * `outcome` is `crashed` when the host died (or wedged) under the hook, `timeout` when the supervisor
 * killed the host because the hook kept running past its budget, ignoring termination.
 */
export function crashedChainValue(
  plan: { profile: ProfilePlanRef },
  request: ChainRequest,
  hook: ResolvedHook,
  durationMs: number,
  error: string,
  outcome: "crashed" | "timeout" = "crashed",
): ChainValue {
  const type = vcpTypeOf(plan);
  // A periodic chain never aborts (spec §3.6): its fail-closed hook's crash is a continue, as in runChain.
  const failClosed = hook.fail_closed && type !== "periodic";
  const origin = chainOriginOf(plan.profile);
  const execution = hookExecution(hook, outcome, durationMs);
  execution.status = failClosed ? "abort" : "continue";
  // What the executor records for a failed hook: its failure output's verdict (chain/execute.ts).
  execution.verdict = hook.trust === "session" ? "observe" : failClosed ? "block" : "allow";
  execution.error = error;
  const reason = outcome === "crashed" ? `fail-closed: ${hook.name}: sandbox crashed` : `fail-closed: ${hook.name}: ${error}`;
  if (failClosed) execution.reason = reason;
  const summary = {
    session_id: request.session.id,
    constitution_id: request.constitution.id,
    context_keys: Object.keys(request.context).length,
    input_bytes: approximateInputBytes(request),
  };
  const common = { hook: hook.name, ...origin, chain_id: request.chainId };
  // The order runChain emits for one executed hook (chain/contract.ts): fired · error|timeout · completed.
  const events: LifecycleEvent[] = [
    hookFiredEvent(hook.name, origin, request.chainId, request.session.id, { ...summary }),
    failureEventOf(outcome) === "hook.error"
      ? { event: "hook.error", payload: { ...common, outcome, error, input_summary: summary } }
      : { event: "hook.timeout", payload: { ...common, timeout_ms: hook.timeout_ms, elapsed_ms: durationMs, input_summary: summary } },
    hookCompletedEvent(execution, origin, request.chainId),
  ];
  return {
    result: {
      chain_id: request.chainId,
      ...(type !== undefined ? { type } : {}),
      status: failClosed ? "aborted" : "completed",
      reason: failClosed ? reason : null,
      aborted_by: failClosed ? hook.name : null,
      context: request.context,
      constitution: request.constitution,
      cascade_failure: false,
      hook_results: [execution],
      duration_ms: durationMs,
    },
    events,
  };
}

/** Size of the HookInput the hook saw, for the input summary; only computed on the crash path. */
function approximateInputBytes(request: ChainRequest): number {
  try {
    return (
      JSON.stringify(request.context).length +
      JSON.stringify(request.constitution).length +
      JSON.stringify(request.event).length +
      JSON.stringify(request.session).length +
      80
    );
  } catch {
    return 0;
  }
}
