import type { ResolvedHook } from "../model/hook.js";
import type { CrashAttribution, CulpritReason, HookIdentity } from "./crash.js";
import { HOST_EXIT_PROTOCOL } from "./frames.js";
import type { HostKill } from "./watchdog.js";

/** A chain that was in flight when the host died, as recovery sees it. */
export interface InFlightChain {
  readonly id: number;
  readonly chainId: string;
  /** How often it was sent to a host (a chain is re-run at most once). */
  readonly dispatches: number;
  /** The hook list sent with it (positions in slot records index it). */
  readonly hooks: readonly ResolvedHook[];
}

/** What the answer for a chain recovery does not re-run says: which hook, which outcome, why. */
export interface CrashAnswer<C extends InFlightChain> {
  chain: C;
  hook: ResolvedHook;
  outcome: "crashed" | "timeout";
  error: string;
}

export interface Culprit {
  digest: string;
  taskId: number;
  hook: HookIdentity;
  why: CulpritReason;
  chainId?: string;
}

/** The decisions of one crash recovery; the supervisor carries them out (answers, queue, quarantine). */
export interface RecoveryPlan<C extends InFlightChain> {
  /** Bystanders, in their original order: back to the front of the queue, for one more run. */
  requeue: C[];
  /** Chains answered now with a `crashed` (or `timeout`) result for the hook they were in. */
  answers: CrashAnswer<C>[];
  /** Revisions to quarantine: they alone could have killed the host. */
  culprits: Culprit[];
  /** Revisions that ran during an ambiguous crash: they run alone until they pass probation. */
  suspects: string[];
  /** How the host died, for error texts and logs. */
  how: string;
  /** Task id of a bundle load that was the only code running (its bundle killed the host). */
  soleLoad?: number;
}

/**
 * The host died with work in flight (DESIGN §4.1): decide who is blamed and who runs again. Pure:
 * starts no process and reads no file, so every branch is unit-tested.
 *
 * ```
 *  watchdog named the overrunning hook ─▶ that hook is the culprit, every other chain a bystander
 *  otherwise                           ─▶ slot attribution (crash.ts): culprits, or suspects only
 *  culprit's chain                     ─▶ answered: `timeout` (overran), `crashed` (wedged, died)
 *  a bystander's first run             ─▶ requeued (guest side effects are data only: a rerun is safe)
 *  a bystander's second run            ─▶ answered `crashed`: it died twice
 * ```
 *
 * When the crash cannot be pinned on one bundle nobody is blamed yet: every chain is requeued once
 * and, its bundles now being suspects, runs alone; the culprit's chain then kills the host with
 * nothing else running (certain), and the bystanders are answered by their own second runs.
 */
export function planRecovery<C extends InFlightChain>(
  chains: readonly C[],
  slotAttribution: CrashAttribution,
  kill: HostKill | undefined,
  exit: { code: number | null; signal: NodeJS.Signals | null },
): RecoveryPlan<C> {
  let attribution = slotAttribution;
  if (kill !== undefined && (kill.kind === "overrun" || kill.kind === "wedged") && kill.hook !== undefined) {
    // The watchdog saw who overran: that hook is the culprit, the other running hooks are bystanders.
    const running = new Map(attribution.running);
    running.set(kill.taskId, kill.hook);
    attribution = {
      running,
      culprits: new Map([[kill.hook.digest, { taskId: kill.taskId, hook: kill.hook, why: kill.kind === "overrun" ? "overran" : "wedged" }]]),
      suspects: [],
    };
  }
  const how = kill !== undefined ? `killed by the supervisor: ${kill.detail}` : exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
  if (kill?.kind === "protocol" || (kill === undefined && exit.code === HOST_EXIT_PROTOCOL)) return protocolRecovery(chains, how);
  const culpritTasks = new Set([...attribution.culprits.values()].map((c) => c.taskId));
  const requeue: C[] = [];
  const answers: CrashAnswer<C>[] = [];
  for (const chain of [...chains].sort((a, b) => a.id - b.id)) {
    const runningHook = attribution.running.get(chain.id);
    if (!culpritTasks.has(chain.id) && chain.dispatches < 2) {
      requeue.push(chain);
      continue;
    }
    const hook = (runningHook !== undefined ? chain.hooks[runningHook.position] : undefined) ?? chain.hooks.find((h) => h.enabled) ?? chain.hooks[0]!;
    const isCulprit = kill?.hook !== undefined && kill.taskId === chain.id && runningHook?.position === kill.hook.position;
    if (isCulprit && kill.kind === "overrun") {
      answers.push({
        chain,
        hook,
        outcome: "timeout",
        error: `timed out: the hook kept running past its budget and ignored termination (${kill.detail}); the sandbox host process was recycled`,
      });
    } else if (isCulprit && kill.kind === "wedged") {
      answers.push({
        chain,
        hook,
        outcome: "crashed",
        error: `sandbox host crashed while the hook ran: ${kill.detail}; the supervisor killed and recycled the host process`,
      });
    } else {
      answers.push({ chain, hook, outcome: "crashed", error: `sandbox host crashed while the hook ran (${how})` });
    }
  }
  const culprits: Culprit[] = [];
  for (const [digest, culprit] of attribution.culprits) {
    const chainId = chains.find((c) => c.id === culprit.taskId)?.chainId;
    culprits.push({ digest, ...culprit, ...(chainId !== undefined ? { chainId } : {}) });
  }
  return { requeue, answers, culprits, suspects: attribution.suspects, how, ...(attribution.soleLoad !== undefined ? { soleLoad: attribution.soleLoad } : {}) };
}

/**
 * The frame stream between the processes was corrupt (frames.ts): no guest code is to blame and no
 * reply of that stream can be trusted, so nobody is quarantined or requeued; every chain in flight is
 * answered `crashed` now. For the hook of the answer a fail_closed hook comes first (the chain aborts:
 * its verdict is unknown), then the first enabled hook.
 */
function protocolRecovery<C extends InFlightChain>(chains: readonly C[], how: string): RecoveryPlan<C> {
  const answers: CrashAnswer<C>[] = [];
  for (const chain of [...chains].sort((a, b) => a.id - b.id)) {
    const hook = chain.hooks.find((h) => h.enabled && h.fail_closed) ?? chain.hooks.find((h) => h.enabled) ?? chain.hooks[0]!;
    answers.push({ chain, hook, outcome: "crashed", error: `sandbox host crashed: corrupt frame stream (${how}); the host process was recycled` });
  }
  return { requeue: [], answers, culprits: [], suspects: [], how };
}
