/**
 * vcp-hooks public API: the runtime, its types, and the types policy authors use
 * (`import type { HookInput, HookResult } from "vcp-hooks"`), plus the few building blocks the HTTP
 * server and the CLI (thin adapters over this entry) share with it: the config loader, the model's
 * JSON Schemas and name patterns, the operational logger, the audit sink.
 *
 * Other entries hold what a running deployment does not need:
 * - `vcp-hooks/tooling` (src/tooling.ts): build, sign and verify policy bundles, keyrings, constitution
 *   signatures, and read, verify and export audit logs offline (the API of `vcp-hooks
 *   build|keygen|sign|verify|audit`);
 * - `vcp-hooks/profiles` (src/profile-kit.ts): the event-profile catalogue and the EventProfile model;
 *   `vcp-hooks/profiles/<id>`: one agent's author types;
 * - `vcp-hooks/testing` (src/testing.ts): the `ChainBackend` contract, to run chains somewhere other
 *   than the isolated-vm sandbox in tests.
 * Every type a signature here names is exported here or from one of those (a test checks it).
 */
export { createRuntime } from "./runtime/runtime.js";
export { assertNodeVersion } from "./config/node-version.js";
// What createRuntime refuses, checked without starting (`vcp-hooks config check`, `serve`'s preflight).
export { checkRuntimeOptions } from "./runtime/settings.js";
export type { Runtime, RuntimeOptions, RuntimeStatus, BundleInfo, BundleInstallError, KeptRevision, BundleSource, FireInput, InstallOptions } from "./runtime/runtime.js";
export type { HookStatsView } from "./fire/stats.js";
// The Runtime's parts, each typed with the module that implements it.
export type { BundlesApi } from "./install/bundles-api.js";
export type { SessionsApi, SessionOperationsApi, SessionOptions } from "./fire/session-api.js";
export type { ProfilesApi } from "./fire/profiles-api.js";
export type { ApprovalsApi } from "./pipeline/approvals.js";
export type { HooksApi } from "./fire/hooks-api.js";
export type { AuditApi, AuditStatus, DecisionsApi } from "./fire/audit-api.js";
export type { SharedSessionTuning } from "./store/session-hook-sync.js";
export type { SandboxOptions } from "./pool/supervisor.js";
export type { SandboxLimits, FetchPolicy, GuestLogLine } from "./sandbox-host/types.js";
export type { Principal } from "./registry/types.js";
export { VcpError, ERROR_CODES, httpStatusOf, messageWithCauses } from "./errors.js";
export type { ErrorCode, ErrorInfo } from "./errors.js";
// Every default (limits, timeouts, audit, pool sizes, redact keys…), in the wire names of vcp.yaml.
export { DEFAULTS } from "./config/defaults.js";
// The deployment config (vcp.yaml, DESIGN §6.4): validated once, frozen.
export { ConfigSchema, loadConfigFile, resolveConfig, configVersionOf } from "./config/config.js";
export type { ConfigInput, ConfigOverrides, DeepReadonly, ResolvedConfig } from "./config/config.js";
// The shared store (issue 18, vcp.yaml `store:`): its options and `runtime.status().store`.
export { checkReplicaId, REPLICA_ID_FILE } from "./store/replica-id.js";
export type { StoreOptions, RedisStoreOptions, StoreStatus, PeerView, ReplicaRecord, ReplicaBundleReport, RefusedRevision, StoreConnectionStatus, StoreHealthStatus, StoreFailure, DataLossEvent, DataLossKind } from "./store/index.js";
export type { ReplicaVerdicts } from "./install/bundle-sync.js";
// Logging: the interface the runtime takes, and the operational logger (pino, redacting) that
// `vcp-hooks serve` uses; pass it as `logger` to createRuntime.
export type { Logger, Clock, LifecycleEvent, LifecycleEventMap, LifecycleEventName, InputSummary } from "./observe/events.js";
export { createOperationalLogger, LOG_LEVELS, type OperationalLogger, type OperationalLoggerOptions } from "./observe/logger.js";
// The depth rule the runtime applies to every input (DESIGN §6.4 limits.json_depth), exported so
// adapters (the HTTP server) apply the same one to a body before anything else.
export { jsonValueDepth } from "./model/json-bounds.js";
// The model's JSON Schemas (generated from zod once) and its event check: the HTTP server validates with these.
export { MODEL_JSON_SCHEMAS, EVENT_SCHEMA_IDS, pointerPath } from "./model/json-schema.js";
export type { JsonSchema } from "./model/json-schema.js";
export { assertEvent } from "./model/validate-input.js";
// Every name pattern (hook, bundle, export, key id, session id, …): regex, JSON Schema pattern and rule text.
export * as NAME_PATTERNS from "./model/names.js";
export type { NamePattern } from "./model/names.js";
export { HOOK_TYPES, TRUST_LEVELS } from "./model/hook-type.js";
export type { HookType, TrustLevel, Scope } from "./model/hook-type.js";
export type { HookDefinition, ResolvedHook, ActionRef, ExecCommand } from "./model/hook.js";
export type { HookInput, VcpContext, SessionInfo } from "./model/input.js";
export type { HookResult, ResultStatus, Outcome } from "./model/result.js";
export { OUTCOMES, SKIPPED_OUTCOME_LIST } from "./model/result.js";
// What `runtime.fireProfile` answers. The profile catalogue and the EventProfile model (to write a
// profile of one's own) are `vcp-hooks/profiles`; each agent's author types `vcp-hooks/profiles/<id>`.
export type { NativeObject, ExitCode, Verdict } from "./profiles/index.js";
export type { ProfileChainAnswer } from "./model/chain.js";
export type { ProfileFireInput, ProfileFireResult, ProfileChainResult, ProfileListing, ProfilePlanEntry, ProfileRefusedResult } from "./fire/profile.js";
export type { ProfileGuard } from "./registry/index.js";
export type { HookListFilter, HookListing } from "./registry/listing.js";
export type { ProfileDeployment } from "./profiles/enabled.js";
// Approvals of Amplifier `ask_user` answers (PROFILES §3.4): `runtime.approvals`. Who may read one (a
// client reads its own): one rule for the runtime and the HTTP stream.
export { mayReadApproval } from "./pipeline/access.js";
// The agent's hook environment carried to exec hooks (issue 26): one table per profile, one header form.
export { HOOK_ENV, HOOK_ENV_HEADER, HOOK_ENV_LIMITS, decodeHookEnv, hookEnvNames } from "./tooling/hook-env.js";
// The secret-shape scrubber for free text (reasons, a hook's stderr) before it is shown or logged.
export { redactString } from "./audit/redact-string.js";
export type { Approval, ApprovalEvent, ApprovalLimits, ApprovalQuery, ApprovalState } from "./pipeline/approvals.js";
export type { Constitution, Rule } from "./model/constitution.js";
export type { Predicate, PredicateOperator } from "./model/predicate.js";
export type {
  HookEvent,
  HookEventMap,
  PreInjectEvent,
  PostSelectEvent,
  TransitionEvent,
  ConflictEvent,
  RuleConflict,
  ViolationEvent,
  PeriodicEvent,
} from "./model/events.js";
export type { ChainResult, HookExecution, ConstitutionProvenance, ExecRunRecord } from "./model/chain.js";
export type { ChainCompletedEvent, ChainCompletedFields, ChainOrigin } from "./observe/events.js";
export type { Manifest, ManifestInput } from "./bundle/manifest.js";
// A `.vcpb` to install (`runtime.bundles.install(await readArtifactFile(path))`); building and signing
// one is `vcp-hooks/tooling`.
export { readArtifactFile, ARTIFACT_JSON_SCHEMA } from "./bundle/artifact.js";
export type { VcpArtifact, UnverifiedArtifact, ArtifactSignature } from "./bundle/artifact.js";
export type { KeyringInput } from "./bundle/keys.js";
// Audit log (DESIGN §5): the record types of `runtime.audit.query`, and the decision-log sink (`audit.sink`).
export { startAuditSink, readSinkCursor, sinkCursorPath, type AuditSink, type AuditSinkOptions, type AuditSinkStats } from "./audit/sink.js";
export type { AuditRetentionStats } from "./audit/retention.js";
export { createAuditSinkMetrics } from "./observe/metrics.js";
export type { AuditRetentionPolicy } from "./audit/retention.js";
export type { AuditRecord, AuditRecordInput } from "./audit/record.js";
export type { AuditHead } from "./audit/writer.js";
export type { AuditOptions, AuditQuery } from "./fire/audit-trail.js";
export type { DecisionQuery, DecisionPage } from "./audit/decisions.js";
export { DECISION_OUTCOMES, type DecisionRecord, type DecisionSubject, type DecisionHook, type DecisionChange, type DecidedBy, type DecisionOutcome } from "./chain/decision.js";
export type { SubjectKind } from "./model/decision.js";
export { MAX_DECISION_LIMIT, DEFAULT_DECISION_LIMIT } from "./audit/decisions.js";
// Constitution integrity (DESIGN §4.5): the runtime's options. Signing constitutions and checking their
// chains of custody offline are `vcp-hooks/tooling`.
export type { IntegrityOptions } from "./integrity/check.js";
export type { TrustedKey } from "./integrity/signatures.js";
// Pipeline (DESIGN §4.6): session views and the outcome shapes of adapt/transition/conflict/violation.
export type { ConflictStrategy } from "./pipeline/strategies.js";
export type {
  SessionView,
  OpenSessionInput,
  AdaptInput,
  AdaptOutcome,
  TransitionInput,
  TransitionOutcome,
  ConflictInput,
  ConflictOutcome,
  ViolationInput,
  ViolationOutcome,
  ContextReevaluation,
  PeriodicTickReport,
  PeriodicStatus,
  HookRef,
  SessionAccess,
  SessionPrincipal,
} from "./pipeline/index.js";
