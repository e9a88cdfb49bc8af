import type { ChainResult } from "../model/chain.js";
import type { Constitution, Rule } from "../model/constitution.js";
import type { HookEventMap, PreInjectEvent, RuleConflict, ViolationEvent, ConflictEvent } from "../model/events.js";
import type { HookType, Scope } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import type { SessionInfo, VcpContext } from "../model/input.js";
import type { JsonBounds } from "../model/json-bounds.js";
import type { Clock, Logger } from "../observe/events.js";
import type { ConflictStrategy } from "./strategies.js";
import type { SessionAccess } from "./access.js";

export type { SessionAccess, SessionPrincipal } from "./access.js";

export type { ConflictStrategy } from "./strategies.js";

/** Names one hook of a chain: hook names are unique within a scope, not across scopes. */
export interface HookRef {
  name: string;
  scope: Scope;
}

/** What the pipeline hands to {@link PipelineDeps.fire}. */
export interface PipelineFireInput<T extends HookType = HookType> {
  /** `session.id` is the caller-facing id; {@link PipelineFireInput.sessionKey} names the session inside the runtime. */
  session: SessionInfo;
  /** The session's key (access.ts `sessionKey`): registry session tables, per-session isolates, audit owner. */
  sessionKey: string;
  context: VcpContext;
  constitution: Constitution;
  event: HookEventMap[T];
  /**
   * Run only these hooks of the chain, keeping chain order. Set only for periodic ticks: each
   * periodic hook has its own interval (spec §3.6 "configurable per hook"), so one tick runs one
   * hook. `fire` must honour it; one that ignores it makes every hook's timer run the whole periodic
   * chain (the pipeline detects that and logs a warning once).
   */
  hooks?: readonly HookRef[];
}

/**
 * Everything the pipeline needs from the runtime. It depends on nothing else, so it can be tested
 * with a fake `fire` and wired to `Runtime.fire` in production.
 */
export interface PipelineDeps {
  /** Run one chain (Runtime.fire). */
  fire<T extends HookType>(type: T, input: PipelineFireInput<T>): Promise<ChainResult>;
  /**
   * The periodic hooks of a session's chain right now (deployment and session scope). Disabled hooks
   * may be included; the pipeline schedules only enabled ones.
   */
  periodicHooks(sessionKey: string): readonly ResolvedHook[];
  /** Subscribe to registry changes (to reschedule periodic timers); returns the unsubscribe function. */
  onRegistryChange(listener: () => void): () => void;
  /** The deployment's default conflict strategy (spec §3.4, DESIGN §6.4 `conflict_strategy`). */
  conflictStrategy: ConflictStrategy;
  /**
   * Rule ids the deployment designates safety-critical (`safety_critical_rules`, spec §8.2.4), in
   * addition to rules flagged `safety_critical: true`. No conflict resolution may drop one. Default none.
   */
  safetyCriticalRuleIds?: readonly string[];
  /**
   * The default response to a violation that no hook handled (spec §5.2 "default violation
   * response"). Default `deliver`.
   */
  violationDefault?: "deliver" | "suppress";
  /** `now()` for periodic `elapsed_ms`, `wallNow()` for session timestamps. */
  clock: Clock;
  logger: Logger;
  /** Timer primitives for the periodic scheduler. Default: setTimeout/clearTimeout, unref'd. */
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (handle: unknown) => void;
  /** Called after every periodic tick (also failed ones, with `error`). Must not throw. */
  onPeriodicTick?: (report: PeriodicTickReport) => void;
  /**
   * Called when a periodic hook's `modify` re-evaluated the session context (spec §3.6): the
   * session context is already the modified one. The caller, who owns selection, typically
   * re-selects and calls `adapt`. Must not throw.
   */
  onContextReevaluated?: (notice: ContextReevaluation) => void;
  /**
   * Open sessions one owner may hold at once (DESIGN §6.5 "sessions per client"); opening one more
   * is SESSION_LIMIT. Sessions opened without a principal (the embedding application) are not
   * counted. Default: no cap.
   */
  maxSessionsPerOwner?: number;
  /**
   * Depth and size bounds on every field of every pipeline input (model/json-bounds.ts), checked
   * before anything else happens. Default DEFAULT_JSON_BOUNDS.
   */
  inputBounds?: JsonBounds;
}

/** Opens a session. `constitution` is taken as already injected: it is also the first last known-good. */
export interface OpenSessionInput {
  /** Generated (UUID) when absent. 1-256 characters. */
  session_id?: string;
  context: VcpContext;
  constitution: Constitution;
  /** Initial state-machine state; default null (no state yet). */
  state?: string | null;
  /** Session metadata, handed to hooks as `session.metadata` (spec §3.6 payload). */
  metadata?: Record<string, unknown>;
}

/** Per-hook schedule of a session, for status and tests. */
export interface PeriodicStatus {
  hook: string;
  scope: Scope;
  interval_ms: number;
  tick_count: number;
  /** Timer expiries dropped because this hook's previous tick was still waiting for its turn. */
  skipped: number;
}

