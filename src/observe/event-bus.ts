/*
 * The runtime's lifecycle event bus (spec §6.4, `runtime.on`): typed listeners per event name, a
 * throwing listener logged and skipped, and `chain.completed` built (redacted) only while someone
 * listens, so nothing is spent on the hot path otherwise.
 */
import { failureEventOf } from "../chain/contract.js";
import type { ChainResult, HookExecution } from "../model/chain.js";
import type { ChainCompletedEvent, ChainOrigin, Clock, InputSummary, LifecycleEvent, LifecycleEventMap, LifecycleEventName, Logger } from "./events.js";

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
  /** Whether `event` has a listener now (events nobody hears need not be built). */
  listening(event: LifecycleEventName): boolean;
  /** Emit `chain.completed` for a finished chain, if anyone listens (built only then). */
  chainCompleted(result: ChainResult, sessionId: string, owner: string | null): void;
  /**
   * The lifecycle events of a finished event-profile chain (`result.profile` set), read from its
   * per-hook results in plan order — hook.skipped / hook.fired, hook.timeout or hook.error, hook.completed
   * per hook, then chain.completed — each built only when that event has a listener.
   */
  profileChainCompleted(result: ChainResult, chain: ProfileChainFacts): void;
}

/** What a profile chain's events need besides its result. */
export interface ProfileChainFacts {
  sessionId: string;
  owner: string | null;
  /** The hook's configured `timeout_ms` (hook.timeout), by its execution record. */
  timeoutOf(execution: HookExecution): number;
  /** Bytes of the native input's JSON (the input summary); asked only when a hook event is built. */
  inputBytes(): number;
}

// A profile chain has no constitution: its input summary says so instead of naming one.
const PROFILE_CONSTITUTION_ID = "(event-profile)";


function originOf(result: ChainResult): ChainOrigin {
  // A VCP chain's result names its hook type; an agent chain's, its profile and event (model/chain.ts).
  return result.profile !== undefined ? { profile: result.profile.profile, event: result.profile.event } : { type: result.type! };
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

  function listening(event: LifecycleEventName): boolean {
    return (listeners.get(event)?.size ?? 0) > 0;
  }

  function chainCompleted(result: ChainResult, sessionId: string, owner: string | null): void {
    if (listening("chain.completed")) emit({ event: "chain.completed", payload: chainCompletedEvent(result, sessionId, owner) });
  }

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
      ...originOf(result),
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
      // Built redacted and bounded (chain/decision.ts); the same object as in the audit log.
      ...(result.decision !== undefined ? { decision: result.decision } : {}),
      // Agent chains give the chain reason no field of its own: the decision's reason is it.
      ...(result.profile !== undefined && result.decision?.reason != null ? { reason: result.decision.reason } : {}),
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
    listening,
    chainCompleted,
    profileChainCompleted(result, chain) {
      const hookEvents = listening("hook.skipped") || listening("hook.fired") || listening("hook.timeout") || listening("hook.error") || listening("hook.completed");
      if (hookEvents) {
        const origin = originOf(result);
        const chain_id = result.chain_id;
        let summary: InputSummary | undefined;
        const input_summary = (): InputSummary =>
          (summary ??= { session_id: chain.sessionId, constitution_id: PROFILE_CONSTITUTION_ID, context_keys: 0, input_bytes: chain.inputBytes() });
        for (const h of result.hook_results) {
          const hook = h.hook;
          switch (h.outcome) {
            case "skipped_matcher":
            case "deduplicated":
              // Not this event's hook (its matcher) or another runs in its place: as a hook outside the plan, no event.
              continue;
            case "skipped_disabled":
              if (listening("hook.skipped")) emit({ event: "hook.skipped", payload: { ...origin, hook, chain_id, reason: "disabled" } });
              continue;
            case "skipped_predicate":
              if (listening("hook.skipped")) emit({ event: "hook.skipped", payload: { ...origin, hook, chain_id, reason: "predicate_false" } });
              continue;
            case "skipped_deadline":
            case "deadline_exhausted":
              if (listening("hook.skipped")) emit({ event: "hook.skipped", payload: { ...origin, hook, chain_id, reason: "chain_deadline" } });
              continue;
          }
          if (listening("hook.fired")) emit({ event: "hook.fired", payload: { ...origin, hook, chain_id, session_id: chain.sessionId, input_summary: input_summary() } });
          const failure = failureEventOf(h.outcome);
          if (failure === "hook.timeout" && listening("hook.timeout")) {
            emit({ event: "hook.timeout", payload: { ...origin, hook, chain_id, timeout_ms: chain.timeoutOf(h), elapsed_ms: h.duration_ms, input_summary: input_summary() } });
          } else if (failure === "hook.error" && listening("hook.error")) {
            emit({ event: "hook.error", payload: { ...origin, hook, chain_id, outcome: h.outcome, error: h.error ?? h.outcome, input_summary: input_summary() } });
          }
          if (listening("hook.completed")) emit({ event: "hook.completed", payload: { ...origin, hook, chain_id, status: h.status, outcome: h.outcome, duration_ms: h.duration_ms } });
        }
      }
      chainCompleted(result, chain.sessionId, chain.owner);
    },
  };
}
