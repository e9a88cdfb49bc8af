/*
 * The runtime's lifecycle event bus (spec §6.4, `runtime.on`): typed listeners per event name, a
 * throwing listener logged and skipped, and `chain.completed` built (redacted) only while someone
 * listens, so nothing is spent on the hot path otherwise.
 */
import type { ChainResult } from "../chain/types.js";
import type { ChainCompletedEvent, Clock, LifecycleEvent, LifecycleEventMap, LifecycleEventName, Logger } from "./events.js";

export interface EventBusOptions {
  clock: Clock;
  logger: Logger;
  /**
   * Redacts secrets in a `chain.completed` event's reasons, error text, annotations and diffs.
   * SECURITY: the live decisions stream shows what the audit log records, redacted the same way (DESIGN §5).
   */
  redact: (value: unknown) => unknown;
}

export interface EventBus {
  /** Listen to one event; returns the function that stops listening. */
  on<K extends LifecycleEventName>(event: K, listener: (payload: LifecycleEventMap[K]) => void): () => void;
  /** Hand an event to its listeners, in the order they were added. */
  emit(event: LifecycleEvent): void;
  /** Emit `chain.completed` for a finished chain, if anyone listens (built only then). */
  chainCompleted(result: ChainResult, sessionId: string, owner: string | null): void;
}

/**
 * Create the event bus of one runtime.
 *
 * @example
 * ```ts
 * const bus = createEventBus({ clock: systemClock, logger: silentLogger, redact: createRedactor({ keys: ["token"] }) });
 * const off = bus.on("hook.registered", (payload) => console.log(payload.hook));
 * off();
 * ```
 */
export function createEventBus(options: EventBusOptions): EventBus {
  const { clock, logger, redact } = options;
  const listeners = new Map<LifecycleEventName, Set<(payload: never) => void>>();

  function emit(event: LifecycleEvent): void {
    const set = listeners.get(event.event);
    if (set === undefined) return;
    for (const listener of set) {
      try {
        (listener as (payload: unknown) => void)(event.payload);
      } catch (err) {
        logger.warn({ err, event: event.event }, "lifecycle listener threw");
      }
    }
  }

  function chainCompletedEvent(result: ChainResult, sessionId: string, owner: string | null): ChainCompletedEvent {
    return {
      chain_id: result.chain_id,
      type: result.type,
      ts: new Date(clock.wallNow()).toISOString(),
      session_id: sessionId,
      ...(owner !== null ? { owner } : {}),
      status: result.status,
      reason: result.reason === null ? null : (redact(result.reason) as string),
      aborted_by: result.aborted_by,
      cascade_failure: result.cascade_failure,
      duration_ms: result.duration_ms,
      hooks: result.hook_results.map((h) => ({
        hook: h.hook,
        bundle: h.bundle,
        scope: h.scope,
        status: h.status,
        outcome: h.outcome,
        duration_ms: h.duration_ms,
        ...(h.reason !== undefined ? { reason: redact(h.reason) as string } : {}),
        ...(h.error !== undefined ? { error: redact(h.error) as string } : {}),
        ...(h.annotations !== undefined ? { annotations: redact(h.annotations) } : {}),
        ...(h.modification !== undefined ? { modification: redact(h.modification) } : {}),
      })),
    };
  }

  return {
    on(event, listener) {
      let set = listeners.get(event);
      if (set === undefined) {
        set = new Set();
        listeners.set(event, set);
      }
      set.add(listener as (payload: never) => void);
      return () => set.delete(listener as (payload: never) => void);
    },
    emit,
    chainCompleted(result, sessionId, owner) {
      if (listeners.get("chain.completed")?.size) emit({ event: "chain.completed", payload: chainCompletedEvent(result, sessionId, owner) });
    },
  };
}
