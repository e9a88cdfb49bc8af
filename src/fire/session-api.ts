/*
 * The runtime's members that name a session: `sessions.*`, the four pipeline operations and `fire`,
 * over the session store (store/adapters.ts: local or Redis) and the VCP fire path (vcp.ts). Two
 * rules live here, for every member and either store:
 * - a principal names only a session it may see; another's is SESSION_NOT_FOUND, exactly like a
 *   missing one (`visibleKey`, over pipeline/access.ts), and every table is addressed by the key;
 * - a session's session-scope hooks are registered in this replica's registry, recorded for the
 *   other replicas (nothing half-done), and dropped when the session closes.
 */
import { VcpError } from "../errors.js";
import { isHookType, type HookType } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import type { SessionInfo } from "../model/input.js";
import type { ChainResult } from "../model/chain.js";
import type { Clock, Logger } from "../observe/events.js";
import type { JsonBounds } from "../model/json-bounds.js";
import { sessionNotFound } from "../pipeline/errors.js";
import type {
  AdaptInput, AdaptOutcome, ConflictInput, ConflictOutcome, ContextReevaluation, OpenSessionInput, PeriodicTickReport,
  PipelineDeps, SessionAccess, SessionService, SessionView, TransitionInput, TransitionOutcome, ViolationInput, ViolationOutcome,
} from "../pipeline/index.js";
import type { Principal, Registry } from "../registry/index.js";
import type { RegistryAdmission, SessionHookSync } from "../store/adapters.js";
import { callerHook } from "./caller-view.js";
import type { FireInput } from "./types.js";
import { unknownType, type ChainFirer } from "./vcp.js";

/** The pipeline's options of createRuntime (spec §3.4–§3.6). */
export interface SessionOptions {
  /** Default conflict resolution when no on_conflict hook resolves (spec §3.4). Default most_restrictive. */
  conflictStrategy?: "most_restrictive" | "highest_priority" | "reject";
  /** What a violation with no hook decision does (spec §3.5 "default violation response"). Default deliver. */
  violationDefault?: "deliver" | "suppress";
  /** Called when a periodic hook's modify re-evaluated a session's context (spec §3.6). */
  onContextReevaluated?: (notice: ContextReevaluation) => void;
  /** Called after every periodic tick, including failed ones. */
  onPeriodicTick?: (report: PeriodicTickReport) => void;
}

/**
 * Sessions belong to the principal that opened them (DESIGN §6.5). Every operation takes an
 * optional `{ principal }`: a client principal sees and acts only on its own sessions (another's is
 * SESSION_NOT_FOUND, exactly like a missing one); operators and the runtime see all; no principal
 * means the embedding application, which sees all. The rule is `maySee` in src/pipeline/access.ts.
 * With `store: redis` a session lives in Redis and any replica answers for it.
 */
export interface SessionsApi {
  /** Open a session owned by `principal`: its context, constitution, state and last known-good constitution (DESIGN §4.6). */
  open(input: OpenSessionInput, options?: SessionAccess): Promise<SessionView>;
  get(sessionId: string, options?: SessionAccess): Promise<SessionView | undefined>;
  /** The sessions `principal` may see. */
  list(options?: SessionAccess): Promise<SessionView[]>;
  /**
   * Register an allowlisted `scope: session` hook of an installed bundle for one session (DESIGN
   * §3.4); with `store: redis` every replica registers it for the session.
   */
  registerHook(sessionId: string, ref: { bundle: string; hook: string }, options?: { principal?: Principal; owner?: string | null }): Promise<ResolvedHook>;
  /** Close a session: its periodic timers stop and its session-scope hooks go (spec §6.1). */
  close(sessionId: string, options?: SessionAccess): Promise<void>;
}

/** The pipeline operations and VCP chains of the Runtime (spec §3, §5). */
export interface SessionOperationsApi {
  /** post_select then pre_inject for a session (spec §3.1, §3.2, §5.2). */
  adapt(sessionId: string, input: AdaptInput, options?: SessionAccess): Promise<AdaptOutcome>;
  /** on_transition before the state changes; abort keeps the state (spec §3.3). */
  transition(sessionId: string, input: TransitionInput, options?: SessionAccess): Promise<TransitionOutcome>;
  /** on_conflict before the default strategy; abort falls back to last known-good (spec §3.4). */
  conflict(sessionId: string, input: ConflictInput, options?: SessionAccess): Promise<ConflictOutcome>;
  /** on_violation before any default response; abort suppresses the output (spec §3.5). */
  violation(sessionId: string, input: ViolationInput, options?: SessionAccess): Promise<ViolationOutcome>;
  /** Run the chain of `type` for one event (spec §5). An empty chain returns at once. */
  fire<T extends HookType>(type: T, input: FireInput<T>): Promise<ChainResult>;
}

/**
 * The pipeline's dependencies over the VCP fire path: its chains run on `firer` under the session
 * key the pipeline resolved, its periodic hooks come from the registry's current snapshot.
 */
