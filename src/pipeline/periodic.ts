/**
 * The periodic scheduler of the adaptation pipeline (spec §3.6, §10.3): one timer per periodic hook
 * per session, each tick run in the session's turn (queue.ts) as a one-hook `periodic` chain. The
 * pipeline (pipeline.ts) owns the sessions; it calls {@link PeriodicScheduler.reconcile} when a
 * session opens or the registry changes and {@link PeriodicScheduler.stop} when it closes.
 */
import type { ChainResult } from "../chain/types.js";
import type { Constitution } from "../model/constitution.js";
import { periodicIntervalMs } from "../model/hook.js";
import type { SessionInfo, VcpContext } from "../model/input.js";
import type { SerialQueue } from "./queue.js";
import type { HookRef, PeriodicStatus, PipelineDeps } from "./types.js";
import { frozenJsonCopy } from "./validate.js";

/**
 * One periodic hook's schedule in one session (spec §3.6, §10.3).
 *
 * ```
 *   armed ──timer──▶ pending (queued behind the session's other work) ──turn──▶ running
 *     ▲                                                                  │
 *     └──────────── re-armed for interval_ms when the tick STARTS ◀──────┘
 * ```
 * Re-arming at the start of a tick (not at the timer expiry) keeps consecutive fires of a hook at
 * least `interval_ms` (≥ 1000 ms) apart even when a tick waited for its turn, and leaves at most one
 * tick of a hook queued: ticks never pile up behind a slow operation.
 */
export interface ScheduleEntry {
  readonly key: string;
  readonly ref: HookRef;
  intervalMs: number;
  tickCount: number;
  skipped: number;
  /** clock.now() of the previous fire of this hook, or when its schedule started. */
  lastFireAt: number;
  timer: unknown;
  armed: boolean;
  /** A tick is queued and has not started yet. */
  pending: boolean;
  removed: boolean;
}

/** What the scheduler reads and writes of a pipeline session. */
export interface PeriodicSession {
  readonly id: string;
  readonly key: string;
  readonly owner: string | null;
  /** Replaced by a tick whose chain modified the context (spec §3.6 re-evaluation). */
  context: VcpContext;
  readonly constitution: Constitution;
  readonly queue: SerialQueue;
  readonly schedule: Map<string, ScheduleEntry>;
  readonly closing: Promise<void> | undefined;
}

export interface PeriodicSchedulerDeps<S extends PeriodicSession>
  extends Pick<PipelineDeps, "fire" | "periodicHooks" | "clock" | "logger" | "setTimer" | "clearTimer" | "onPeriodicTick" | "onContextReevaluated"> {
  /** HookInput.session of the session (the pipeline builds it, the same for every route). */
  sessionInfo(s: S): SessionInfo;
  /** Mark the session updated now. */
  touch(s: S): void;
}

export interface PeriodicScheduler<S extends PeriodicSession> {
  /** Bring a session's timers in line with its current periodic hooks (new, removed, re-timed). */
  reconcile(s: S): void;
  /** Stop every timer of a closing session; queued ticks find their entry removed and do nothing. */
  stop(s: S): void;
  /** The session's schedule as `SessionView.periodic` shows it. */
  status(s: S): PeriodicStatus[];
}

const defaultSetTimer = (fn: () => void, ms: number): unknown => {
  const handle = setTimeout(fn, ms);
  // A session's timers must not keep the process alive on their own.
  handle.unref?.();
  return handle;
};
const defaultClearTimer = (handle: unknown): void => clearTimeout(handle as ReturnType<typeof setTimeout>);

function modifiedContext(result: ChainResult): boolean {
  return result.hook_results.some((h) => h.status === "modify" && h.modified_context === true);
}

