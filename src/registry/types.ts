import type { ChainPlan } from "../model/chain.js";
import type { PredicateOptions } from "../chain/predicate.js";
import type { HookType, Scope } from "../model/hook-type.js";
import type { ActionRef, HookDefinition, ResolvedHook } from "../model/hook.js";
import type { Clock, EventSink, Logger } from "../observe/events.js";
import type { EnabledProfile } from "../profiles/enabled.js";
import type { ProfileHookDefinition } from "../model/hook.js";
import type { ProfileGuardIndex, ResolvedProfilePlan } from "./profile-table.js";

/**
 * Who asks for a registry change (spec §8.2.1). `operator` and `system` may change deployment scope;
 * a `client` may only register allowlisted hooks in its session. `system` is the runtime itself
 * (reload at start, cascade disable) and is exempt from rate limits, never from the allowlist.
 *
 * @example
 * ```ts
 * const ops: Principal = { id: "alice", role: "operator" };
 * ```
 */
export interface Principal {
  id: string;
  /** `approver`: decides Amplifier approvals (PROFILES §3.4) of the clients in `approves`; nothing else. */
  role: "operator" | "client" | "approver" | "system";
  /** `approver` only: the client principal ids whose approvals it sees and decides; absent: every client's. */
  approves?: readonly string[];
}

/**
 * Answers whether a hook's action is callable (spec §6.2.6): `true`, or the reason it is not.
 *
 * @example
 * ```ts
 * const resolveAction: ActionResolver = (ref) => loaded.has(ref.bundle) || `bundle "${ref.bundle}" is not installed`;
 * ```
 */
export type ActionResolver = (ref: ActionRef) => true | string;

/**
 * Everything a registry needs, injected so it runs the same in a test, a worker or the main thread.
 *
 * @example
 * ```ts
 * const options: RegistryOptions = { clock: systemClock, emit: (e) => log.info(e), sessionHookAllowlist: ["pii/strip"] };
 * ```
 */
export interface RegistryOptions {
  clock: Clock;
  /** Receives `hook.registered` / `hook.deregistered` after each successful commit. */
  emit: EventSink;
  /** Spec §6.2.6. Without it every action is taken as callable (the bundle layer checks later). */
  resolveAction?: ActionResolver;
  /** Entries `"bundle/hook"` a client may register in its session (DESIGN §3.4, spec §8.2.1). */
  sessionHookAllowlist?: readonly string[];
  /** Per principal; default 30 (spec §8.2.5). */
  registrationsPerMinute?: number;
  predicateOptions?: PredicateOptions;
  /**
   * The recorded deployment-wide switch of a hook name (switches.ts), if any: a deployment hook
   * registered under that name — a new bundle revision's included — starts with it, not with its
   * definition's `enabled`.
   */
  deploymentSwitch?(name: string): boolean | undefined;
  /**
   * After every bundle swap: the session hooks the previous revision offered and this one does not
   * (`withdrawn`, by name), those it deregistered from sessions here (`dropped`), and those an undone
   * swap brought back (`revived`: only before the change is settled, `settleSwap`). Where sessions are
   * shared (store/session-hook-sync.ts), the shared record follows once the change is settled, so a
   * dropped hook stays dropped.
   */
  onSessionHooksRebound?(change: SessionHooksRebound): void;
  /** Where a throwing event sink or change listener is reported; default silent. */
  logger?: Logger;
}

/**
 * The scope a call acts on and who makes it.
 *
 * @example
 * ```ts
 * registry.register(def, { scope: "session", sessionId: "s-1", principal: { id: "u1", role: "client" } });
 * ```
 */
export interface RegisterOptions {
  scope: Scope;
  /**
   * Required for `scope: "session"`. With `scope: "deployment"` only `setEnabled` takes it: the hook is
   * switched in that session alone (spec §7.3.4 cascade); every other call rejects it.
   */
  sessionId?: string;
  principal: Principal;
  /**
   * `"shared"`: the caller already took this change from the registry limit every replica shares
   * (store/rate-limit.ts, with `store: redis`), or replays a change another replica admitted so; this
   * replica's limiter does not count it again. The principal's authority is still checked.
   */
  rateAdmitted?: "shared";
}

/**
 * One bundle revision as the registry takes it (install, hot swap, restore, a peer's revision): what
 * it registers at deployment scope, what it offers to sessions, and — an event-profile bundle — its
 * profile hooks. `digest` and `version` name the revision in lifecycle events and audit records.
 *
 * @example
 * ```ts
 * registry.swapBundle("pii", { version: "1.2.0", digest, deployment: defs, session: offers }, { scope: "deployment", principal: ops });
 * ```
 */
export interface BundleRevision {
  readonly version: string;
  readonly digest: string;
  /** `vcp@1` bundles: the definitions of its deployment-scope hooks. */
  readonly deployment: readonly unknown[];
  /** `vcp@1` bundles: the session-scope hooks a session may register by (bundle, hook name). */
  readonly session: readonly HookDefinition[];
  /** An event-profile bundle: its profile id and hook definitions, keyed by (profile, event). */
  readonly profile?: { readonly id: string; readonly hooks: readonly ProfileHookDefinition[] };
}

/** What one bundle swap did to session hooks (RegistryOptions `onSessionHooksRebound`). */
export interface SessionHooksRebound {
  readonly bundle: string;
  readonly withdrawn: readonly string[];
  readonly dropped: readonly SessionHookAt[];
  readonly revived: readonly SessionHookAt[];
}

