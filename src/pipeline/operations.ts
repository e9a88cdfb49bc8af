/**
 * The four pipeline operations (DESIGN §4.6) on one session's record, whatever stores it: the local
 * pipeline (pipeline.ts, sessions in this process) and the shared one (sessions in Redis) run the same
 * code, so a session behaves the same on every replica. Each operation reads and changes only the
 * record it is handed; the caller runs it in the session's turn and persists the record afterwards.
 * The semantics of each operation are documented at `createPipeline` (pipeline.ts).
 */
import { randomUUID } from "node:crypto";
import type { ChainResult } from "../model/chain.js";
import type { Constitution } from "../model/constitution.js";
import type { ConflictEvent, PostSelectEvent, PreInjectEvent, TransitionEvent, ViolationEvent } from "../model/events.js";
import type { SessionInfo, VcpContext } from "../model/input.js";
import { keepsSafetyRulesOf } from "../integrity/check.js";
import { isTruncatedAnnotations } from "../chain/annotations.js";
import { applyConflictStrategy, compositionBase } from "./strategies.js";
import { sessionKey, type SessionAccess } from "./access.js";
import type {
  AdaptInput, AdaptOutcome, ConflictInput, ConflictOutcome, OpenSessionInput, PeriodicStatus, PipelineDeps, SessionView, TransitionInput, TransitionOutcome, ViolationInput, ViolationOutcome,
} from "./types.js";
import type { JsonBounds } from "../model/json-bounds.js";
import { assertBoundedFields, assertPipelineInput, frozenJsonCopy, isPlainObject } from "./validate.js";

/** What an operation reads and changes of a session: the part every session store keeps. */
export interface SessionRecord {
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
}

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

/** Fields of an adapt input (also `transition.adapt`), bounded before any check reads them. */
const ADAPT_FIELDS = [
  "context", "selected", "candidates", "selection_rationale", "selection_algorithm", "scores", "injection_target", "injection_format", "raw_constitution",
] as const;

/**
 * Check an operation's input: every field bounded in depth and size first, then the model's schema
 * (INVALID_INPUT naming the field). Runs before the session is even looked up, on every store.
 */
export function assertOperationInput(op: "adapt" | "transition" | "conflict" | "violation", input: unknown, bounds: JsonBounds): void {
  // SECURITY: every input field is bounded in depth and size before anything copies, walks or stores it.
  switch (op) {
    case "adapt":
      assertBoundedFields(input, ADAPT_FIELDS, bounds);
      assertPipelineInput("AdaptInput", input);
      return;
    case "transition":
      assertBoundedFields(input, ["to", "trigger", "metadata"], bounds);
      if (isPlainObject(input)) assertBoundedFields(input.adapt, ADAPT_FIELDS, bounds, "adapt.");
      assertPipelineInput("TransitionInput", input);
      return;
    case "conflict":
      assertBoundedFields(input, ["constitutions", "conflicting_rules", "conflict_severity", "composition_strategy"], bounds);
      assertPipelineInput("ConflictInput", input);
      return;
    case "violation":
      assertBoundedFields(input, ["output", "violated_rules", "severity", "violation_evidence", "retry_count", "context"], bounds);
      assertPipelineInput("ViolationInput", input);
      return;
  }
}

/** Chain results are JSON from the sandbox; the session keeps its own frozen copies. */
function keep<T>(value: T): T {
  return frozenJsonCopy("chain result", value);
}

function modifiedConstitution(result: ChainResult): boolean {
  return result.hook_results.some((h) => h.status === "modify" && h.modified_constitution === true);
}

/**
 * HookInput.session of a session (spec §4.2): built here only, for the pipeline's own chains and for
 * `Runtime.fire` on any route, so a session looks the same to a hook, and hashes the same in the
 * audit log, whichever way (and on whichever replica) its chain was fired.
 */
export function sessionInfoOf(s: SessionRecord): SessionInfo {
  // SECURITY: the caller-facing id and this session's own data only: never the owner or the key
  // (which names the owner), so a hook cannot learn who else uses an id.
  return { id: s.id, created_at: s.createdAt, updated_at: s.updatedAt, state: s.state, metadata: s.metadata };
}

/**
 * Who a `sessions.open` opens, whichever store keeps it: the input bounded in depth and size and
 * validated first (nothing is copied yet), the id (a fresh UUID when none is given), the opener as
 * owner, and the key in the opener's namespace (access.ts `sessionKey`).
 */
export function openingOf(input: OpenSessionInput, access: SessionAccess | undefined, bounds: JsonBounds): { id: string; owner: string | null; key: string } {
  // SECURITY: bounded before anything walks or copies it.
  assertBoundedFields(input, ["session_id", "context", "constitution", "state", "metadata"], bounds);
  assertPipelineInput("OpenSessionInput", input);
  const id = input.session_id ?? randomUUID();
  const owner = access?.principal?.id ?? null;
  return { id, owner, key: sessionKey(owner, id) };
}

/**
 * A newly opened session's record, whichever store keeps it: its own frozen copies of what the caller
 * sent (nothing the caller keeps can change it later), last known-good = the opening constitution.
 */
export function newSessionRecord(id: string, key: string, owner: string | null, input: OpenSessionInput, at: string): SessionRecord {
  const constitution = frozenJsonCopy("constitution", input.constitution);
  return {
    id, key, owner,
    context: frozenJsonCopy("context", input.context),
    constitution,
    state: input.state ?? null,
    lastKnownGood: constitution,
    metadata: frozenJsonCopy("metadata", input.metadata ?? {}),
    createdAt: at,
    updatedAt: at,
  };
}

/** What `sessions.get/list` answer for a session, whichever store holds it (frozen). */
export function sessionViewOf(s: SessionRecord, periodic: readonly PeriodicStatus[]): SessionView {
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
    periodic: Object.freeze(periodic.map((p) => Object.freeze({ ...p }))),
  });
}

export interface SessionOperations {
  adapt(s: SessionRecord, input: AdaptInput): Promise<AdaptOutcome>;
  transition(s: SessionRecord, input: TransitionInput): Promise<TransitionOutcome>;
  conflict(s: SessionRecord, input: ConflictInput): Promise<ConflictOutcome>;
  violation(s: SessionRecord, input: ViolationInput): Promise<ViolationOutcome>;
}

/** The operations over `deps.fire`; `touch` marks a record updated now. */
export function createSessionOperations(
  deps: Pick<PipelineDeps, "fire" | "conflictStrategy" | "safetyCriticalRuleIds" | "violationDefault">,
  touch: (s: SessionRecord) => void,
): SessionOperations {
  const violationDefault = deps.violationDefault ?? "deliver";
  const safetyIds: ReadonlySet<string> = new Set(deps.safetyCriticalRuleIds ?? []);
  const sessionInfo = sessionInfoOf;
  type Session = SessionRecord;

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

  async function transition(s: Session, input: TransitionInput): Promise<TransitionOutcome> {
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
  }

  async function conflict(s: Session, input: ConflictInput): Promise<ConflictOutcome> {
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
  }

  async function violation(s: Session, input: ViolationInput): Promise<ViolationOutcome> {
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
  }

  return { adapt: runAdapt, transition, conflict, violation };
}
