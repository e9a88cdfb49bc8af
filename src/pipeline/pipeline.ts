import type { SessionInfo } from "../model/input.js";
import { keyAmong, maySee, namespacedKey, type SessionAccess } from "./access.js";
import { sessionAmbiguous, sessionExists, sessionLimit, sessionNotFound } from "./errors.js";
import { assertOperationInput, createSessionOperations, newSessionRecord, openingOf, sessionInfoOf, sessionViewOf, type SessionRecord } from "./operations.js";
import { createPeriodicScheduler, type ScheduleEntry } from "./periodic.js";
import { createSerialQueue, type SerialQueue } from "./queue.js";
import type { Pipeline, PipelineDeps, SessionView } from "./types.js";
import { DEFAULT_JSON_BOUNDS } from "../model/json-bounds.js";

export { renderConstitution } from "./operations.js";

/** A session of the local pipeline: its record (operations.ts) plus this process's turn queue and timers. */
interface Session extends SessionRecord {
  /** The per-session serialization of the local store: one FIFO queue (queue.ts). */
  readonly queue: SerialQueue;
  /** Its periodic hooks' timers (periodic.ts). */
  readonly schedule: Map<string, ScheduleEntry>;
  closing: Promise<void> | undefined;
}

/**
 * Create the adaptation pipeline (DESIGN §4.6): per-session state, the four pipeline operations and
 * the periodic scheduler, on top of an injected `fire`.
 *
 * Semantics, per operation (all of one session serialized through one queue, see queue.ts):
 * - **adapt**: `post_select` (abort ⇒ `cancelled`; a modified constitution replaces the selection),
 *   then — only after it completed — `pre_inject` (abort ⇒ `blocked`). `inject` updates the session's
 *   context, constitution and last known-good to the chain's final values; otherwise nothing changes,
 *   and the outcome's `constitution` and `context` are null (nothing may be injected; the session's
 *   constitution is `session_constitution`).
 * - **transition**: `on_transition` before the state changes; abort ⇒ `blocked`, state unchanged;
 *   else state := `to` and the session context := the chain's context. A constitution returned by an
 *   `on_transition` hook is ignored (it would bypass `pre_inject`); only `adapt` changes what is injected.
 * - **conflict**: `on_conflict` receives the composition base (rules in no conflict) and the
 *   constitutions in `event.constitutions`; a `modify` with a constitution ⇒ `resolved`; none ⇒ the
 *   default strategy (strategies.ts) ⇒ `default`; abort, `reject`, or an unresolvable conflict ⇒
 *   `failed`, and the session's constitution falls back to last known-good. No resolution, by hook
 *   or strategy, may drop a safety-critical rule (flagged, or configured) of any constitution being
 *   composed: a hook's such modification is `integrity_rejected` in the chain, and anything that
 *   still arrives here is `failed` with reason `integrity_rejected: …`. A composition becomes the
 *   session's constitution but not its last known-good until an `adapt` injects it.
 * - **violation**: `on_violation` before any default; abort ⇒ `suppress`; a `modify` whose
 *   `annotations.corrected_output` is a string ⇒ `corrected` (the last such hook in chain order wins;
 *   a later `modify` whose annotations were truncated at the annotation cap ⇒ `suppress`);
 *   else a `modify` of the context ⇒ `retry` with that context and `retry_count + 1`; else the
 *   configured default (`deliver`). `output` is the only text the caller may deliver and is null for
 *   `suppress` and `retry`; `context` is set for `retry` only. The session is not changed: a retry context is for the caller's
 *   regeneration (pass it as `context` to the next `violation`/`adapt`).
 * - **periodic** (periodic.ts): `modify` of the context ⇒ the session context becomes
 *   it and `onContextReevaluated` fires; abort is continue (the chain does that); a constitution
 *   returned by a periodic hook is ignored.
 *
 * @example
 * ```ts
 * const pipeline = createPipeline({
 *   fire: (type, input) => runtime.fire(type, input),
 *   periodicHooks: (id) => runtime.hooks.chain("periodic", id),
 *   onRegistryChange: (fn) => registry.onChange(fn),
 *   conflictStrategy: "most_restrictive", clock: systemClock, logger,
 * });
 * const s = pipeline.open({ context, constitution });
 * const out = await pipeline.adapt(s.session_id, { selected, candidates, selection_rationale: "…", selection_algorithm: "score" });
 * if (out.outcome === "inject") llm.setSystemPrompt(out.constitution);
 * ```
 */
