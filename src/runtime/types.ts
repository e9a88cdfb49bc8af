/*
 * The public types of the runtime facade (runtime.ts): its options, the Runtime interface and the
 * shapes it hands out. Re-exported by src/index.ts through runtime.ts.
 */
import type { VcpArtifact } from "../bundle/artifact.js";
import type { Keyring, KeyringInput } from "../bundle/keys.js";
import type { HookType, Scope } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import type { ChainResult } from "../model/chain.js";
import type { Clock, LifecycleEventMap, LifecycleEventName, Logger } from "../observe/events.js";
import type { Principal } from "../registry/index.js";
import type { SandboxOptions } from "../pool/index.js";
import type { ChainBackend } from "../pool/backend.js";
import type { ProfileDeployment } from "../profiles/enabled.js";
import type { Approval, ApprovalEvent, ApprovalLimits, ApprovalQuery } from "../pipeline/approvals.js";
import type { BundleInfo, BundleSource, InstallOptions, KeptRevision } from "../install/types.js";
import type { FireInput } from "../fire/types.js";
import type { ProfileFireInput, ProfileFireResult, ProfileListing, ProfilePlanEntry, ProfileRefusedResult } from "../fire/profile.js";
import type { ProfileGuard } from "../registry/index.js";
import type { HookListFilter, HookListing } from "../registry/listing.js";
import type { HookStatsView } from "../fire/stats.js";
import type { ReplicaVerdicts } from "../install/bundle-sync.js";
import type { StoreOptions, StoreStatus } from "../store/index.js";
import type { AuditOptions, AuditQuery } from "../fire/audit-trail.js";
import type { AuditRecord, AuditRetentionStats, DecisionPage, DecisionQuery } from "../audit/index.js";
import type {
  AdaptInput, AdaptOutcome, ConflictInput, ConflictOutcome, ContextReevaluation, OpenSessionInput,
  PeriodicTickReport, SessionAccess, SessionView, TransitionInput, TransitionOutcome, ViolationInput, ViolationOutcome,
} from "../pipeline/index.js";

