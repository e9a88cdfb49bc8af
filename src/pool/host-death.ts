import type { BundleRegistry, QuarantineInfo } from "./bundle-registry.js";
import type { ChainQueue } from "./chain-queue.js";
import { attributeCrash, crashedChainValue, hookIdentityAt, type PendingTaskView } from "./crash.js";
import type { HostCalls } from "./host-calls.js";
import type { HostHandle } from "./host-process.js";
import { planRecovery } from "./recovery.js";
import type { SlotRecord } from "./slots.js";
import type { HostKill } from "./watchdog.js";

/** How one host ended, as the supervisor learned it. */
export interface HostDeath {
  /** Slot records of the dead generation (slots.ts): who was inside which hook. */
  readonly records: readonly SlotRecord[];
  /** Set when the supervisor killed it (watchdog, corrupt frames). */
  readonly kill: HostKill | undefined;
  readonly exit: { code: number | null; signal: NodeJS.Signals | null };
  /** performance.now() of the death: the clock of dispatch times. */
  readonly now: number;
}

/** What the death did, for the restart log and event (the parts are already updated). */
export interface HostDeathOutcome {
  /** How the host died, for error texts and logs. */
  how: string;
  /** Revisions quarantined for it, with why. */
  culprits: QuarantineInfo[];
  /** Revisions now on probation (their chains run alone). */
  suspects: string[];
  /** Chains answered `crashed` or `timeout`. */
  crashedChains: number;
  /** Chains back at the front of the queue for one more run. */
  requeuedChains: number;
}

/**
 * The host died with work in flight (DESIGN §4.1): attribute it (crash.ts), decide (recovery.ts), and
 * carry the decision out on the parts — the culprit's chain answered `crashed` or `timeout`, the
 * bystanders requeued, pending loads failed, culprits quarantined, suspects put on probation. Starts
 * no process and reads no file: the supervisor passes the slot records and restarts the host after.
 *
 * ```
 *  slot records ─▶ attributeCrash (only tasks still pending count) ─▶ planRecovery
 *      answers ─▶ chain.resolve(crashed/timeout result)      requeue ─▶ front of the queue
 *      culprits ─▶ bundles.quarantine                         suspects ─▶ bundles.suspect
 *      loads in flight ─▶ INVALID_BUNDLE (`sole` when that load was the only code running)
 * ```
 */
export function settleHostDeath(death: HostDeath, parts: { chains: ChainQueue; calls: HostCalls; bundles: BundleRegistry }): HostDeathOutcome {
  const { chains, calls, bundles } = parts;
  const { kill, now } = death;
  // Attribution reads the tasks still pending, so it runs before anything is answered.
  const attribution = attributeCrash(death.records, (taskId) => pendingTaskView(parts, taskId));
  const plan = planRecovery(chains.takeInFlight(), attribution, kill, death.exit);
  for (const { chain, hook, outcome, error } of plan.answers) {
    chain.resolve(crashedChainValue(chain.task.plan, chain.task.request, hook, now - chain.dispatchedAt, error, outcome));
  }
  chains.requeueFirst(plan.requeue);
  // `sole`: the load was the only code running (or the watchdog caught it wedged), so its bundle killed the host.
  calls.hostDied(plan.how, (id) => plan.soleLoad === id || (kill?.kind === "load" && kill.taskId === id));

  const culprits: QuarantineInfo[] = [];
  for (const culprit of plan.culprits) {
    const info: QuarantineInfo = {
      digest: culprit.digest,
      bundle: bundles.nameOf(culprit.digest),
      hook: culprit.hook.hook,
      scope: culprit.hook.scope,
      ...(culprit.hook.sessionId !== undefined ? { session_id: culprit.hook.sessionId } : {}),
      reason: `was running when the sandbox host died (${plan.how}; ${culprit.why})`,
      ...(culprit.chainId !== undefined ? { chain_id: culprit.chainId } : {}),
    };
    bundles.quarantine(info);
    culprits.push(info);
  }
  for (const digest of plan.suspects) bundles.suspect(digest, now);
  return { how: plan.how, culprits, suspects: plan.suspects, crashedChains: plan.answers.length, requeuedChains: plan.requeue.length };
}

/** What the restart log line and the `restart` event say about one death. */
export function deathReport(host: HostHandle, death: HostDeath, outcome: HostDeathOutcome): Record<string, unknown> {
  return {
    ...(death.kill !== undefined ? { watchdog: death.kill.kind } : {}),
    generation: host.generation,
    pid: host.child.pid,
    code: death.exit.code,
    signal: death.exit.signal,
    crashedChains: outcome.crashedChains,
    requeuedChains: outcome.requeuedChains,
    culprits: outcome.culprits,
    suspects: outcome.suspects,
    stderrTail: host.stderrTail.slice(-2048),
  };
}

/** What attribution may know about a task named in a slot record; undefined once it is answered. */
function pendingTaskView(parts: { chains: ChainQueue; calls: HostCalls }, taskId: number): PendingTaskView | undefined {
  const entry = parts.chains.inFlight.get(taskId);
  if (entry !== undefined) {
    return { digests: entry.digests, hookAt: (position, name) => hookIdentityAt(entry.hooks, position, name) };
  }
  const loadDigest = parts.calls.loadDigest(taskId);
  return loadDigest !== undefined ? { digests: [], loadDigest, hookAt: () => undefined } : undefined;
}
