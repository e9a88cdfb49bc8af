import { chainTimeBoundMs } from "../chain/deadline.js";
import type { ChainResult } from "../model/chain.js";
import { VcpError } from "../errors.js";
import type { ResolvedHook } from "../model/hook.js";
import type { SlowTracker, WorkerShareTracker } from "./admission.js";
import type { ChainTask, ChainTaskResult } from "./api.js";
import { hostQueuePerThread } from "./batch.js";
import type { PlanEntry } from "./plan-cache.js";
import { graceMs } from "./watchdog.js";

/** Per executed hook, time an invoke may spend (re)creating the bundle's isolate before the action runs. */
export const HOOK_SETUP_MS = 2_000;
/** The moving average of chain durations (hostCap) follows about this many recent replies. */
const CHAIN_MS_WEIGHT = 16;

/** A chain from runChain/invokeAction until it is answered: waiting, then in flight. */
export interface PendingChain {
  readonly id: number;
  readonly chainId: string;
  readonly task: ChainTask;
  readonly plan: PlanEntry;
  /** The hooks as sent (plan.hooks): slot records name a hook by its position here. */
  readonly hooks: readonly ResolvedHook[];
  /** Digests of the enabled hooks (plan.digests). */
  readonly digests: readonly string[];
  /** Their fair-share accounts (admission.ts shareAccount), distinct. */
  readonly accounts: readonly string[];
  /** A one-action task (invokeAction): sent as `inv`. */
  readonly invoke?: { inputJson: string; budgetMs: number };
  /** In flight in the slow lane. */
  gated: boolean;
  /** In flight alone because it runs a crash suspect. */
  solo: boolean;
  /** Counted in flight per digest (from dispatch to settle). */
  counted: boolean;
  /** How often it was sent to a host (recovery re-runs a chain at most once). */
  dispatches: number;
  dispatchedAt: number;
  /** performance.now() after which the watchdog kills the host (see hardDeadline). */
  hardDeadline: number;
  resolve: (value: ChainTaskResult) => void;
  reject: (err: Error) => void;
}

export interface ChainQueueOptions {
  threads: number;
  maxQueue: number;
  slow: SlowTracker;
  /** Fair share of worker time; undefined when turned off. */
  share: WorkerShareTracker | undefined;
  /** A crash suspect on probation (bundle-registry.ts). */
  isSuspect: (digest: string, now: number) => boolean;
}

/**
 * The chains the supervisor holds, waiting (FIFO) and in flight, and admission between the two
 * (DESIGN §4.1). Starts no process: the supervisor sends what {@link admit} hands it.
 *
 * ```
 *  a chain with a crash suspect   → runs alone: waits until nothing is in flight (nothing behind it
 *                                   overtakes it meanwhile), and nothing starts until it ends
 *  a chain with a slow bundle     → at most one such chain in flight (the slow lane); others overtake it
 *  a chain with a demoted account → at most share.cap() chains of that account (a signer: every bundle
 *                                   it signed) in flight, its share of the threads; others overtake it
 *  anything else                  → up to hostCap() in flight (every thread busy plus some waiting
 *                                   for a free worker); the rest wait here, where admission and crash
 *                                   recovery can see them
 * ```
 *
 * SECURITY: a suspect runs alone so that, if it kills the host again, it is the only code that was
 * running and attribution is certain; no bystander is ever blamed for its crash.
 */
export class ChainQueue {
  readonly waiting: PendingChain[] = [];
  readonly inFlight = new Map<number, PendingChain>();
  private readonly threads: number;
  private readonly maxQueue: number;
  private readonly slow: SlowTracker;
  private readonly share: WorkerShareTracker | undefined;
  private readonly isSuspect: (digest: string, now: number) => boolean;
  private gatedInFlight = 0;
  private soloInFlight = false;
  private readonly inFlightByAccount = new Map<string, number>();
  /** Fair-share account of each loaded revision (set at load, see {@link chargeTo}). */
  private readonly accountByDigest = new Map<string, string>();
  /** Worker time per account of the chain being recorded (one reused map: this runs for every reply). */
  private readonly hookMsScratch = new Map<string, number>();
  /** Recent chain duration in the worker, ms (moving average of replies; hostCap). */
  private chainMs: number | undefined;