/** A read-only snapshot of one session. All values are deeply frozen JSON copies. */
export interface SessionView {
  readonly session_id: string;
  /** The id of the principal that opened the session, or null when the embedding application did. */
  readonly owner: string | null;
  readonly context: Readonly<VcpContext>;
  /** The constitution currently in effect for the session. */
  readonly constitution: Constitution;
  readonly state: string | null;
  /** The last constitution that passed `pre_inject` (or the one given at open). */
  readonly last_known_good: Constitution;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly created_at: string;
  readonly updated_at: string;
  readonly periodic: readonly PeriodicStatus[];
}

/** Input of {@link Pipeline.adapt}: the caller's selection (the caller owns selection and the LLM). */
export interface AdaptInput {
  /** Context that drove the selection; default the session's context. */
  context?: VcpContext;
  selected: Constitution;
  candidates: Constitution[];
  selection_rationale: string;
  selection_algorithm: string;
  scores?: Record<string, number>;
  /** `pre_inject` event fields (spec §4.5). Defaults: "system", "system_prompt". */
  injection_target?: string;
  injection_format?: PreInjectEvent["injection_format"];
  /**
   * The unprocessed constitution text. Default (and always when a `post_select` hook replaced the
   * constitution): the rules' text, one rule per line.
   */
  raw_constitution?: string;
}

export interface AdaptOutcome {
  /**
   * `inject`: inject `constitution` with `context`. `cancelled`: a `post_select` hook aborted the
   * cycle (spec §3.2). `blocked`: a `pre_inject` hook aborted; injection must not proceed (spec §3.1).
   */
  outcome: "inject" | "cancelled" | "blocked";
  /**
   * `inject`: the constitution to inject. `null` for `cancelled` and `blocked`: nothing may be
   * injected, so a caller that reads only this field cannot inject something the hooks refused.
   */
  constitution: Constitution | null;
  /** `inject`: the context to inject with. `null` for `cancelled` and `blocked`, like `constitution`. */
  context: VcpContext | null;
  /**
   * The session's constitution after the operation (for `inject` the same as `constitution`; otherwise
   * the one it had before, unchanged). Informative: it is not what this cycle may inject.
   */
  session_constitution: Constitution;
  reason: string | null;
  aborted_by: string | null;
  /** The chains that ran, in order: post_select, then pre_inject if it ran. */
  trace: ChainResult[];
}

export interface TransitionInput {
  to: string;
  trigger: string;
  metadata?: Record<string, unknown>;
  /**
   * The adaptation this transition triggers, if any. It runs in the same session turn, only after
   * the `on_transition` chain completed and only if the transition happened (spec §5.2).
   */
  adapt?: AdaptInput;
}

export interface TransitionOutcome {
  outcome: "transitioned" | "blocked";
  /** The state after the operation: `to` when transitioned, the previous state when blocked. */
  state: string | null;
  previous_state: string | null;
  context: VcpContext;
  reason: string | null;
  aborted_by: string | null;
  /** The on_transition chain. */
  trace: ChainResult[];
  /** Present when the input asked for an adaptation and the transition happened. */
  adaptation?: AdaptOutcome;
}

export interface ConflictInput {
  /** The constitutions being composed, in precedence order (first listed wins ties). */
  constitutions: Constitution[];
  conflicting_rules: RuleConflict[];
  conflict_severity: ConflictEvent["conflict_severity"];
  /** The caller's composition strategy, reported to hooks; default the configured `conflictStrategy`. */
  composition_strategy?: string;
}

export interface ConflictOutcome {
  /**
   * `resolved`: an on_conflict hook returned `modify` with a constitution. `default`: no hook
   * resolved; the configured strategy did. `failed`: a hook aborted, or the strategy could not or
   * would not resolve, or a resolution would drop a safety-critical rule of a constitution being
   * composed (reason `integrity_rejected: …`); the session fell back to its last known-good
   * constitution (spec §3.4). A hook's resolution that drops one is normally stopped earlier, in the
   * chain: that hook's outcome is `integrity_rejected` and the next hook, or the default strategy, decides.
   */
  outcome: "resolved" | "default" | "failed";
  /** The session's constitution after the operation (the composition, or last known-good). */
  constitution: Constitution;
  /** Who decided: `hook`, or the default strategy applied. */
  strategy: "hook" | ConflictStrategy;
  /** Rule ids the default strategy dropped (empty for `hook` and `failed`). */
  dropped_rules: string[];
  reason: string | null;
  aborted_by: string | null;
  trace: ChainResult[];
}

export interface ViolationInput {
  output: string;
  violated_rules: Rule[];
  severity: ViolationEvent["severity"];
  violation_evidence: string;
  /** Retries so far for this generation; default 0. Pass the previous outcome's `retry_count`. */
  retry_count?: number;
  /** The context the generation used (e.g. a previous `retry` context); default the session's. */
  context?: VcpContext;
}

