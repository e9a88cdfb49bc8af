import { randomUUID } from "node:crypto";
import type { ChainResult } from "../chain/types.js";
import type { Constitution } from "../model/constitution.js";
import type { ConflictEvent, PostSelectEvent, PreInjectEvent, TransitionEvent, ViolationEvent } from "../model/events.js";
import type { SessionInfo, VcpContext } from "../model/input.js";
import { maySee, sessionKey, type SessionAccess } from "./access.js";
import { sessionAmbiguous, sessionExists, sessionLimit, sessionNotFound } from "./errors.js";
import { createPeriodicScheduler, type ScheduleEntry } from "./periodic.js";
import { createSerialQueue, type SerialQueue } from "./queue.js";
import { keepsSafetyRulesOf } from "../integrity/check.js";
import { applyConflictStrategy, compositionBase } from "./strategies.js";
import type {
  AdaptInput,
  AdaptOutcome,
  ConflictOutcome,
  Pipeline,
  PipelineDeps,
  SessionView,
  TransitionOutcome,
  ViolationOutcome,
} from "./types.js";
import { DEFAULT_JSON_BOUNDS } from "../model/json-bounds.js";
import { isTruncatedAnnotations } from "../chain/annotations.js";
import { assertBoundedFields, assertPipelineInput, frozenJsonCopy, isPlainObject } from "./validate.js";

interface Session {
  /** The caller-facing id: unique per owner only. */
  readonly id: string;
  /** access.ts `sessionKey(owner, id)`: unique in the runtime; what `sessions`, the registry and `fire` use. */
  readonly key: string;
  /** The principal id that opened it; null for the embedding application (access.ts). */
  readonly owner: string | null;
  context: VcpContext;
  constitution: Constitution;
  state: string | null;
  lastKnownGood: Constitution;
  readonly metadata: Record<string, unknown>;
  readonly createdAt: string;
  updatedAt: string;
  readonly queue: SerialQueue;
  /** Its periodic hooks' timers (periodic.ts). */
  readonly schedule: Map<string, ScheduleEntry>;
  closing: Promise<void> | undefined;
}

/** Fields of an adapt input (also `transition.adapt`), bounded before any check reads them. */
const ADAPT_FIELDS = [
  "context", "selected", "candidates", "selection_rationale", "selection_algorithm", "scores", "injection_target", "injection_format", "raw_constitution",
] as const;

/**
 * The unprocessed constitution text handed to `pre_inject` when the caller gave none: one rule per line.
 *
 * @example
 * ```ts
 * renderConstitution({ id: "c", rules: [{ id: "a", text: "Be brief." }, { id: "b", text: "Cite." }] }); // "Be brief.\nCite."
 * ```
 */
export function renderConstitution(constitution: Constitution): string {
  return constitution.rules.map((rule) => rule.text).join("\n");
}

/** Chain results are JSON from the sandbox; the session keeps its own frozen copies. */
function keep<T>(value: T): T {
  return frozenJsonCopy("chain result", value);
}

