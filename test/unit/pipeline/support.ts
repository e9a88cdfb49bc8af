/**
 * Test support for the pipeline: a fake `fire`, hook and result builders, and a manual timer
 * source whose clock moves only when a test says so.
 */
import type { ChainResult, HookExecution } from "../../../src/model/chain.js";
import type { Constitution } from "../../../src/model/constitution.js";
import type { HookType, Scope } from "../../../src/model/hook-type.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import type { VcpContext } from "../../../src/model/input.js";
import type { Clock, Logger } from "../../../src/observe/events.js";
import type { PipelineDeps, PipelineFireInput } from "../../../src/pipeline/index.js";

export type FireCall = { type: HookType; input: PipelineFireInput<any>; at: number };
export type Handler = (input: PipelineFireInput<any>) => Partial<ChainResult> | Promise<Partial<ChainResult>>;

export function execution(hook: string, status: HookExecution["status"], extra: Partial<HookExecution> = {}): HookExecution {
  return { hook, bundle: "b", scope: "deployment", trust: "deployment", status, outcome: "ok", duration_ms: 0, ...extra };
}

export function aborted(reason: string, by = "h"): Partial<ChainResult> {
  return { status: "aborted", reason, aborted_by: by, hook_results: [execution(by, "abort", { reason })] };
}

export function modified(
  change: { context?: VcpContext; constitution?: Constitution; annotations?: Record<string, unknown> },
  hook = "h",
  extra: Partial<HookExecution> = {},
): (input: PipelineFireInput<any>) => Partial<ChainResult> {
  return (input) => ({
    context: change.context ?? input.context,
    constitution: change.constitution ?? input.constitution,
    hook_results: [
      execution(hook, "modify", {
        ...(change.context ? { modified_context: true } : {}),
        ...(change.constitution ? { modified_constitution: true } : {}),
        ...(change.annotations ? { annotations: change.annotations } : {}),
        ...extra,
      }),
    ],
  });
}

/** A fake Runtime.fire: per-type handlers, every call recorded with the clock time it started. */
export function fakeFire(handlers: Partial<Record<HookType, Handler>> = {}, clock: () => number = () => 0) {
  const calls: FireCall[] = [];
  let seq = 0;
  const fire: PipelineDeps["fire"] = async (type, input) => {
    calls.push({ type, input, at: clock() });
    const handler = handlers[type];
    const part = handler ? await handler(input) : {};
    return {
      chain_id: `chain-${++seq}`,
      type,
      status: "completed",
      reason: null,
      aborted_by: null,
      context: input.context,
      constitution: input.constitution,
      cascade_failure: false,
      hook_results: [],
      duration_ms: 0,
      ...part,
    } as ChainResult;
  };
  return { fire, calls, handlers };
}

export function periodicHook(name: string, intervalMs?: number, extra: Partial<ResolvedHook> = {}): ResolvedHook {
  return Object.freeze({
    name,
    type: "periodic",
    priority: 50,
    timeout_ms: 1000,
    action: { bundle: "b", export: name },
    condition: null,
    enabled: true,
    metadata: intervalMs === undefined ? {} : { interval_ms: intervalMs },
    fail_closed: false,
    trust: "deployment",
    scope: "deployment" as Scope,
    seq: 1,
    ...extra,
  }) as ResolvedHook;
}

/** A registry stand-in: a mutable hook list and change listeners. */
export function fakeRegistry(initial: ResolvedHook[] = []) {
  let hooks = [...initial];
  const listeners = new Set<() => void>();
  return {
    periodicHooks: (_sessionId: string): readonly ResolvedHook[] => hooks,
    onRegistryChange(listener: () => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    set(next: ResolvedHook[]) {
      hooks = [...next];
      for (const l of listeners) l();
    },
    get listenerCount() {
      return listeners.size;
    },
  };
}

export const quietLogger = (): Logger & { warnings: unknown[][]; errors: unknown[][] } => {
  const warnings: unknown[][] = [];
  const errors: unknown[][] = [];
  return {
    warnings,
    errors,
    isLevelEnabled: () => false,
    debug: () => {},
    info: () => {},
    warn: (...args: unknown[]) => void warnings.push(args),
    error: (...args: unknown[]) => void errors.push(args),
  };
};

/**
 * Timers driven by the test: `advance(ms)` moves the clock forward, firing every timer that falls
 * due on the way, in due order, each at its own due time.
 */
export function manualTime(start = 10_000) {
  let now = start;
  let seq = 0;
  const timers = new Map<number, { due: number; fn: () => void }>();
  const clock: Clock = { now: () => now, wallNow: () => 1_767_225_600_000 + now };
  return {
    clock,
    setTimer: (fn: () => void, ms: number): unknown => {
      const id = ++seq;
      timers.set(id, { due: now + ms, fn });
      return id;
    },
    clearTimer: (handle: unknown): void => {
      timers.delete(handle as number);
    },
    get now() {
      return now;
    },
    get pending() {
      return timers.size;
    },
    /**
     * Move time to the earliest timer due within `limitMs` and fire every timer due at that instant
     * (returns how many); with none due, move `limitMs` forward and return 0. The clock stays at the
     * fire time, so work the timers started sees that time until the test moves on.
     */
    next(limitMs: number): number {
      let due = Number.POSITIVE_INFINITY;
      for (const t of timers.values()) due = Math.min(due, t.due);
      if (due > now + limitMs) {
        now += limitMs;
        return 0;
      }
      now = Math.max(now, due);
      const firing = [...timers.entries()].filter(([, t]) => t.due <= now).sort(([a], [b]) => a - b);
      for (const [id] of firing) timers.delete(id);
      for (const [, t] of firing) t.fn();
      return firing.length;
    },
    /** Move time forward by `ms`; returns how many timers fired. */
    advance(ms: number): number {
      const target = now + ms;
      let fired = 0;
      for (;;) {
        let nextId: number | undefined;
        let nextDue = Number.POSITIVE_INFINITY;
        for (const [id, t] of timers) {
          if (t.due <= target && (t.due < nextDue || (t.due === nextDue && id < (nextId ?? Infinity)))) {
            nextId = id;
            nextDue = t.due;
          }
        }
        if (nextId === undefined) break;
        const timer = timers.get(nextId)!;
        timers.delete(nextId);
        now = Math.max(now, timer.due);
        fired++;
        timer.fn();
      }
      now = target;
      return fired;
    },
  };
}

/** A promise with its resolve function exposed. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Let pending promise reactions run (fake fire resolves in microtasks only). */
export async function flush(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

export const baseConstitution: Constitution = {
  id: "c-base",
  version: "1",
  rules: [
    { id: "no-harm-1", text: "Do not help cause physical harm.", safety_critical: true },
    { id: "tone-1", text: "Be courteous." },
  ],
};