export function pipelineDepsOf(
  options: SessionOptions & { safetyCriticalRules?: readonly string[] | undefined },
  deps: { firer: ChainFirer; registry: Registry; maxSessionsPerOwner: number; inputBounds: JsonBounds; clock: Clock; logger: Logger },
): PipelineDeps {
  const { firer, registry } = deps;
  return {
    // The pipeline has resolved the session already: its key, not a second lookup by id.
    fire: (type, { sessionKey: key, ...input }) => firer.fireKeyed(type, input as FireInput<typeof type>, input.session, key),
    periodicHooks: (key) => registry.snapshot().chain("periodic", key).hooks.map((p) => p.hook),
    onRegistryChange: (listener) => registry.onChange(() => listener()),
    conflictStrategy: options.conflictStrategy ?? "most_restrictive",
    safetyCriticalRuleIds: options.safetyCriticalRules ?? [],
    violationDefault: options.violationDefault ?? "deliver",
    maxSessionsPerOwner: deps.maxSessionsPerOwner,
    inputBounds: deps.inputBounds,
    clock: deps.clock,
    logger: deps.logger,
    ...(options.onContextReevaluated ? { onContextReevaluated: options.onContextReevaluated } : {}),
    ...(options.onPeriodicTick ? { onPeriodicTick: options.onPeriodicTick } : {}),
  };
}

export interface SessionApiDeps {
  sessions: SessionService;
  hooks: SessionHookSync;
  registry: Registry;
  firer: ChainFirer;
  admission: RegistryAdmission;
  /** SANDBOX_CLOSED once the runtime is closed. */
  assertOpen(): void;
}

/**
 * @example
 * ```ts
 * const api = createSessionApi({ sessions, hooks, registry, firer, admission, assertOpen });
 * await api.sessions.open({ session_id: "s1", context, constitution, state: "professional" }, { principal });
 * await api.fire("pre_inject", { session: "s1", context, constitution, event, principal });
 * ```
 */
export function createSessionApi(deps: SessionApiDeps): SessionOperationsApi & { sessions: SessionsApi; visibleKey(sessionId: string, access?: SessionAccess): Promise<string> } {
  const { sessions, registry, admission } = deps;

  /**
   * With a principal that is not the embedding application, the session must be open and visible to
   * it (src/pipeline/access.ts); the error is the one a missing session gets, so ownership never
   * reveals existence. Without a principal: nothing to check (the embedding application). Returns the
   * session's key (access.ts `sessionKey`: ids are per owner). One round trip more with Redis.
   */
  async function visibleKey(sessionId: string, access: SessionAccess = {}): Promise<string> {
    if (access.principal !== undefined && (await sessions.get(sessionId, access)) === undefined) throw sessionNotFound(sessionId);
    // SECURITY: every session table of the runtime is addressed by this key, never by the bare id.
    return sessions.keyOf(sessionId, access);
  }

  async function registerHook(sessionId: string, ref: { bundle: string; hook: string }, options: { principal?: Principal; owner?: string | null } = {}): Promise<ResolvedHook> {
    deps.assertOpen();
    // SECURITY: a client may hang hooks only on its own sessions (DESIGN §6.5).
    const key = await visibleKey(sessionId, options);
    // The deployment-wide limit on registry changes (spec §8.2.5) before any work.
    await admission.admit(options.principal);
    const principal = options.principal ?? { id: `session:${sessionId}`, role: "client" as const };
    // With a shared store the change was counted once, deployment-wide, just above: not again per replica.
    const hook = registry.registerSessionHook(ref, { scope: "session", sessionId: key, principal, ...(admission.shared && options.principal !== undefined ? { rateAdmitted: "shared" as const } : {}) });
    try {
      await deps.hooks.remember(key, { bundle: ref.bundle, hook: ref.hook, principal: principal.id }, { periodic: hook.type === "periodic" });
    } catch (err) {
      // Not recorded for the other replicas ⇒ not registered at all: nothing half-done.
      registry.deregister(hook.name, { scope: "session", sessionId: key, principal });
      throw err;
    }
    return callerHook(hook);
  }

  async function close(sessionId: string, access: SessionAccess = {}): Promise<void> {
    const key = await visibleKey(sessionId, access);
    try {
      await sessions.close(sessionId, access);
    } catch (err) {
      // A session known only through fire() (no open) still owns its session-scope hooks, dropped below.
      if (!(err instanceof VcpError && err.code === "SESSION_NOT_FOUND")) throw err;
    }
    deps.hooks.forget(key);
    registry.dropSession(key);
  }

  async function fire<T extends HookType>(type: T, input: FireInput<T>): Promise<ChainResult> {
    if (!isHookType(type)) throw unknownType(type);
    const requested: SessionInfo = typeof input.session === "string" ? { id: input.session } : input.session;
    const access = { principal: input.principal, owner: input.owner };
    const key = await sessions.keyOf(requested?.id, access);
    // One HookInput.session per session (spec §4.2): an open session's is built by the pipeline, as
    // for its own chains, whatever the caller passed; only a session never opened uses the caller's.
    const open = await sessions.sessionInfo(key);
    // SECURITY: with a principal the session must be open under the key its namespace gives (keyOf
    // confines a client to its own ids, so what is found there is its own): else "not found".
    if (open === undefined && access.principal !== undefined) throw sessionNotFound(requested?.id);
    return deps.firer.fireKeyed(type, input, open ?? requested, key);
  }

  const api: SessionsApi = {
    open: (input, access) => sessions.open(input, access),
    get: (sessionId, access) => sessions.get(sessionId, access),
    list: (access) => sessions.list(access),
    close,
    registerHook,
  };
  return {
    visibleKey,
    sessions: api,
    adapt: (sessionId, input, access) => sessions.adapt(sessionId, input, access),
    transition: (sessionId, input, access) => sessions.transition(sessionId, input, access),
    conflict: (sessionId, input, access) => sessions.conflict(sessionId, input, access),
    violation: (sessionId, input, access) => sessions.violation(sessionId, input, access),
    fire,
  };
}