/** Options of {@link createRuntime}. Every field has a safe default. */
export interface RuntimeOptions {
  /** Options of the isolated-vm sandbox process (threads, limits, fetch policy). */
  sandbox?: SandboxOptions;
  /**
   * Where state shared by replicas lives (issue 18; vcp.yaml `store:`). Default `{ kind: "local" }`:
   * the data directory only, no Redis touched. `{ kind: "redis", url, prefix }`: bundles, limits (and
   * sessions, approvals) shared through Redis by every replica of the prefix.
   */
  store?: StoreOptions;
  /**
   * Run chains on this backend instead of starting the sandbox process. For tests and embedding
   * experiments only: the default sandbox is the security boundary.
   */
  backend?: ChainBackend;
  /** `bundle/hook` entries clients may register per session (spec §8.2.1). Default: none. */
  sessionHookAllowlist?: readonly string[];
  /** Registrations and deregistrations per principal per minute (spec §8.2.5). Default 30. */
  registrationsPerMinute?: number;
  /**
   * Open sessions one principal may own at once (DESIGN §6.5; `limits.sessions_per_client`). Opening
   * one more is SESSION_LIMIT. Sessions opened without a principal are not counted. Default 100.
   */
  maxSessionsPerOwner?: number;
  /** Optional whole-chain deadline per hook type, ms (DESIGN §4.3). */
  chainDeadlineMs?: Partial<Record<HookType, number>>;
  /** Disable hooks that failed in a cascading failure until re-enabled (spec §7.3.4). Default false. */
  cascade?: { disableFailingHooks?: boolean };
  /**
   * Enabled event profiles (vcp.yaml `profiles:`, PROFILES §8.2): `<name>` or `<name>@<version>` →
   * `{ strict?, session_ttl_s?, …profile settings }`. Default: every catalogued profile, non-strict.
   * `vcp@1` is always enabled. A bundle of a profile not enabled is refused with PROFILE_DISABLED.
   */
  profiles?: Readonly<Record<string, ProfileDeployment>>;
  /**
   * Module URLs (`file://…`) of embedder event profiles, each with the profile as its default export:
   * registered in this process's catalogue and in every sandbox worker's before anything runs.
   */
  profileModules?: readonly string[];
  logger?: Logger;
  clock?: Clock;
  /**
   * Data directory (DESIGN §6.4 `data_dir`): installed bundles persist in `<dataDir>/bundles/` and are
   * reloaded, and re-verified, at start. Default: none (nothing persists).
   */
  dataDir?: string;
  /** Trusted signing keys (DESIGN §3.3): a keyring file (YAML/JSON), or its contents. Default: none. */
  keyring?: Keyring | KeyringInput | string;
  /**
   * Refuse unsigned bundles (DESIGN §3.3). Default: `true` when a keyring is configured, `false`
   * without one (development and tests, where `{ manifest, code }` sources are installed). A signed
   * bundle whose signatures do not verify is refused either way.
   */
  requireSignatures?: boolean;
  /** Cap on a bundle's code, bytes (DESIGN §6.4 `limits.bundle_bytes`). Default 5 MiB. */
  maxBundleBytes?: number;
  /**
   * The command lane (vcp.yaml `exec`, PROFILES §6): exec hooks run existing scripts OUTSIDE the
   * sandbox, with this process's user. Off by default; when on, only bundles signed by a keyring key
   * with `max_trust: system` may carry them (EXEC_DISABLED, EXEC_NOT_ALLOWED, EXEC_SHELL_DISABLED at
   * install, audited). `env_allow` (default PATH, HOME, LANG) are the only variables a script sees;
   * `wrapper` prefixes every command (bwrap, systemd-run); `max_output_bytes` (default 1 MiB) caps
   * stdout and stderr each.
   */
  exec?: { enabled?: boolean; shell?: boolean; env_allow?: readonly string[]; wrapper?: readonly string[]; max_output_bytes?: number };
  /**
   * Bounds on every input that enters through `fire`, `sessions.open` and the pipeline operations
   * (DESIGN §6.4 `limits.json_depth`, `limits.input_bytes`): each field nests at most `maxDepth`
   * (default 64, at most 256) and serializes to at most `maxBytes` (default 1 MiB); so does the sum
   * of a chain's fields. The same depth bounds every hook result field inside the sandbox.
   */
  inputLimits?: { maxDepth?: number; maxBytes?: number };
  /** Default conflict resolution when no on_conflict hook resolves (spec §3.4). Default most_restrictive. */
  conflictStrategy?: "most_restrictive" | "highest_priority" | "reject";
  /** What a violation with no hook decision does (spec §3.5 "default violation response"). Default deliver. */
  violationDefault?: "deliver" | "suppress";
  /** Called when a periodic hook's modify re-evaluated a session's context (spec §3.6). */
  onContextReevaluated?: (notice: ContextReevaluation) => void;
  /** Called after every periodic tick, including failed ones. */
  onPeriodicTick?: (report: PeriodicTickReport) => void;
  /**
   * The tamper-evident audit log (spec §8.2.3, DESIGN §5). Default: `<dataDir>/audit/audit.jsonl`
   * when `dataDir` is set, otherwise none. `false` turns it off. `fire` resolves only after the
   * chain's records are durably written (group commit).
   */
  audit?: AuditOptions | false;
  /**
   * This replica's id (issue 18): in every audit record and, with a Redis store, in its heartbeat and
   * leases (wins over `store.replicaId`). Default: the id kept in `<dataDir>/replica-id` (made once
   * as `<host>-<random>`, so stable across restarts), else next to the audit log, else fresh per
   * process. See store/replica-id.ts.
   */
  replicaId?: string;
  /**
   * Constitution integrity (spec §8.2.4, DESIGN §4.5), checked in the sandbox after every modifying
   * hook: rule ids that are safety-critical in addition to those flagged in a constitution, the
   * runtime key that signs modification links, and keys trusted to have signed constitutions.
   */
  /**
   * Keys whose values are redacted from guest `vcp.log` fields and audit annotations (DESIGN §5);
   * common secret shapes are always redacted. Default: DEFAULTS.redact_keys (config/defaults.ts).
   */
  redactKeys?: readonly string[];
  /**
   * Approvals of Amplifier `ask_user` answers (PROFILES §3.4, vcp.yaml `approvals:`): pending ones
   * per session (default 64) and in all (default 4096), the cap on a hook's `approval_timeout`
   * (default 3600 s), and how many decided ones stay readable (default 1024).
   */
  approvals?: Partial<ApprovalLimits>;
  /**
   * Tuning of sessions, periodic hooks and approvals in the shared store (with `store: redis` they
   * live in Redis and every replica serves every session, issue 18). Ignored with the local store.
   */
  sharedSessions?: {
    /** Per-session lock: time to live (renewed while held) and how long an operation waits for it. */
    lock?: { ttlMs?: number; waitMs?: number };
    /** How often this replica looks for due periodic ticks (ms). Default 200. */
    periodicScanMs?: number;
    /** Approval expiry sweep and waiter poll period (ms). Default 500. */
    approvalPollMs?: number;
  };
  integrity?: {
    safetyCriticalRules?: readonly string[];
    runtimeKey?: { keyId: string; privateKeyPem: string };
    trustedConstitutionKeys?: ReadonlyArray<{ key_id: string; public_key_pem: string }>;
  };
}

