/*
 * The public types of the runtime facade (runtime.ts): its options, the Runtime interface and the
 * shapes it hands out. Re-exported by src/index.ts through runtime.ts.
 */
import type { Keyring, KeyringInput } from "../bundle/keys.js";
import type { HookType } from "../model/hook-type.js";
import type { Clock, LifecycleEventMap, LifecycleEventName, Logger } from "../observe/events.js";
import type { SandboxOptions } from "../pool/index.js";
import type { ChainBackend } from "../pool/backend.js";
import type { ProfileDeployment } from "../profiles/enabled.js";
import type { ApprovalLimits, ApprovalsApi } from "../pipeline/approvals.js";
import type { BundleInfo } from "../install/types.js";
import type { BundlesApi } from "../install/bundles-api.js";
import type { ProfileFireInput, ProfileFireResult } from "../fire/profile.js";
import type { ProfilesApi } from "../fire/profiles-api.js";
import type { HookStatsView } from "../fire/stats.js";
import type { StoreOptions, StoreStatus } from "../store/index.js";
import type { SharedSessionTuning } from "../store/session-hook-sync.js";
import type { AuditOptions } from "../fire/audit-trail.js";
import type { AuditApi, AuditStatus, DecisionsApi } from "../fire/audit-api.js";
import type { SessionOperationsApi, SessionOptions, SessionsApi } from "../fire/session-api.js";
import type { HooksApi } from "../fire/hooks-api.js";

/** Options of {@link createRuntime}. Every field has a safe default. */
export interface RuntimeOptions extends SessionOptions {
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
  sharedSessions?: SharedSessionTuning;
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
  audit: AuditStatus;
  /** Where shared state lives; with Redis: this replica, its connection, its peers and their bundle revisions. */
  store: StoreStatus;
}

/**
 * A vcp-hooks runtime (createRuntime). Each part's members are typed with the module that implements
 * them: bundles (install/bundles-api.ts), sessions and the pipeline operations (fire/session-api.ts),
 * hooks (fire/hooks-api.ts), agent events (fire/profiles-api.ts), approvals (pipeline/approvals.ts),
 * audit and decisions (fire/audit-api.ts).
 */
export interface Runtime extends SessionOperationsApi {
  bundles: BundlesApi;
  sessions: SessionsApi;
  hooks: HooksApi;
  /**
   * One event of an agent's hook system (PROFILES §2): the native input in, the merged native answer,
   * its exit code and the chain result out. The input's `session_id` keys an implicit session owned by
   * `principal`. Errors: UNKNOWN_PROFILE, UNKNOWN_EVENT, PROFILE_DISABLED, INVALID_INPUT, SESSION_NOT_FOUND.
   */
  fireProfile(profile: string, event: string, input: ProfileFireInput): Promise<ProfileFireResult>;
  profiles: ProfilesApi;
  approvals: ApprovalsApi;
  on<K extends LifecycleEventName>(event: K, listener: (payload: LifecycleEventMap[K]) => void): () => void;
  status(): RuntimeStatus;
  audit: AuditApi;
  decisions: DecisionsApi;
  /** Prometheus text exposition of the runtime's metrics (DESIGN §6.2 `GET /metrics`). */
  metrics(): Promise<string>;
  /** The input bounds in force (wire names of DESIGN §6.4), for adapters that check bodies early. */
  readonly limits: { readonly json_depth: number; readonly input_bytes: number };
  close(): Promise<void>;
}