/** Create the scheduler; it holds no sessions of its own, only their `schedule` maps. */
export function createPeriodicScheduler<S extends PeriodicSession>(deps: PeriodicSchedulerDeps<S>): PeriodicScheduler<S> {
  const { clock, logger } = deps;
  const setTimer = deps.setTimer ?? defaultSetTimer;
  const clearTimer = deps.clearTimer ?? defaultClearTimer;
  let warnedUnfiltered = false;

  function arm(s: S, entry: ScheduleEntry, ms: number): void {
    if (entry.armed) clearTimer(entry.timer);
    entry.armed = true;
    entry.timer = setTimer(() => onTimer(s, entry), Math.max(0, ms));
  }

  function disarm(entry: ScheduleEntry): void {
    if (entry.armed) clearTimer(entry.timer);
    entry.armed = false;
    entry.timer = undefined;
  }

  function onTimer(s: S, entry: ScheduleEntry): void {
    entry.armed = false;
    entry.timer = undefined;
    if (entry.removed) return;
    if (entry.pending) {
      // Only reachable after a reschedule re-armed a hook whose tick is still queued: one queued
      // tick per hook is enough, the queued one will see the newest context.
      entry.skipped++;
      return;
    }
    entry.pending = true;
    s.queue.run(() => runTick(s, entry)).catch((err: unknown) => {
      logger.error({ err, session_id: s.id, hook: entry.ref.name }, "periodic tick failed");
    });
  }

  async function runTick(s: S, entry: ScheduleEntry): Promise<void> {
    entry.pending = false;
    // Ticks stop when the session closes (stopSchedule marks every entry removed), including ticks
    // that were waiting for their turn, and when the hook left the registry.
    if (entry.removed) return;
    const startedAt = clock.now();
    const elapsedMs = Math.max(0, Math.round(startedAt - entry.lastFireAt));
    entry.lastFireAt = startedAt;
    entry.tickCount++;
    const tickCount = entry.tickCount;
    const intervalMs = entry.intervalMs;
    arm(s, entry, intervalMs);
    const previousContext = s.context;
    const report = { session_id: s.id, owner: s.owner, hook: entry.ref.name, scope: entry.ref.scope, tick_count: tickCount, elapsed_ms: elapsedMs, interval_ms: intervalMs };
    let result: ChainResult;
    try {
      result = await deps.fire("periodic", {
        session: deps.sessionInfo(s), sessionKey: s.key,
        context: s.context,
        constitution: s.constitution,
        event: { elapsed_ms: elapsedMs, interval_ms: intervalMs, tick_count: tickCount },
        hooks: [entry.ref],
      });
    } catch (err) {
      logger.warn({ err, session_id: s.id, hook: entry.ref.name }, "periodic chain could not run");
      notify(() => deps.onPeriodicTick?.({ ...report, error: err, context_reevaluated: false }));
      return;
    }
    if (!warnedUnfiltered && result.hook_results.some((h) => h.hook !== entry.ref.name || h.scope !== entry.ref.scope)) {
      warnedUnfiltered = true;
      logger.warn({ session_id: s.id, hook: entry.ref.name }, "fire() ran periodic hooks other than the one due: it ignores `hooks`, so per-hook intervals (spec §3.6) are not kept");
    }
    // Spec §3.6: modify triggers a context re-evaluation with the modified context. A session that
    // started closing while the chain ran is not updated: it is going away.
    const reevaluate = s.closing === undefined && result.status === "completed" && modifiedContext(result);
    if (reevaluate) {
      s.context = frozenJsonCopy("chain result", result.context);
      deps.touch(s);
    }
    notify(() => deps.onPeriodicTick?.({ ...report, result, context_reevaluated: reevaluate }));
    if (reevaluate) {
      notify(() =>
        deps.onContextReevaluated?.({ session_id: s.id, owner: s.owner, hook: entry.ref.name, scope: entry.ref.scope, previous_context: previousContext, context: s.context, result }),
      );
    }
  }

  function notify(call: () => void): void {
    try {
      call();
    } catch (err) {
      logger.warn({ err }, "pipeline listener threw");
    }
  }

  /** Bring a session's timers in line with its current periodic hooks (new, removed, re-timed). */
  function reconcile(s: S): void {
    if (s.closing !== undefined) return;
    let hooks;
    try {
      hooks = deps.periodicHooks(s.key);
    } catch (err) {
      logger.warn({ err, session_id: s.id }, "could not read the periodic hooks; schedule unchanged");
      return;
    }
    const seen = new Set<string>();
    const at = clock.now();
    for (const hook of hooks) {
      if (hook.type !== "periodic" || !hook.enabled) continue;
      const key = `${hook.scope}/${hook.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      // Spec §3.6: clamped to ≥ 1000 ms here, the only place an interval enters the schedule.
      const intervalMs = periodicIntervalMs(hook);
      const existing = s.schedule.get(key);
      if (existing === undefined) {
        const entry: ScheduleEntry = {
          key, ref: { name: hook.name, scope: hook.scope }, intervalMs, tickCount: 0, skipped: 0,
          lastFireAt: at, timer: undefined, armed: false, pending: false, removed: false,
        };
        s.schedule.set(key, entry);
        arm(s, entry, intervalMs);
      } else if (existing.intervalMs !== intervalMs) {
        existing.intervalMs = intervalMs;
        // A queued tick re-arms with the new interval when it starts; an armed timer moves now,
        // still measured from the hook's previous fire.
        if (existing.armed) arm(s, existing, existing.lastFireAt + intervalMs - at);
      }
    }
    for (const [key, entry] of s.schedule) {
      if (seen.has(key)) continue;
      entry.removed = true;
      disarm(entry);
      s.schedule.delete(key);
    }
  }

  function stop(s: S): void {
    for (const entry of s.schedule.values()) {
      entry.removed = true;
      disarm(entry);
    }
    s.schedule.clear();
  }

  function status(s: S): PeriodicStatus[] {
    return [...s.schedule.values()].map((e) => ({
      hook: e.ref.name,
      scope: e.ref.scope,
      interval_ms: e.intervalMs,
      tick_count: e.tickCount,
      skipped: e.skipped,
    }));
  }

  return { reconcile, stop, status };
}