export interface RuntimeStatus {
  bundles: BundleInfo[];
  hooks: HookStatsView[];
  registry_revision: number;
  sandbox: ReturnType<ChainBackend["stats"]>;
  /**
   * `replica`: the id stamped on every record of this replica's chain (null when the log is off).
   * `retention`: `audit.retention` as of its last run (null without it): what the log takes on disk,
   * what was deleted, and whether segments past a limit are held because the sink has not shipped them.
   */
  audit: { enabled: boolean; replica: string | null; head: { seq: number; hash: string } | null; pending: number; lag_ms: number; retention: AuditRetentionStats | null };
  /** Where shared state lives; with Redis: this replica, its connection, its peers and their bundle revisions. */
  store: StoreStatus;
}


export interface Runtime {
  bundles: {
    /**
     * Install a verified `.vcpb` artifact, or (only when signatures are not required) a
     * `{ manifest, code }` source. Same digest as installed: a no-op returning its info. Another
     * revision: an atomic hot swap. A failure changes nothing and is recorded in `errors`.
     */
    install(bundle: VcpArtifact | BundleSource, options?: InstallOptions): Promise<BundleInfo>;
    remove(name: string, options?: { principal?: Principal }): Promise<BundleInfo>;
    list(): BundleInfo[];
    get(name: string): BundleInfo | undefined;
    /**
     * With `store: redis`: which live replicas run `digest` of `bundle` (`accepted`), refused it
     * (`refused`: replica, code, message — e.g. their keyring does not trust its signer) or have not
     * said yet (`pending`), waiting up to `waitMs` (default `store.upload_wait_ms`) for the silent
     * ones. Null with the local store (one replica: the one that installed it).
     */
    replicas(bundle: string, digest: string, options?: { waitMs?: number }): Promise<ReplicaVerdicts | null>;
    /** The revisions kept of an installed bundle, newest (active) first: what a roll back can return to. */
    revisions(name: string): Promise<KeptRevision[]>;
    /** One kept revision and its manifest (UNKNOWN_REVISION when it is not kept). */
    revision(name: string, digest: string): Promise<KeptRevision & { manifest: unknown }>;
    /** Install a kept revision again (re-verified, downgrade allowed): a roll back. */
    rollback(name: string, digest: string, options?: { principal?: Principal }): Promise<BundleInfo>;
  };
  /**
   * Sessions belong to the principal that opened them (DESIGN §6.5). Every operation takes an
   * optional `{ principal }`: a client principal sees and acts only on its own sessions (another's is
   * SESSION_NOT_FOUND, exactly like a missing one); operators and the runtime see all; no principal
   * means the embedding application, which sees all. The rule is `maySee` in src/pipeline/access.ts.
   * With `store: redis` a session lives in Redis and any replica answers for it.
   */
  sessions: {
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
  };
  /** post_select then pre_inject for a session (spec §3.1, §3.2, §5.2). */
  adapt(sessionId: string, input: AdaptInput, options?: SessionAccess): Promise<AdaptOutcome>;
  /** on_transition before the state changes; abort keeps the state (spec §3.3). */
  transition(sessionId: string, input: TransitionInput, options?: SessionAccess): Promise<TransitionOutcome>;
  /** on_conflict before the default strategy; abort falls back to last known-good (spec §3.4). */
  conflict(sessionId: string, input: ConflictInput, options?: SessionAccess): Promise<ConflictOutcome>;
  /** on_violation before any default response; abort suppresses the output (spec §3.5). */
  violation(sessionId: string, input: ViolationInput, options?: SessionAccess): Promise<ViolationOutcome>;
  hooks: {
    /**
     * The resolved chain order for a type and optional session (DESIGN §6.2 `GET /v1/hooks`). With a
     * session and a principal, the session must be one the principal may see (SESSION_NOT_FOUND otherwise).
     */
    chain(type: HookType, sessionId?: string, options?: SessionAccess): ResolvedHook[];
    /**
     * Every hook of the registry (`GET /v1/hooks`), keyed by (profile, event): the VCP chains (profile
     * `vcp`, event = type; `session`: that session's) then each enabled profile's plans, in the order
     * they run. Filters `profile`, `event`, `bundle`, `type` combine; a profile that is not enabled or an
     * event it does not have is INVALID_REQUEST naming the field.
     */
    list(filter?: HookListFilter & { session?: string }, options?: SessionAccess): HookListing[];
    /**
     * Re-enable (or disable) a hook, e.g. after a cascade disabled it (spec §7.3.4). Without a
     * `sessionId`: globally (a deployment hook by default; operators only). With a `sessionId`: in that
     * session only: its session-scope hook of that name, else the deployment hook there (scope
     * `deployment` names the deployment hook explicitly). Cascades disable hooks per session this way.
     */
    setEnabled(name: string, enabled: boolean, options?: { scope?: Scope; sessionId?: string; owner?: string | null; principal?: Principal }): ResolvedHook;
  };
  /** Run the chain of `type` for one event (spec §5). An empty chain returns at once. */
  fire<T extends HookType>(type: T, input: FireInput<T>): Promise<ChainResult>;
  /**
   * One event of an agent's hook system (PROFILES §2): the native input in, the merged native answer,
   * its exit code and the chain result out. The input's `session_id` keys an implicit session owned by
   * `principal`. Errors: UNKNOWN_PROFILE, UNKNOWN_EVENT, PROFILE_DISABLED, INVALID_INPUT, SESSION_NOT_FOUND.
   */
  fireProfile(profile: string, event: string, input: ProfileFireInput): Promise<ProfileFireResult>;
  /** The enabled event profiles (`GET /v1/profiles`) and the resolved plan of one event (`GET /v1/hooks?profile=…&event=…`). */
  profiles: {
    list(): ProfileListing[];
    plan(profile: string, event: string): ProfilePlanEntry[];
    /**
     * The profile's guard (issue 24): its events an enabled fail-closed hook guards, bound to its
     * installed bundle revisions; computed once per bundle change. UNKNOWN_PROFILE / PROFILE_DISABLED.
     */
    guard(profile: string): ProfileGuard;
    /**
     * A request for (profile, event) the caller refused instead of firing (too large, not JSON, too
     * deep, over a bound, any coded error): when an enabled fail-closed hook guards the event, the
     * profile's blocking answer naming the refusal (exit code 2), audited as one `refused_fail_closed`
     * record; `undefined` otherwise (answer the coded error). The HTTP server calls it for every error
     * of the profile route after authentication.
     */
    refuse(profile: string, event: string, refusal: { code: string; message: string }, options?: { principal?: Principal }): Promise<ProfileRefusedResult | undefined>;
  };
  /**
   * Approvals (PROFILES §3.4, §8.9): every Amplifier `ask_user` answer of `fireProfile` is a pending
   * approval that an operator, an `approver` of the session's owner, or the embedding application
   * decides. A client principal sees only approvals of its own sessions (another's is
   * APPROVAL_NOT_FOUND) and decides none (FORBIDDEN: its agent asked).
   */
  approvals: {
    list(query?: ApprovalQuery): Promise<Approval[]>;
    /** `full: true`: the whole prompt in `prompt` while the approval is pending (`prompt_truncated` then says whether even that is cut, past 65,536 characters). */
    get(id: string, options?: { principal?: Principal; full?: boolean }): Promise<Approval>;
    /** Granted for allow / allow once / allow always (any case); anything else denies. APPROVAL_DECIDED once settled; FORBIDDEN for a client. */
    decide(id: string, decision: string, options?: { principal?: Principal }): Promise<Approval>;
    /** Resolves once the approval is decided or expired. */
    wait(id: string, options?: { principal?: Principal }): Promise<Approval>;
    on(event: "approval", listener: (event: ApprovalEvent) => void): () => void;
  };
  on<K extends LifecycleEventName>(event: K, listener: (payload: LifecycleEventMap[K]) => void): () => void;
  status(): RuntimeStatus;
  /** The audit log (DESIGN §6.2 `GET /v1/audit`, `GET /v1/audit/head`); AUDIT_DISABLED when off. */
  audit: {
    query(query?: AuditQuery): Promise<AuditRecord[]>;
    head(): { seq: number; hash: string };
  };
  /**
   * Decision records read back from the audit log (`GET /v1/decisions`, docs/decisions.md): one page,
   * newest first; `query.client` scopes it to the chains one principal fired. AUDIT_DISABLED when off.
   */
  decisions: {
    query(query: DecisionQuery): Promise<DecisionPage>;
  };
  /** Prometheus text exposition of the runtime's metrics (DESIGN §6.2 `GET /metrics`). */
  metrics(): Promise<string>;
  /** The input bounds in force (wire names of DESIGN §6.4), for adapters that check bodies early. */
  readonly limits: { readonly json_depth: number; readonly input_bytes: number };
  close(): Promise<void>;
}
