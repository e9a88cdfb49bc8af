/**
 * Periodic hooks (spec §3.6, §10.3). The rules of a tick, for every session store: which hooks a
 * schedule runs ({@link periodicHooksOf}) and what one tick does ({@link createPeriodicTicker}: a
 * one-hook `periodic` chain, the context re-evaluated on a `modify`, the listeners told). When ticks
 * are due differs by store: here the local scheduler, one timer per periodic hook per session, each
 * tick run in the session's turn (queue.ts); with `store: redis` the lease scan of
 * src/store/shared-periodic.ts. The pipeline (pipeline.ts) owns the sessions; it calls
 * {@link PeriodicScheduler.reconcile} when a session opens or the registry changes and
 * {@link PeriodicScheduler.stop} when it closes.
 */
import type { ChainResult } from "../model/chain.js";
import type { Constitution } from "../model/constitution.js";
import { periodicIntervalMs, type ResolvedHook } from "../model/hook.js";
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

/** What a tick reads and changes of a session, whichever store keeps it. */
export interface TickSession {
  readonly id: string;
  readonly key: string;
  readonly owner: string | null;
  /** Replaced by a tick whose chain modified the context (spec §3.6 re-evaluation). */
  context: VcpContext;
  readonly constitution: Constitution;
}

export interface PeriodicTickerDeps<S extends TickSession> extends Pick<PipelineDeps, "fire" | "logger" | "onPeriodicTick" | "onContextReevaluated"> {
  /** HookInput.session of the session (the pipeline builds it, the same for every route). */
  sessionInfo(s: S): SessionInfo;
  /** Mark the session updated now (its store then persists the re-evaluated context). */
  touch(s: S): void;
}

export interface PeriodicSchedulerDeps<S extends PeriodicSession> extends PeriodicTickerDeps<S>, Pick<PipelineDeps, "periodicHooks" | "clock" | "setTimer" | "clearTimer"> {}

/** A periodic hook a schedule runs: `field` (`<scope>/<name>`) names it in the session's schedule. */
export interface PeriodicDue {
  readonly field: string;
  readonly ref: HookRef;
  readonly intervalMs: number;
}

/** The periodic hooks of a chain a schedule runs: enabled ones, once each, with their interval. */
export function periodicHooksOf(hooks: readonly ResolvedHook[]): PeriodicDue[] {
  const seen = new Set<string>();
  const out: PeriodicDue[] = [];
  for (const hook of hooks) {
    if (hook.type !== "periodic" || !hook.enabled) continue;
    const field = `${hook.scope}/${hook.name}`;
    if (seen.has(field)) continue;
    seen.add(field);
    // Spec §3.6: clamped to ≥ 1000 ms here, the only place an interval enters a schedule.
    out.push({ field, ref: { name: hook.name, scope: hook.scope }, intervalMs: periodicIntervalMs(hook) });
  }
  return out;
}

/** One tick of one hook, as its store numbered and timed it. */
export interface PeriodicTick {
  readonly due: PeriodicDue;
  readonly tickCount: number;
  readonly elapsedMs: number;
}

/**
 * What one tick does, whichever store scheduled it: run the one-hook `periodic` chain; a completed
 * chain whose hook modified the context replaces the session's context (spec §3.6 re-evaluation);
 * `onPeriodicTick` hears every tick (a failed one with `error`), `onContextReevaluated` every
 * re-evaluation. The returned function resolves true when the context changed (the store persists
 * it); a chain that could not run is reported, never thrown.
 */
export function createPeriodicTicker<S extends TickSession>(deps: PeriodicTickerDeps<S>) {
  const { logger } = deps;
  let warnedUnfiltered = false;

  function notify(call: () => void): void {
    try {
      call();
    } catch (err) {
      logger.warn({ err }, "pipeline listener threw");
    }
  }

  /** `closing`: the session started closing while the chain ran (it is going away: not updated). */
  return async function tick(s: S, { due, tickCount, elapsedMs }: PeriodicTick, closing: () => boolean = () => false): Promise<boolean> {
    const { ref, intervalMs } = due;
    const previousContext = s.context;
    const report = { session_id: s.id, owner: s.owner, hook: ref.name, scope: ref.scope, tick_count: tickCount, elapsed_ms: elapsedMs, interval_ms: intervalMs };
    let result: ChainResult;
    try {
      result = await deps.fire("periodic", {
        session: deps.sessionInfo(s), sessionKey: s.key,
        context: s.context,
        constitution: s.constitution,
        event: { elapsed_ms: elapsedMs, interval_ms: intervalMs, tick_count: tickCount },
        hooks: [ref],
      });
    } catch (err) {
      logger.warn({ err, session_id: s.id, hook: ref.name }, "periodic chain could not run");
      notify(() => deps.onPeriodicTick?.({ ...report, error: err, context_reevaluated: false }));
      return false;
    }
    if (!warnedUnfiltered && result.hook_results.some((h) => h.hook !== ref.name || h.scope !== ref.scope)) {
      warnedUnfiltered = true;
      logger.warn({ session_id: s.id, hook: ref.name }, "fire() ran periodic hooks other than the one due: it ignores `hooks`, so per-hook intervals (spec §3.6) are not kept");
    }
    // Spec §3.6: modify triggers a context re-evaluation with the modified context.
    const reevaluate = !closing() && result.status === "completed" && modifiedContext(result);
    if (reevaluate) {
      s.context = frozenJsonCopy("chain result", result.context);
      deps.touch(s);
    }
    notify(() => deps.onPeriodicTick?.({ ...report, result, context_reevaluated: reevaluate }));
    if (reevaluate) {
      notify(() => deps.onContextReevaluated?.({ session_id: s.id, owner: s.owner, hook: ref.name, scope: ref.scope, previous_context: previousContext, context: s.context, result }));
    }
    return reevaluate;
  };
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
  const tick = createPeriodicTicker(deps);

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
    arm(s, entry, entry.intervalMs);
    // A session that started closing while the chain ran is not updated: it is going away.
    await tick(s, { due: { field: entry.key, ref: entry.ref, intervalMs: entry.intervalMs }, tickCount, elapsedMs }, () => s.closing !== undefined);
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
    for (const { field: key, ref, intervalMs } of periodicHooksOf(hooks)) {
      seen.add(key);
      const existing = s.schedule.get(key);
      if (existing === undefined) {
        const entry: ScheduleEntry = {
          key, ref, intervalMs, tickCount: 0, skipped: 0,
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
