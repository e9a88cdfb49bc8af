import type { ResolvedHook } from "../model/hook.js";
import { hookIdentityAt, type HookIdentity } from "./crash.js";
import type { SlotRecord } from "./slots.js";

/** How often the watchdog reads the slots while work is in flight. */
export const WATCHDOG_INTERVAL_MS = 250;
/**
 * A bundle load (compile, top-level code, export listing; the host bounds each run phase by the load
 * budget, `pool.load_timeout_ms`) that has not finished after this long has wedged its worker.
 */
export const LOAD_WATCHDOG_MS = 10_000;

/** The load limit for a load budget: two bounded run phases and the compile fit in 3× the budget. */
export function loadWatchdogMs(loadTimeoutMs: number): number {
  return Math.max(LOAD_WATCHDOG_MS, 3 * loadTimeoutMs);
}
/**
 * While a hook overruns, its worker thread must use at least this share of one core to count as busy
 * (outcome `timeout`: it ignores termination); below it the thread is wedged (outcome `crashed`: e.g.
 * isolated-vm's fatal-OOM handler sleeps forever on the worker thread, using no CPU at all). Linux
 * clock ticks are 10 ms. Low on purpose: on a machine with a dozen runnable threads per core pair a
 * spinning thread still gets over 10% of a core, and a wedged one gets none (was 0.25, which judged
 * a spinning hook "wedged" at a load average of 13).
 */
export const BUSY_SHARE = 0.05;
export const CLOCK_TICK_MS = 10;
/** Overrun observed for at least this long before the thread's CPU share is trusted. */
export const MIN_SAMPLE_MS = 500;

/**
 * Time past a hook's budget before the watchdog kills the host. Must stay under isolated-vm's own
 * 5 s "Script failed to terminate" give-up, whose catastrophic-error path can crash the host itself.
 */
export function graceMs(budgetMs: number): number {
  return Math.min(4000, Math.max(1500, Math.ceil(budgetMs / 2)));
}

/** Why the watchdog killed a host, and whom to blame. */
export interface HostKill {
  /**
   * overrun: a hook ran past budget + grace while its thread kept busy (ignoring termination);
   * wedged: a hook ran past budget + grace while its thread did nothing (a fatal error inside V8);
   * deadline: a chain outlived its whole hard deadline; load: a bundle load never finished;
   * protocol: the host's frame stream was corrupt (frames.ts; not the watchdog's doing, same path).
   */
  kind: "overrun" | "wedged" | "deadline" | "load" | "protocol";
  taskId: number;
  /** The overrunning hook, named by its position in the task's hook list (overrun, wedged). */
  hook?: HookIdentity;
  /** Human-readable, for error texts and logs. */
  detail: string;
}

/** A chain in flight as the watchdog sees it. */
export interface WatchedChain {
  readonly id: number;
  readonly chainId: string;
  readonly dispatchedAt: number;
  /** `performance.now()` after which the chain has outlived every legitimate budget. */
  readonly hardDeadline: number;
  /** The hook list sent with it: a slot record's position indexes it, cross-checked by name (crash.ts hookIdentityAt). */
  readonly hooks: readonly ResolvedHook[];
}

/** What one inspection reads: the slots of the live host generation, clocks, and the work in flight. */
export interface WatchdogSnapshot {
  readonly records: readonly SlotRecord[];
  /** {@link monotonicMs} now: the clock of the slot records. */
  readonly monoMs: number;
  /** `performance.now()` now: the clock of hard deadlines. */
  readonly nowMs: number;
  readonly chain: (taskId: number) => WatchedChain | undefined;
  readonly chains: Iterable<WatchedChain>;
  readonly isLoad: (taskId: number) => boolean;
  /** A load running longer is wedged ({@link loadWatchdogMs}); default LOAD_WATCHDOG_MS. */
  readonly loadLimitMs?: number;
  /** CPU clock ticks of a worker thread of the host (Linux `/proc`); undefined when unknown. */
  readonly threadTicks: (tid: number) => number | undefined;
}

/**
 * CPU samples of overrunning hooks between inspections ("taskId hook startMs" → the thread's ticks when
 * first seen over budget). Owned by the caller, updated by {@link inspectHost}; cleared after a kill.
 */
export type OverrunSamples = Map<string, { ticks: number | undefined; atMs: number }>;

