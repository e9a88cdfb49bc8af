import type { ResolvedHook } from "../model/hook.js";
import { hookIdentityAt, type HookIdentity } from "./crash.js";
import type { SlotRecord, ThreadTime } from "./slots.js";

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
 * While a hook is past budget + grace of wall time, its worker thread must be runnable (on a CPU, or
 * waiting for one) for at least this share of a window of MIN_SAMPLE_MS, or be runnable at its end, to
 * count as busy; a thread that is neither, over WEDGED_WINDOWS windows in a row, is wedged (outcome
 * `crashed`: a thread stuck inside V8 sleeps, neither running nor waiting). A busy thread is runnable
 * all the time however loaded the machine is, so load cannot make it look wedged: the kernel adds a
 * run-queue wait only when it ends, so a thread waiting through a whole window shows in its state, `R`.
 * Without scheduler statistics the CPU share stands in (a spinning thread still gets over 10% of a
 * core with a dozen runnable threads per core pair, a wedged one none).
 */
export const BUSY_SHARE = 0.05;
/** Windows in a row a thread must look wedged: a short wait inside V8 (a GC's helpers) is not a wedge. */
export const WEDGED_WINDOWS = 2;
/** The shortest window over which a thread's CPU share is trusted. */
export const MIN_SAMPLE_MS = 500;
/**
 * Past its hard deadline, a chain last seen inside a hook's action is left this long to reach its next
 * hook (chain code between hooks takes microseconds when the machine is idle) before it counts as a host
 * wedged outside hooks.
 */
export const OUTSIDE_HOOKS_MS = 2_000;

/**
 * What a hook may use past its budget before the watchdog kills the host: CPU time of its thread when
 * the thread's CPU is known (Linux), wall time otherwise. isolated-vm terminates ordinary code at the
 * budget itself; only code that ignores termination runs into this.
 */
export function graceMs(budgetMs: number): number {
  return Math.min(4000, Math.max(1500, Math.ceil(budgetMs / 2)));
}

/** Why the watchdog killed a host, and whom to blame. */
export interface HostKill {
  /**
   * overrun: a hook's thread used budget + grace of CPU and the hook still ran (it ignores termination);
   * wedged: a hook ran past budget + grace while its thread did nothing (stuck inside V8);
   * deadline: a chain outlived its whole hard deadline outside hooks; load: a bundle load never finished;
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
  /** Time of a worker thread of the host so far (Linux `/proc`, slots.ts threadTime); undefined when unknown. */
  readonly threadTime: (tid: number) => ThreadTime | undefined;
}

/** What the watchdog remembers of one hook call ("taskId hook startMs") between inspections. */
export interface HookSample {
  /** The thread's time and {@link monotonicMs} when the watchdog first saw the call: its CPU counts from here. */
  readonly first: ThreadTime | undefined;
  readonly firstAtMs: number;
  /** Start of the window over which the thread's runnable share is measured (moved on after each window). */
  window: ThreadTime | undefined;
  windowAtMs: number;
  /** Windows in a row, up to now, over which the thread looked wedged. */
  idleWindows: number;
}

/**
 * The watchdog's memory between inspections, owned by the caller and updated by {@link inspectHost};
 * cleared after a kill.
 */
export class WatchdogMemory {
  /** Hook calls seen inside their action, by "taskId hook startMs". */
  readonly hooks = new Map<string, HookSample>();
  /** Task id → `nowMs` of the last inspection that found the chain inside a hook's action. */
  readonly insideAt = new Map<number, number>();

  clear(): void {
    this.hooks.clear();
    this.insideAt.clear();
  }
}

/**
 * One watchdog inspection, a pure decision (DESIGN §4.3): the kill to make, if any. A hook that ignores
 * termination (BigInt#toString, Array#fill) or wedges its thread inside V8 would hold a chain, a worker
 * and, in the end, the whole sandbox forever.
 *
 * ```
 *  slot "I hook start budget tid" ─▶ CPU of its thread since first seen > budget + grace ─▶ kill: overrun ⇒ timeout
 *                                   wall > budget + grace and the thread neither ran nor
 *                                   waited for a CPU over 2 windows ≥ MIN_SAMPLE_MS ─▶ kill: wedged  ⇒ crashed
 *  slot "L start", running > loadWatchdogMs(load budget)                        ─▶ kill (the load fails INVALID_BUNDLE)
 *  chain past its hard deadline, outside every hook (see below)                  ─▶ kill, attribution by slots
 * ```
 *
 * A busy hook is judged by the CPU its thread used, not by the wall clock: on a loaded machine a thread
 * gets a fraction of a core, and a hook that ignores termination on its way to the memory limit
 * (`'1'.repeat(2**27).split('')`, `new Array(6e7).fill()`) must end in that memory-limit `error` however
 * slowly it gets there, not in a `timeout` the machine's load decided; a thread that sleeps is wedged
 * whatever the load. The wall clock still bounds a starved thread: it runs until it used budget + grace
 * of CPU, as long as the machine gives it a share of a core. Without per-thread times (not Linux) an
 * overrun is judged by the wall clock.
 */
