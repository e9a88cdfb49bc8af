import type { ChainRequest, HookExecution } from "../chain/types.js";
import type { ResolvedHook } from "../model/hook.js";
import type { LifecycleEvent } from "../observe/events.js";
import type { ChainValue } from "./protocol.js";
import type { SlotRecord } from "./slots.js";

/**
 * What the supervisor concludes from the slot records of a dead host (see slots.ts).
 *
 * ```
 *  records of pending tasks ──▶ running: taskId → hook inside its action when the host died
 *                                │
 *    any "X" (isolated-vm catastrophic callback)       → those digests are culprits
 *    else a pending bundle load ("L") was running too  → every "I" digest becomes a suspect
 *    else exactly one "I"                              → its digest is the culprit
 *    else several "I", exactly one of a suspect digest → that digest is the culprit
 *    else several "I"                                  → all of them become suspects (no quarantine)
 * ```
 *
 * Suspects run one chain at a time (like slow bundles), so a second crash by the same code is
 * unambiguous and quarantines it, while innocent bystanders are never quarantined on one crash.
 */
export interface CrashAttribution {
  /** taskId → name of the hook that was inside its action. */
  running: Map<number, string>;
  /** digest → the task and hook that crashed the host. */
  culprits: Map<string, { taskId: number; hook: string; why: "catastrophic" | "only-running" | "repeat-suspect" | "overran" | "wedged" }>;
  /** Digests that were running during an ambiguous crash. */
  suspects: string[];
}

export function attributeCrash(
  records: readonly SlotRecord[],
  digestOf: (taskId: number, hook: string) => string | undefined,
  isSuspect: (digest: string) => boolean,
  isPendingLoad: (taskId: number) => boolean = () => false,
): CrashAttribution {
  const running = new Map<number, string>();
  const culprits: CrashAttribution["culprits"] = new Map();
  const invoking: { taskId: number; hook: string; digest: string }[] = [];
  let loading = false;
  for (const record of records) {
    if (record.phase === "L") {
      loading ||= isPendingLoad(record.taskId);
      continue;
    }
    if (record.phase === "C" || record.hook === undefined) continue;
    const digest = digestOf(record.taskId, record.hook);
    if (digest === undefined) continue; // stale record of a task that already finished
    running.set(record.taskId, record.hook);
    if (record.phase === "X") culprits.set(digest, { taskId: record.taskId, hook: record.hook, why: "catastrophic" });
    else invoking.push({ taskId: record.taskId, hook: record.hook, digest });
  }
  const suspects: string[] = [];
  if (culprits.size === 0 && invoking.length > 0) {
    const distinct = new Set(invoking.map((i) => i.digest));
    const repeat = invoking.filter((i) => isSuspect(i.digest));
    if (distinct.size === 1 && !loading) {
      const only = invoking[0]!;
      culprits.set(only.digest, { taskId: only.taskId, hook: only.hook, why: "only-running" });
    } else if (!loading && new Set(repeat.map((i) => i.digest)).size === 1) {
      const only = repeat[0]!;
      culprits.set(only.digest, { taskId: only.taskId, hook: only.hook, why: "repeat-suspect" });
    } else {
      suspects.push(...distinct);
    }
  }
  return { running, culprits, suspects };
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
  plan: { type: ChainValue["result"]["type"] },
  request: ChainRequest,
  hook: ResolvedHook,
  durationMs: number,
  error: string,
  outcome: "crashed" | "timeout" = "crashed",
): ChainValue {
  const failClosed = hook.fail_closed && plan.type !== "periodic";
  const execution: HookExecution = {
    hook: hook.name,
    bundle: hook.action.bundle,
    scope: hook.scope,
    trust: hook.trust,
    status: failClosed ? "abort" : "continue",
    outcome,
    duration_ms: durationMs,
    error,
  };
  const reason = outcome === "crashed" ? `fail-closed: ${hook.name}: sandbox crashed` : `fail-closed: ${hook.name}: ${error}`;
  if (failClosed) execution.reason = reason;
  const summary = {
    session_id: request.session.id,
    constitution_id: request.constitution.id,
    context_keys: Object.keys(request.context).length,
    input_bytes: approximateInputBytes(request),
  };
  const common = { hook: hook.name, type: plan.type, chain_id: request.chainId };
  // The order runChain emits for one executed hook: fired · error|timeout · completed.
  const events: LifecycleEvent[] = [
    { event: "hook.fired", payload: { ...common, session_id: request.session.id, input_summary: { ...summary } } },
    outcome === "crashed"
      ? { event: "hook.error", payload: { ...common, outcome, error, input_summary: summary } }
      : { event: "hook.timeout", payload: { ...common, timeout_ms: hook.timeout_ms, elapsed_ms: durationMs, input_summary: summary } },
    {
      event: "hook.completed",
      payload: { ...common, status: execution.status, outcome, duration_ms: durationMs },
    },
  ];
  return {
    result: {
      chain_id: request.chainId,
      type: plan.type,
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