function modifiedConstitution(result: ChainResult): boolean {
  return result.hook_results.some((h) => h.status === "modify" && h.modified_constitution === true);
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
  const violationDefault = deps.violationDefault ?? "deliver";
  const safetyIds: ReadonlySet<string> = new Set(deps.safetyCriticalRuleIds ?? []);
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
    const principal = access?.principal;
    // SECURITY: a client names only its own namespace; it cannot reach, or detect, another owner's id.
    if (principal !== undefined && principal.role !== "operator" && principal.role !== "system") return sessionKey(principal.id, id);
    if (access?.owner !== undefined) return sessionKey(access.owner, id);
    if (sessions.has(id)) return id;
    const keys = keysById.get(id);
    if (keys === undefined || keys.size === 0) return id;
    if (keys.size > 1) throw sessionAmbiguous(id, [...keys].map((k) => sessions.get(k)!.owner));
    return keys.values().next().value!;
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

  /**
   * HookInput.session of an open session (spec §4.2): built here only, for the pipeline's own chains
   * and for `Runtime.fire` on any route (Pipeline.sessionInfo), so a session looks the same to a hook,
   * and hashes the same in the audit log, whichever way its chain was fired.
   */
  function sessionInfo(s: Session): SessionInfo {
    // SECURITY: the caller-facing id and this session's own data only: never the owner or the key
    // (which names the owner), so a hook cannot learn who else uses an id.
    return { id: s.id, created_at: s.createdAt, updated_at: s.updatedAt, state: s.state, metadata: s.metadata };
  }

  function touch(s: Session): void {
    s.updatedAt = now();
  }

  function view(s: Session): SessionView {
    const periodic = periodicScheduler.status(s);
    return Object.freeze({
      session_id: s.id,
      owner: s.owner,
      context: s.context,
      constitution: s.constitution,
      state: s.state,
      last_known_good: s.lastKnownGood,
      metadata: s.metadata,
      created_at: s.createdAt,
      updated_at: s.updatedAt,
      periodic: Object.freeze(periodic),
    });
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

  // ── operations ────────────────────────────────────────────────────────────────────────────────


  async function runAdapt(s: Session, input: AdaptInput): Promise<AdaptOutcome> {
    const context = input.context !== undefined ? frozenJsonCopy("context", input.context) : s.context;
    const postEvent: PostSelectEvent = {
      candidates: input.candidates,
      selection_rationale: input.selection_rationale,
      selection_algorithm: input.selection_algorithm,
      ...(input.scores !== undefined ? { scores: input.scores } : {}),
    };
    const post = await deps.fire("post_select", { session: sessionInfo(s), sessionKey: s.key, context, constitution: input.selected, event: postEvent });
    const trace = [post];
    if (post.status === "aborted") {
      // Spec §3.2: abort cancels the entire adaptation cycle; pre_inject never fires.
      return refused("cancelled", s, post, trace);
    }
    // Spec §5.2: pre_inject starts only here, after every post_select hook completed. The caller's
    // raw text describes the caller's selection; if a hook replaced it, the text is re-rendered.
    const rawConstitution = input.raw_constitution !== undefined && !modifiedConstitution(post) ? input.raw_constitution : renderConstitution(post.constitution);
    const preEvent: PreInjectEvent = {
      injection_target: input.injection_target ?? "system",
      injection_format: input.injection_format ?? "system_prompt",
      raw_constitution: rawConstitution,
    };
    const pre = await deps.fire("pre_inject", { session: sessionInfo(s), sessionKey: s.key, context: post.context, constitution: post.constitution, event: preEvent });
    trace.push(pre);
    if (pre.status === "aborted") {
      // Spec §3.1: injection MUST NOT proceed; the session keeps what it had.
      return refused("blocked", s, pre, trace);
    }
    s.context = keep(pre.context);
    s.constitution = keep(pre.constitution);
    s.lastKnownGood = s.constitution;
    touch(s);
    return { outcome: "inject", constitution: s.constitution, context: s.context, session_constitution: s.constitution, reason: null, aborted_by: null, trace };
  }

  /**
   * An adaptation that must not inject: nothing in the fields a caller injects from, the session's
   * unchanged constitution named apart.
   */
  function refused(outcome: "cancelled" | "blocked", s: Session, chain: ChainResult, trace: ChainResult[]): AdaptOutcome {
    // SECURITY: spec §3.1/§3.2 — after an abort nothing may be injected; a caller that skims the body
    // for `constitution` finds null, never a constitution it could inject by mistake.
    return { outcome, constitution: null, context: null, session_constitution: s.constitution, reason: chain.reason, aborted_by: chain.aborted_by, trace };
  }

  function fallBack(s: Session): void {
    s.constitution = s.lastKnownGood;
    touch(s);
  }

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
      assertBoundedFields(input, ["session_id", "context", "constitution", "state", "metadata"], bounds);
      assertPipelineInput("OpenSessionInput", input);
      const id = input.session_id ?? randomUUID();
      const owner = access?.principal?.id ?? null;
      const key = sessionKey(owner, id);
      // SECURITY: only the caller's own namespace is checked: another owner's use of the id is invisible.
      if (sessions.has(key)) throw sessionExists(id);
      const held = owner === null ? 0 : (ownedCount.get(owner) ?? 0);
      // Checked before anything is copied or stored: a refused open changes nothing.
      if (held >= maxPerOwner) throw sessionLimit(owner!, maxPerOwner);
      const constitution = frozenJsonCopy("constitution", input.constitution);
      const at = now();
      const session: Session = {
        id,
        key,
        owner,
        context: frozenJsonCopy("context", input.context),
        constitution,
        state: input.state ?? null,
        lastKnownGood: constitution,
        metadata: frozenJsonCopy("metadata", input.metadata ?? {}),
        createdAt: at,
        updatedAt: at,
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
        assertBoundedFields(input, ADAPT_FIELDS, bounds);
        assertPipelineInput("AdaptInput", input);
      } catch (err) {
        return Promise.reject(err);
      }
      return inTurn(id, access, (s) => runAdapt(s, input));
    },

    transition(id, input, access) {
      try {
        assertBoundedFields(input, ["to", "trigger", "metadata"], bounds);
        if (isPlainObject(input)) assertBoundedFields(input.adapt, ADAPT_FIELDS, bounds, "adapt.");
        assertPipelineInput("TransitionInput", input);
      } catch (err) {
        return Promise.reject(err);
      }
      return inTurn(id, access, async (s): Promise<TransitionOutcome> => {
        const previous = s.state;
        const event: TransitionEvent = {
          previous_state: previous,
          new_state: input.to,
          trigger: input.trigger,
          transition_metadata: input.metadata ?? {},
        };
        const chain = await deps.fire("on_transition", { session: sessionInfo(s), sessionKey: s.key, context: s.context, constitution: s.constitution, event });
        const trace = [chain];
        if (chain.status === "aborted") {
          // Spec §3.3: the state machine MUST remain in its previous state.
          return { outcome: "blocked", state: previous, previous_state: previous, context: s.context, reason: chain.reason, aborted_by: chain.aborted_by, trace };
        }
        s.state = input.to;
        s.context = keep(chain.context);
        touch(s);
        const outcome: TransitionOutcome = { outcome: "transitioned", state: s.state, previous_state: previous, context: s.context, reason: null, aborted_by: null, trace };
        // Spec §5.2: the triggered adaptation starts only after on_transition completed, in the
        // same turn, so nothing else of this session can run in between.
        if (input.adapt !== undefined) outcome.adaptation = await runAdapt(s, input.adapt);
        return outcome;
      });
    },

    conflict(id, input, access) {
      try {
        assertBoundedFields(input, ["constitutions", "conflicting_rules", "conflict_severity", "composition_strategy"], bounds);
        assertPipelineInput("ConflictInput", input);
      } catch (err) {
        return Promise.reject(err);
      }
      return inTurn(id, access, async (s): Promise<ConflictOutcome> => {
        const event: ConflictEvent = {
          conflicting_rules: input.conflicting_rules,
          composition_strategy: input.composition_strategy ?? deps.conflictStrategy,
          conflict_severity: input.conflict_severity,
          // Spec §3.4 payload "the conflicting constitutions"; the event schema is open for it.
          constitutions: input.constitutions,
        };
        const base = compositionBase(input.constitutions, input.conflicting_rules);
        // Spec §5.2: on_conflict fires before the default strategy is even computed.
        const chain = await deps.fire("on_conflict", { session: sessionInfo(s), sessionKey: s.key, context: s.context, constitution: base, event });
        const trace = [chain];
        if (chain.status === "aborted") {
          // Spec §3.4: the composition fails and the runtime falls back to the last known-good.
          fallBack(s);
          return { outcome: "failed", constitution: s.constitution, strategy: "hook", dropped_rules: [], reason: chain.reason, aborted_by: chain.aborted_by, trace };
        }
        if (modifiedConstitution(chain)) {
          // SECURITY: spec §8.2.4 — the chain's integrity check already holds a resolution to every
          // constitution being composed; checked again here so no backend can land one that drops a
          // safety-critical rule.
          const unsafe = keepsSafetyRulesOf(input.constitutions, chain.constitution, safetyIds);
          if (unsafe !== null) {
            fallBack(s);
            return { outcome: "failed", constitution: s.constitution, strategy: "hook", dropped_rules: [], reason: `integrity_rejected: the resolution ${unsafe}`, aborted_by: null, trace };
          }
          s.constitution = keep(chain.constitution);
          s.context = keep(chain.context);
          touch(s);
          return { outcome: "resolved", constitution: s.constitution, strategy: "hook", dropped_rules: [], reason: null, aborted_by: null, trace };
        }
        const strategy = deps.conflictStrategy;
        const verdict = applyConflictStrategy(strategy, input.constitutions, input.conflicting_rules, safetyIds);
        if (verdict.ok) {
          // SECURITY: the same rule for the default strategies: never drop a safety-critical rule.
          const unsafe = keepsSafetyRulesOf(input.constitutions, verdict.constitution, safetyIds);
          if (unsafe !== null) {
            fallBack(s);
            return { outcome: "failed", constitution: s.constitution, strategy, dropped_rules: [], reason: `integrity_rejected: ${strategy} ${unsafe}`, aborted_by: null, trace };
          }
        }
        if (!verdict.ok) {
          fallBack(s);
          return { outcome: "failed", constitution: s.constitution, strategy, dropped_rules: [], reason: verdict.reason, aborted_by: null, trace };
        }
        s.constitution = keep(verdict.constitution);
        s.context = keep(chain.context);
        touch(s);
        return { outcome: "default", constitution: s.constitution, strategy, dropped_rules: verdict.dropped, reason: null, aborted_by: null, trace };
      });
    },

    violation(id, input, access) {
      try {
        assertBoundedFields(input, ["output", "violated_rules", "severity", "violation_evidence", "retry_count", "context"], bounds);
        assertPipelineInput("ViolationInput", input);
      } catch (err) {
        return Promise.reject(err);
      }
      return inTurn(id, access, async (s): Promise<ViolationOutcome> => {
        const retryCount = input.retry_count ?? 0;
        const event: ViolationEvent = {
          output: input.output,
          violated_rules: input.violated_rules,
          severity: input.severity,
          violation_evidence: input.violation_evidence,
          retry_count: retryCount,
        };
        const context = input.context !== undefined ? frozenJsonCopy("context", input.context) : s.context;
        const chain = await deps.fire("on_violation", { session: sessionInfo(s), sessionKey: s.key, context, constitution: s.constitution, event });
        const trace = [chain];
        const common = { reason: chain.reason, aborted_by: chain.aborted_by, trace };
        // SECURITY: spec §3.5 — `output` and `context` are always present; null where the outcome forbids their use.
        const nothing = { output: null, context: null };
        if (chain.status === "aborted") {
          // Spec §3.5: the violating response MUST NOT be delivered: no output at all.
          return { outcome: "suppress", ...nothing, retry_count: retryCount, ...common };
        }
        const acted = chain.hook_results.filter((h) => h.status === "modify" && h.outcome === "ok");
        let corrected: string | undefined;
        let lostBy: string | undefined;
        for (const h of acted) {
          if (isTruncatedAnnotations(h.annotations)) {
            // Its corrected_output, if any, went with the annotations (over the annotation cap).
            lostBy = h.hook;
            corrected = undefined;
            continue;
          }
          const text = h.annotations?.["corrected_output"];
          if (typeof text === "string") {
            corrected = text;
            lostBy = undefined;
          }
        }
        if (corrected !== undefined) return { outcome: "corrected", output: corrected, context: null, retry_count: retryCount, ...common };
        if (lostBy !== undefined) {
          // SECURITY: a correction too large to keep never turns into delivering the violating output.
          return {
            outcome: "suppress",
            ...nothing,
            retry_count: retryCount,
            ...common,
            reason: `hook ${lostBy} modified the output but its annotations exceeded the annotation cap and were truncated; the violating output is suppressed`,
          };
        }
        if (acted.some((h) => h.modified_context === true)) {
          return { outcome: "retry", output: null, context: chain.context, retry_count: retryCount + 1, ...common };
        }
        if (violationDefault === "suppress") return { outcome: "suppress", ...nothing, retry_count: retryCount, ...common };
        return { outcome: "deliver", output: input.output, context: null, retry_count: retryCount, ...common };
      });
    },
  };
  return pipeline;
}