  constructor(options: ChainQueueOptions) {
    this.threads = options.threads;
    this.maxQueue = options.maxQueue;
    this.slow = options.slow;
    this.share = options.share;
    this.isSuspect = options.isSuspect;
  }

  /**
   * Chains in flight at most: one running per thread, plus up to min(threads × hostQueuePerThread,
   * maxQueue) waiting for a free worker (worker-channels.ts), so that under load a freed worker takes
   * several of them as one batch (batch.ts: one crossing each way per batch instead of per chain). How
   * many wait there follows the recent chain duration: about HOST_QUEUE_MS of work per thread, because
   * chains there are past admission and a chain admitted later (or a bundle demoted meanwhile) cannot
   * overtake them. The rest wait here, where admission and crash recovery see them. A chain waiting
   * for a worker counts as in flight.
   * SECURITY: on a host death it is a bystander without a slot record (requeued once, never blamed),
   * and admission caps (slow lane, fair share, suspects) count it as running.
   */
  hostCap(): number {
    return this.threads + Math.min(this.threads * hostQueuePerThread(this.chainMs), this.maxQueue);
  }

  /** Chains waiting for a thread: here, plus those the host holds beyond its threads. */
  queuedCount(): number {
    return this.waiting.length + Math.max(0, this.inFlight.size - this.threads);
  }

  /** Charge the worker time of revision `digest` to `account` (admission.ts shareAccount), from its load on. */
  chargeTo(digest: string, account: string): void {
    this.accountByDigest.set(digest, account);
  }

  /** The revision is unloaded (no chain holds it any more). Its account's record stays. */
  forgetRevision(digest: string): void {
    this.accountByDigest.delete(digest);
  }

  /** The distinct accounts of a chain's revisions (a revision never charged is its own account). */
  accountsOf(digests: readonly string[]): string[] {
    const out: string[] = [];
    for (const digest of digests) {
      const account = this.accountByDigest.get(digest) ?? digest;
      if (!out.includes(account)) out.push(account);
    }
    return out;
  }

  /** A new chain at the end of the queue; the promise is its answer. `accounts`: {@link accountsOf} its digests. */
  enqueue(id: number, task: ChainTask, plan: PlanEntry, accounts: readonly string[], invoke: PendingChain["invoke"]): Promise<ChainTaskResult> {
    return new Promise<ChainTaskResult>((resolve, reject) => {
      this.waiting.push({
        id,
        chainId: task.request.chainId,
        task,
        plan,
        hooks: plan.hooks,
        digests: plan.digests,
        accounts,
        ...(invoke !== undefined ? { invoke } : {}),
        gated: false,
        solo: false,
        counted: false,
        dispatches: 0,
        dispatchedAt: 0,
        hardDeadline: Number.POSITIVE_INFINITY,
        resolve,
        reject,
      });
    });
  }

  /** Nothing waits and nothing is in flight. */
  get idle(): boolean {
    return this.waiting.length === 0 && this.inFlight.size === 0;
  }

  /**
   * SANDBOX_OVERLOADED when a chain with these digests would have to wait and `maxQueue` chains
   * already do; undefined when it may be queued.
   */
  overloaded(digests: readonly string[], accounts: readonly string[], hostReady: boolean, now: number): VcpError | undefined {
    const gated = digests.some((d) => this.slow.isSlow(d, now) || this.isSuspect(d, now)) || accounts.some((a) => this.share?.isDemoted(a, now) === true);
    const startsNow = hostReady && this.inFlight.size < this.threads && (!gated || this.gatedInFlight === 0);
    if (startsNow || this.queuedCount() < this.maxQueue) return undefined;
    return new VcpError(
      "SANDBOX_OVERLOADED",
      `sandbox queue is full: ${this.queuedCount()} chains already wait (maxQueue ${this.maxQueue}); retry later`,
      { maxQueue: this.maxQueue, queued: this.queuedCount(), inFlight: this.inFlight.size },
    );
  }