export interface ViolationOutcome {
  /**
   * `suppress`: do not deliver anything (a hook aborted, spec §3.5, or the default is suppress).
   * `retry`: regenerate with `context`. `corrected`: deliver `output` (a hook's correction).
   * `deliver`: the configured default; deliver `output` unchanged.
   */
  outcome: "deliver" | "suppress" | "retry" | "corrected";
  /**
   * `deliver` and `corrected`: the one thing the caller may deliver. `null` for `suppress` and `retry`:
   * nothing may be delivered (always present, so a caller never falls back to the violating output).
   */
  output: string | null;
  /** `retry`: the modified context to regenerate with; otherwise `null`. */
  context: VcpContext | null;
  /** `retry`: the input's count + 1; otherwise the input's count. */
  retry_count: number;
  reason: string | null;
  aborted_by: string | null;
  trace: ChainResult[];
}

export interface PeriodicTickReport {
  session_id: string;
  /** The session's owner (null: the embedding application): two owners may use the same `session_id`. */
  owner: string | null;
  hook: string;
  scope: Scope;
  tick_count: number;
  elapsed_ms: number;
  interval_ms: number;
  /** Set when the chain ran; absent when `error` is set. */
  result?: ChainResult;
  error?: unknown;
  context_reevaluated: boolean;
}

export interface ContextReevaluation {
  session_id: string;
  /** The session's owner (null: the embedding application): two owners may use the same `session_id`. */
  owner: string | null;
  hook: string;
  scope: Scope;
  previous_context: VcpContext;
  context: VcpContext;
  result: ChainResult;
}

/**
 * Session state and the four pipeline operations of DESIGN §4.6, plus the periodic scheduler.
 * All operations of one session run one at a time in call order; different sessions run in parallel.
 */
export interface Pipeline {
  /** Open a session owned by `access.principal` (none: the embedding application owns it). */
  open(input: OpenSessionInput, access?: SessionAccess): SessionView;
  /** The session, or undefined when it is not open or `access.principal` may not see it (access.ts). */
  get(sessionId: string, access?: SessionAccess): SessionView | undefined;
  /** The sessions `access.principal` may see. */
  list(access?: SessionAccess): SessionView[];
  /** Stop the session's timers, wait for its queued operations, then forget it. Queued periodic ticks are dropped. */
  close(sessionId: string, access?: SessionAccess): Promise<void>;
  closeAll(): Promise<void>;
  adapt(sessionId: string, input: AdaptInput, access?: SessionAccess): Promise<AdaptOutcome>;
  transition(sessionId: string, input: TransitionInput, access?: SessionAccess): Promise<TransitionOutcome>;
  conflict(sessionId: string, input: ConflictInput, access?: SessionAccess): Promise<ConflictOutcome>;
  violation(sessionId: string, input: ViolationInput, access?: SessionAccess): Promise<ViolationOutcome>;
  /** The owner of an open session (null: the embedding application; undefined: not open or not visible). */
  ownerOf(sessionId: string, access?: SessionAccess): string | null | undefined;
  /**
   * The key (access.ts `sessionKey`) under which `sessionId`, as `access` addresses it, is known inside
   * the runtime, open or not: a client's own namespace; for everyone else `access.owner`, else the
   * embedding application's session of that id, else the one open session of that id.
   * SESSION_AMBIGUOUS when several owners have that id open and no `owner` says which.
   */
  keyOf(sessionId: string, access?: SessionAccess): string;
  /**
   * HookInput.session (spec §4.2) of the open session known by `key` (from {@link Pipeline.keyOf}), or
   * undefined when none is open under that key. The one shape every chain of an open session gets.
   */
  sessionInfo(key: string): SessionInfo | undefined;
}

/**
 * The pipeline as every session store offers it (the seam between the runtime and where sessions
 * live): each call may have to reach a shared store (Redis), so each one is async, and every one of
 * them answers for any session whichever replica opened it. {@link localSessions} adapts the local
 * {@link Pipeline} (sessions in this process) without changing what it does; the shared store
 * (src/store/sessions.ts) keeps the records in Redis and serializes a session's operations across
 * replicas with a lock.
 */
export interface SessionService {
  /** `local`: sessions live in this process; `shared`: in the store every replica uses. */
  readonly kind: "local" | "shared";
  open(input: OpenSessionInput, access?: SessionAccess): Promise<SessionView>;
  get(sessionId: string, access?: SessionAccess): Promise<SessionView | undefined>;
  list(access?: SessionAccess): Promise<SessionView[]>;
  close(sessionId: string, access?: SessionAccess): Promise<void>;
  /** This process stops serving sessions (its timers, its queued work); a shared store keeps them. */
  closeAll(): Promise<void>;
  adapt(sessionId: string, input: AdaptInput, access?: SessionAccess): Promise<AdaptOutcome>;
  transition(sessionId: string, input: TransitionInput, access?: SessionAccess): Promise<TransitionOutcome>;
  conflict(sessionId: string, input: ConflictInput, access?: SessionAccess): Promise<ConflictOutcome>;
  violation(sessionId: string, input: ViolationInput, access?: SessionAccess): Promise<ViolationOutcome>;
  /** Pipeline.keyOf. */
  keyOf(sessionId: string, access?: SessionAccess): Promise<string>;
  /** Pipeline.sessionInfo. */
  sessionInfo(key: string): Promise<SessionInfo | undefined>;
  /** Open sessions (all owners), for metrics. */
  count(): Promise<number>;
}