export function createPipeline(deps: PipelineDeps): Pipeline {
  const { clock } = deps;
  // SECURITY: every input field is bounded in depth and size before anything copies, walks or stores it.
  const bounds = deps.inputBounds ?? DEFAULT_JSON_BOUNDS;
  // By key (access.ts): ids are per owner.
  const sessions = new Map<string, Session>();
  // Keys of open sessions by caller-facing id, for callers that see every owner (keyOf).
  const keysById = new Map<string, Set<string>>();
  // Open sessions per owner, for maxSessionsPerOwner; kept in step with `sessions` (open / delete).
  const ownedCount = new Map<string, number>();
  const maxPerOwner = deps.maxSessionsPerOwner ?? Number.POSITIVE_INFINITY;
  let unsubscribe: (() => void) | undefined;
  let reconcileQueued = false;

  const now = (): string => new Date(clock.wallNow()).toISOString();

  // ── session access ────────────────────────────────────────────────────────────────────────────

  /**
   * Which session `id` means for this caller: the one place the per-owner namespace is resolved
   * (Pipeline.keyOf documents the rule).
   */
  function keyOf(id: string, access: SessionAccess | undefined): string {
    return namespacedKey(id, access) ?? keyAmong(id, [...(keysById.get(id) ?? [])], (owners) => sessionAmbiguous(id, owners));
  }

  /** The one lookup of every operation: a session the caller may not see is "not found" (never "forbidden"). */
  function openSession(id: string, access: SessionAccess | undefined): Session {
    const session = visible(id, access);
    if (session === undefined || session.closing !== undefined) throw sessionNotFound(id);
    return session;
  }

  function visible(id: string, access: SessionAccess | undefined): Session | undefined {
    const session = sessions.get(keyOf(id, access));
    // SECURITY: maySee stays the last word even though keyOf already confined a client to its own ids.
    return session !== undefined && maySee(session.owner, access?.principal) ? session : undefined;
  }

  const sessionInfo = (s: Session): SessionInfo => sessionInfoOf(s);

  function touch(s: Session): void {
    s.updatedAt = now();
  }

  function view(s: Session): SessionView {
    return sessionViewOf(s, periodicScheduler.status(s));
  }

  /** Run `op` in the session's turn. The session must be open when called; queued work still runs if it closes meanwhile. */
  function inTurn<T>(id: string, access: SessionAccess | undefined, op: (s: Session) => Promise<T>): Promise<T> {
    let session: Session;
    try {
      session = openSession(id, access);
    } catch (err) {
      return Promise.reject(err);
    }
    return session.queue.run(() => op(session));
  }

  // ── periodic scheduler (periodic.ts) ──────────────────────────────────────────────────────────

  const periodicScheduler = createPeriodicScheduler<Session>({ ...deps, sessionInfo, touch });

  function onRegistryChange(): void {
    // Coalesce a burst of registry events (a bundle install registers many hooks) into one pass,
    // run after the change that triggered it has fully committed.
    if (reconcileQueued) return;
    reconcileQueued = true;
    queueMicrotask(() => {
      reconcileQueued = false;
      for (const s of sessions.values()) periodicScheduler.reconcile(s);
    });
  }

  // ── operations (operations.ts: the same code for every session store) ────────────────────────
  const operations = createSessionOperations(deps, (s) => {
    s.updatedAt = now();
  });

  /** Stop the session's timers, let its queued operations finish, then forget it (key, id index, owner count). */
  function closeSession(s: Session): Promise<void> {
    if (s.closing !== undefined) return s.closing;
    periodicScheduler.stop(s);
    s.closing = (async () => {
      // Operations accepted before close still run; ticks already queued see `closing` and stop.
      await s.queue.idle();
      sessions.delete(s.key);
      const keys = keysById.get(s.id);
      keys?.delete(s.key);
      if (keys?.size === 0) keysById.delete(s.id);
      if (s.owner !== null) {
        const left = (ownedCount.get(s.owner) ?? 1) - 1;
        if (left > 0) ownedCount.set(s.owner, left);
        else ownedCount.delete(s.owner);
      }
      if (sessions.size === 0 && unsubscribe !== undefined) {
        unsubscribe();
        unsubscribe = undefined;
      }
    })();
    return s.closing;
  }

  const pipeline: Pipeline = {
    open(input, access) {
      const { id, owner, key } = openingOf(input, access, bounds);
      // SECURITY: only the caller's own namespace is checked: another owner's use of the id is invisible.
      if (sessions.has(key)) throw sessionExists(id);
      const held = owner === null ? 0 : (ownedCount.get(owner) ?? 0);
      // Checked before anything is copied or stored: a refused open changes nothing.
      if (held >= maxPerOwner) throw sessionLimit(owner!, maxPerOwner);
      const session: Session = {
        ...newSessionRecord(id, key, owner, input, now()),
        queue: createSerialQueue(),
        schedule: new Map(),
        closing: undefined,
      };
      // Subscribe first: if that throws, no session was added.
      unsubscribe ??= deps.onRegistryChange(onRegistryChange);
      sessions.set(key, session);
      const keys = keysById.get(id) ?? new Set<string>();
      keys.add(key);
      keysById.set(id, keys);
      if (owner !== null) ownedCount.set(owner, held + 1);
      periodicScheduler.reconcile(session);
      return view(session);
    },

    get(id, access) {
      const s = visible(id, access);
      return s === undefined ? undefined : view(s);
    },

    list(access) {
      return [...sessions.values()].filter((s) => maySee(s.owner, access?.principal)).map(view);
    },

    ownerOf(id, access) {
      return visible(id, access)?.owner;
    },

    keyOf(id, access) {
      return keyOf(id, access);
    },

    sessionInfo(key) {
      const s = sessions.get(key);
      return s === undefined ? undefined : sessionInfo(s);
    },

    close(id, access) {
      let s: Session | undefined;
      try {
        s = visible(id, access);
      } catch (err) {
        return Promise.reject(err);
      }
      if (s === undefined) return Promise.reject(sessionNotFound(id));
      return closeSession(s);
    },

    async closeAll() {
      await Promise.all([...sessions.values()].map(closeSession));
    },

    adapt(id, input, access) {
      try {
        assertOperationInput("adapt", input, bounds);
      } catch (err) {
        return Promise.reject(err);
      }
      return inTurn(id, access, (s) => operations.adapt(s, input));
    },

    transition(id, input, access) {
      try {
        assertOperationInput("transition", input, bounds);
      } catch (err) {
        return Promise.reject(err);
      }
      return inTurn(id, access, (s) => operations.transition(s, input));
    },

    conflict(id, input, access) {
      try {
        assertOperationInput("conflict", input, bounds);
      } catch (err) {
        return Promise.reject(err);
      }
      return inTurn(id, access, (s) => operations.conflict(s, input));
    },

    violation(id, input, access) {
      try {
        assertOperationInput("violation", input, bounds);
      } catch (err) {
        return Promise.reject(err);
      }
      return inTurn(id, access, (s) => operations.violation(s, input));
    },
  };
  return pipeline;
}