  /**
   * Hand `send` every waiting chain admission lets go now, in queue order, each already counted in
   * flight with its hard deadline. `loadsInFlight`: a bundle load is running (a suspect waits for it).
   */
  admit(now: number, loadsInFlight: () => boolean, send: (entry: PendingChain) => void): void {
    let i = 0;
    const hostCap = this.hostCap();
    while (i < this.waiting.length && this.inFlight.size < hostCap && !this.soloInFlight) {
      const entry = this.waiting[i]!;
      if (entry.digests.some((d) => this.isSuspect(d, now))) {
        if (this.inFlight.size > 0 || loadsInFlight()) return; // drain first; keep its place
        this.waiting.splice(i, 1);
        entry.solo = true;
        this.soloInFlight = true;
        this.markInFlight(entry, now);
        send(entry);
        return;
      }
      const gated = entry.digests.some((d) => this.slow.isSlow(d, now));
      if ((gated && this.gatedInFlight > 0) || this.atShareCap(entry, now)) {
        i++; // one slow chain at a time, demoted accounts up to their cap; chains of others go ahead
        continue;
      }
      this.waiting.splice(i, 1);
      entry.gated = gated;
      if (gated) this.gatedInFlight++;
      this.markInFlight(entry, now);
      send(entry);
    }
  }

  /** Out of the in-flight table (answered, unsendable, or its host died); its admission counts released. */
  settle(entry: PendingChain): void {
    this.inFlight.delete(entry.id);
    if (entry.counted) {
      entry.counted = false;
      for (const account of entry.accounts) {
        const left = (this.inFlightByAccount.get(account) ?? 1) - 1;
        if (left === 0) this.inFlightByAccount.delete(account);
        else this.inFlightByAccount.set(account, left);
      }
    }
    if (entry.gated) {
      entry.gated = false;
      this.gatedInFlight--;
    }
    if (entry.solo) {
      entry.solo = false;
      this.soloInFlight = false;
    }
  }

  /** The host died: every chain that was in flight, settled, in dispatch order. */
  takeInFlight(): PendingChain[] {
    const entries = [...this.inFlight.values()];
    for (const entry of entries) this.settle(entry);
    return entries;
  }

  /** Chains to run again go before everything that waits, in their order. */
  requeueFirst(entries: readonly PendingChain[]): void {
    this.waiting.unshift(...entries);
  }

  /** The sandbox gave up: every waiting chain fails with `err`. */
  rejectWaiting(err: Error): void {
    for (const entry of this.waiting.splice(0)) entry.reject(err);
  }