/** One session's hook by reference (`session`: the registry's session key). */
export interface SessionHookAt {
  readonly session: string;
  readonly bundle: string;
  readonly hook: string;
}

/** A session hook by reference: the bundle and the name of a session-scope hook it offers. */
export interface SessionHookRef {
  bundle: string;
  hook: string;
}

/**
 * An immutable view of the registry at one revision (spec §6.3): a chain that started on it keeps
 * its hooks whatever happens to the registry afterwards.
 *
 * @example
 * ```ts
 * const snap = registry.snapshot();
 * if (!snap.isEmpty("pre_inject", sessionId)) run(snap.chain("pre_inject", sessionId));
 * ```
 */
export interface RegistrySnapshot {
  /** Increments on every change. */
  readonly revision: number;
  /**
   * The ordered plan for one type and session, built on first use and memoized in this snapshot. A
   * session without session hooks gets the very same object as the deployment plan.
   */
  chain(type: HookType, sessionId?: string): ChainPlan;
  /**
   * Every hook: VCP deployment scope first, then each session's, each in registration order; then the
   * event-profile hooks, bundle by bundle (they carry `profile` and `event`).
   */
  hooks(): readonly ResolvedHook[];
  /**
   * The plan of one (profile, event) of an event profile: hooks in PROFILES §8.5 order, matchers
   * compiled, dedup fixed. Same object until that profile's hooks change.
   */
  profilePlan(enabled: EnabledProfile, event: string): ResolvedProfilePlan;
  /** The events of an event profile that have hooks, in install order. */
  profileEvents(profileId: string): readonly string[];
  /** An event profile's guard (issue 24): the events an enabled fail-closed hook guards, bound to its bundles' revisions. */
  guard(profileId: string): ProfileGuardIndex;
  /** How many profile plans are cached (bounded by the profiles' events and the installed hooks' events). */
  readonly cachedProfilePlans: number;
  /**
   * The definition an installed bundle's ACTIVE revision offers to sessions under `hook`: UNKNOWN_BUNDLE
   * when no revision of `bundle` is installed, UNKNOWN_HOOK when it offers no session hook of that name.
   */
  sessionOffer(bundle: string, hook: string): HookDefinition;
  find(name: string, scope: Scope, sessionId?: string): ResolvedHook | undefined;
  /**
   * True when no *enabled* hook of `type` applies to the session, so the caller can skip dispatch
   * entirely (DESIGN §4.1: "no hook registered or enabled ... returns at once").
   */
  isEmpty(type: HookType, sessionId?: string): boolean;
}

/**
 * The hook registry of spec §6 / §10.1 with copy-on-write snapshots.
 *
 * @example
 * ```ts
 * const registry = createRegistry({ clock: systemClock, emit: () => {} });
 * registry.register(def, { scope: "deployment", principal: { id: "ops", role: "operator" } });
 * ```
 */
export interface Registry {
  register(def: unknown, opts: RegisterOptions): ResolvedHook;
  /** All or none (bundle install). */
  registerAll(defs: readonly unknown[], opts: RegisterOptions): ResolvedHook[];
  /** Throws UNKNOWN_HOOK if `name` is not registered in that scope. */
  deregister(name: string, opts: RegisterOptions): ResolvedHook;
  /** Atomic swap: `add` is validated as if `removeNames` were gone. */
  replace(removeNames: readonly string[], add: readonly unknown[], opts: RegisterOptions): ResolvedHook[];
  /**
   * A bundle's revision becomes the active one (`null`: the bundle is removed), in one commit: its
   * deployment hooks and profile hooks are swapped, the session hooks it offers replaced, and every
   * session hook that refers to it is bound to the new revision — or deregistered, with a reason
   * naming the revision, when the new revision no longer offers it (or the bundle goes). Only
   * deployment scope (operators and the runtime). Returns the deployment and profile hooks added.
   */
  swapBundle(bundle: string, revision: BundleRevision | null, opts: RegisterOptions): ResolvedHook[];
  /**
   * The change of `bundle` is over, kept or undone (bundles.ts): the session hooks its swaps dropped
   * stay dropped. Until then a swap back to the revision they were bound to (the undo of a failed
   * install) brings them back as they were; after it, no swap does — a rollback to that very revision
   * included.
   */
  settleSwap(bundle: string): void;
  /**
   * Register a session hook by reference: the hook `ref.hook` offered by the active revision of
   * `ref.bundle`, in session `opts.sessionId` (allowlist, rate limit and authority as `register`).
   */
  registerSessionHook(ref: SessionHookRef, opts: RegisterOptions): ResolvedHook;
  /**
   * Operator re-enables a hook disabled after a cascade (spec §7.3.4); keeps the hook's `seq`. With
   * `scope: "deployment"` and a `sessionId`, the deployment hook is switched in that session only
   * (operators and the runtime only); `dropSession` forgets such session-local switches.
   */
  setEnabled(name: string, enabled: boolean, opts: RegisterOptions): ResolvedHook;
  /** Session closed: its hooks and its session-local disables go; not rate limited. */
  dropSession(sessionId: string): void;
  /** O(1): the current immutable snapshot. */
  snapshot(): RegistrySnapshot;
  /** Called after every commit with the new snapshot; returns an unsubscribe function. */
  onChange(listener: (snapshot: RegistrySnapshot) => void): () => void;
}