export function inspectHost(snapshot: WatchdogSnapshot, memory: WatchdogMemory): HostKill | undefined {
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
    if (chain === undefined) continue;
    memory.insideAt.set(record.taskId, snapshot.nowMs);
    const key = `${record.taskId} ${record.hook} ${record.startMs}`;
    seen.add(key);
    const time = snapshot.threadTime(record.tid ?? 0);
    let sample = memory.hooks.get(key);
    if (sample === undefined) {
      sample = { first: time, firstAtMs: mono, window: time, windowAtMs: mono, idleWindows: 0 };
      memory.hooks.set(key, sample);
    }
    const limit = record.budgetMs + graceMs(record.budgetMs);
    const verdict = judgeHook(sample, time, mono, ran, limit);
    if (verdict === undefined) continue;
    // SECURITY: the hook at the record's position, never a lookup by name (a session hook may share
    // its name with another bundle's deployment hook); no match leaves the kill unattributed.
    const identity = hookIdentityAt(chain.hooks, record.position, record.hook);
    const cpu = time !== undefined && sample.first !== undefined ? ` (${Math.round(time.cpuMs - sample.first.cpuMs)} ms of CPU)` : "";
    return {
      kind: verdict,
      taskId: record.taskId,
      ...(identity !== undefined ? { hook: identity } : {}),
      detail:
        verdict === "overrun"
          ? `hook ${record.hook} ran ${ran} ms${cpu} against a budget of ${record.budgetMs} ms and ignored termination`
          : `hook ${record.hook} stopped responding ${ran} ms into a budget of ${record.budgetMs} ms (its worker thread is wedged)`,
    };
  }
  for (const key of memory.hooks.keys()) if (!seen.has(key)) memory.hooks.delete(key);
  const chains = [...snapshot.chains];
  // A chain inside a hook past its own hard deadline is the hook rule's above; chains that were never
  // seen inside a hook may be waiting for a worker behind it, so they wait for it too.
  const deferring = chains.some((c) => snapshot.nowMs > c.hardDeadline && memory.insideAt.get(c.id) === snapshot.nowMs);
  for (const chain of chains) {
    if (snapshot.nowMs <= chain.hardDeadline) continue;
    const insideAt = memory.insideAt.get(chain.id);
    // SECURITY: the hard deadline catches a host wedged outside hooks; time inside a hook is bounded by
    // the hook rule (its CPU, or a wedged thread), which always ends.
    if (insideAt !== undefined ? snapshot.nowMs - insideAt <= OUTSIDE_HOOKS_MS : deferring) continue;
    return {
      kind: "deadline",
      taskId: chain.id,
      detail: `chain ${chain.chainId} outlived its hard deadline (${Math.round(chain.hardDeadline - chain.dispatchedAt)} ms after dispatch)`,
    };
  }
  for (const id of memory.insideAt.keys()) if (snapshot.chain(id) === undefined) memory.insideAt.delete(id);
  return undefined;
}

/**
 * The verdict on one hook call inside its action: `overrun` once its thread used `limitMs` of CPU since
 * the watchdog first saw it, `wedged` once it is past `limitMs` of wall time and its thread looked
 * wedged (see BUSY_SHARE) over WEDGED_WINDOWS whole windows in a row, else none yet.
 */
function judgeHook(sample: HookSample, time: ThreadTime | undefined, mono: number, ran: number, limitMs: number): "overrun" | "wedged" | undefined {
  if (time === undefined || sample.first === undefined || sample.window === undefined) {
    return ran > limitMs && mono - sample.firstAtMs >= MIN_SAMPLE_MS ? "overrun" : undefined;
  }
  // SECURITY: isolated-vm terminates ordinary code at the budget; a thread still running after
  // budget + grace of CPU ignores termination.
  if (time.cpuMs - sample.first.cpuMs > limitMs) return "overrun";
  if (ran <= limitMs) return undefined;
  const windowMs = mono - sample.windowAtMs;
  if (windowMs < MIN_SAMPLE_MS) return undefined;
  const idle = !time.runnable && time.runnableMs - sample.window.runnableMs < BUSY_SHARE * windowMs;
  // Busy (the machine is loaded and the thread gets a share of a core) or idle: either way a new window.
  sample.idleWindows = idle ? sample.idleWindows + 1 : 0;
  sample.window = time;
  sample.windowAtMs = mono;
  return sample.idleWindows >= WEDGED_WINDOWS ? "wedged" : undefined;
}

/**
 * The timer around {@link inspectHost}: runs every WATCHDOG_INTERVAL_MS while `busy()` says work is in
 * flight and stops itself when it is not (an idle sandbox has no timer). `tick` reads the host and acts
 * on the decision; the timer is unref'd so it never keeps a process alive.
 */
export class WatchdogTimer {
  private timer: NodeJS.Timeout | undefined;
  readonly memory = new WatchdogMemory();

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
    this.memory.clear();
  }
}