/**
 * One watchdog inspection, a pure decision (DESIGN §4.3): the kill to make, if any. A hook that ignores
 * termination (BigInt#toString, Array#fill) or a fatal V8 error that leaves the host alive but asleep
 * (isolated-vm's OOM handler) would hold a chain, a worker and, in the end, the whole sandbox forever.
 *
 * ```
 *  slot "I hook start budget tid", running > budget + grace ─▶ kill
 *       thread used CPU meanwhile  ⇒ kind overrun ⇒ that hook: outcome timeout
 *       thread asleep              ⇒ kind wedged  ⇒ that hook: outcome crashed
 *  slot "L start", running > loadWatchdogMs(load budget)  ─▶ kill (the load fails INVALID_BUNDLE)
 *  chain past its hard deadline (no slot says why) ─▶ kill, attribution by slots as for a crash
 * ```
 */
export function inspectHost(snapshot: WatchdogSnapshot, samples: OverrunSamples): HostKill | undefined {
  const mono = snapshot.monoMs;
  const seen = new Set<string>();
  for (const record of snapshot.records) {
    if (record.startMs === undefined) continue;
    const ran = mono - record.startMs;
    if (record.phase === "L") {
      // SECURITY: a load that never ends wedges a worker; top-level code is guest code too.
      if (snapshot.isLoad(record.taskId) && ran > (snapshot.loadLimitMs ?? LOAD_WATCHDOG_MS)) {
        return { kind: "load", taskId: record.taskId, detail: `a bundle load ran for ${ran} ms` };
      }
      continue;
    }
    if (record.phase !== "I" || record.hook === undefined || record.budgetMs === undefined) continue;
    const chain = snapshot.chain(record.taskId);
    if (chain === undefined || ran <= record.budgetMs) continue;
    const key = `${record.taskId} ${record.hook} ${record.startMs}`;
    seen.add(key);
    const ticks = snapshot.threadTicks(record.tid ?? 0);
    let sample = samples.get(key);
    if (sample === undefined) {
      sample = { ticks, atMs: mono };
      samples.set(key, sample);
    }
    // SECURITY: the isolate's own timeout and the host's async deadline had budget + grace to act.
    if (ran <= record.budgetMs + graceMs(record.budgetMs) || mono - sample.atMs < MIN_SAMPLE_MS) continue;
    // Without per-thread CPU (not Linux) an overrun counts as busy: the hook ran past its budget.
    const busy = ticks === undefined || sample.ticks === undefined || (ticks - sample.ticks) * CLOCK_TICK_MS >= BUSY_SHARE * (mono - sample.atMs);
    // SECURITY: the hook at the record's position, never a lookup by name (a session hook may share
    // its name with another bundle's deployment hook); no match leaves the kill unattributed.
    const identity = hookIdentityAt(chain.hooks, record.position, record.hook);
    return {
      kind: busy ? "overrun" : "wedged",
      taskId: record.taskId,
      ...(identity !== undefined ? { hook: identity } : {}),
      detail: busy
        ? `hook ${record.hook} ran ${ran} ms against a budget of ${record.budgetMs} ms and ignored termination`
        : `hook ${record.hook} stopped responding ${ran} ms into a budget of ${record.budgetMs} ms (its worker thread is wedged)`,
    };
  }
  for (const key of samples.keys()) if (!seen.has(key)) samples.delete(key);
  for (const chain of snapshot.chains) {
    if (snapshot.nowMs > chain.hardDeadline) {
      return {
        kind: "deadline",
        taskId: chain.id,
        detail: `chain ${chain.chainId} outlived its hard deadline (${Math.round(chain.hardDeadline - chain.dispatchedAt)} ms after dispatch)`,
      };
    }
  }
  return undefined;
}

/**
 * The timer around {@link inspectHost}: runs every WATCHDOG_INTERVAL_MS while `busy()` says work is in
 * flight and stops itself when it is not (an idle sandbox has no timer). `tick` reads the host and acts
 * on the decision; the timer is unref'd so it never keeps a process alive.
 */
export class WatchdogTimer {
  private timer: NodeJS.Timeout | undefined;
  readonly samples: OverrunSamples = new Map();

  constructor(
    private readonly busy: () => boolean,
    private readonly tick: () => void,
  ) {}

  arm(): void {
    if (this.timer !== undefined) return;
    this.timer = setInterval(() => {
      if (!this.busy()) {
        this.stop();
        return;
      }
      this.tick();
    }, WATCHDOG_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.samples.clear();
  }
}