  /**
   * A chain's result came back: follow the recent chain duration (hostCap), charge each executed
   * hook's time to its revision's account (fair share) and count its timeouts (slow bundles). Returns the revisions this reply made slow, for the log.
   */
  recordUsage(entry: PendingChain, result: ChainResult, now: number): { digest: string; bundle: string }[] | undefined {
    let newlySlow: { digest: string; bundle: string }[] | undefined;
    const ms = result.duration_ms;
    if (ms >= 0) this.chainMs = this.chainMs === undefined ? ms : this.chainMs + (ms - this.chainMs) / CHAIN_MS_WEIGHT;
    const deadlineMs = entry.task.request.deadlineMs;
    const hookMs = this.share !== undefined ? this.hookMsScratch : undefined;
    hookMs?.clear();
    for (const execution of result.hook_results) {
      if (!(execution.duration_ms > 0) && execution.outcome !== "timeout") continue; // skipped hooks
      // Names are unique within a scope of one plan (its deployment hooks and one session's hooks).
      const hook = entry.hooks.find((h) => h.name === execution.hook && h.scope === execution.scope && h.action.bundle === execution.bundle);
      const digest = hook?.action.digest;
      if (digest === undefined) continue;
      if (hookMs !== undefined) {
        const account = this.accountByDigest.get(digest) ?? digest;
        hookMs.set(account, (hookMs.get(account) ?? 0) + execution.duration_ms);
      }
      // A hook the chain deadline stopped is slow only if it used at least half the deadline itself:
      // time other hooks spent must not get its bundle throttled.
      const slow = execution.outcome === "timeout" || (execution.outcome === "deadline_exceeded" && deadlineMs !== undefined && execution.duration_ms * 2 >= deadlineMs);
      if (!slow) continue;
      const wasSlow = this.slow.isSlow(digest, now);
      this.slow.record(digest, now);
      if (!wasSlow && this.slow.isSlow(digest, now)) (newlySlow ??= []).push({ digest, bundle: hook!.action.bundle });
    }
    if (hookMs !== undefined) this.share!.recordChain(entry.accounts, hookMs, now);
    return newlySlow;
  }

  /** A revision loaded again or unloaded starts with a clean timeout record (its account's share is the signer's, and stays). */
  resetUsage(digest: string): void {
    this.slow.reset(digest);
  }

  slowDigests(now: number): string[] {
    return this.slow.slowDigests(now);
  }

  /** Accounts capped at their share (admission.ts shareAccount: `key:<id>` or `bundle:<name>`). */
  demotedAccounts(now: number): string[] {
    return this.share?.demotedAccounts(now) ?? [];
  }

  /** The loaded revisions of the demoted accounts. */
  demotedDigests(now: number): string[] {
    const demoted = this.demotedAccounts(now);
    if (demoted.length === 0) return [];
    return [...this.accountByDigest].filter(([, account]) => demoted.includes(account)).map(([digest]) => digest);
  }

  private markInFlight(entry: PendingChain, now: number): void {
    entry.dispatches++;
    entry.dispatchedAt = now;
    entry.hardDeadline = this.hardDeadline(entry, now);
    this.inFlight.set(entry.id, entry);
    entry.counted = true;
    for (const account of entry.accounts) this.inFlightByAccount.set(account, (this.inFlightByAccount.get(account) ?? 0) + 1);
  }

  /** An account of the chain is demoted for its worker-time share and already has its cap of chains in flight. */
  private atShareCap(entry: PendingChain, now: number): boolean {
    const share = this.share;
    if (share === undefined) return false;
    for (const account of entry.accounts) {
      if (share.isDemoted(account, now) && (this.inFlightByAccount.get(account) ?? 0) >= share.cap()) return true;
    }
    return false;
  }

  /**
   * The latest moment a chain can legitimately still run: its hooks' budgets (chainTimeBoundMs: the
   * sum of timeout_ms, or with a chain deadline its policy and observer shares), time to
   * (re)create isolates, and a grace; started after the chains it may wait behind for a worker have
   * had theirs. The slot watchdog normally acts long before: this catches a host wedged outside hooks.
   */
  private hardDeadline(entry: PendingChain, now: number): number {
    const plan = entry.plan;
    const deadlineMs = entry.task.request.deadlineMs;
    const budget = deadlineMs !== undefined ? chainTimeBoundMs(plan.enabled, deadlineMs) : plan.timeoutSum;
    const own = budget + plan.enabled.length * HOOK_SETUP_MS + graceMs(budget);
    let start = now;
    if (this.inFlight.size >= this.threads) {
      // Waiting for a worker behind running chains: it starts at the latest when one of them ends.
      for (const other of this.inFlight.values()) if (other !== entry && other.hardDeadline > start) start = other.hardDeadline;
    }
    return start + own;
  }
}
