/**
 * vcp-hooks public API: the runtime, its types, and the types policy authors use
 * (`import type { HookInput, HookResult } from "vcp-hooks"`).
 */
export { createRuntime, assertNodeVersion } from "./runtime/runtime.js";
export type { Runtime, RuntimeOptions, RuntimeStatus, BundleInfo, BundleInstallError, BundleSource, FireInput, InstallOptions } from "./runtime/runtime.js";
export type { ChainBackend, BackendChainTask } from "./runtime/backend.js";
export { VcpError, ERROR_CODES } from "./errors.js";
// Bounds on JSON crossing a boundary (DESIGN §6.4 limits.json_depth / limits.input_bytes): the rule
// the runtime applies to every input, exported so adapters (the HTTP server) apply the same one early.
export { assertInputBounds, jsonValueDepth, DEFAULT_JSON_DEPTH, DEFAULT_INPUT_BYTES, JSON_DEPTH_CEILING } from "./model/json-bounds.js";
export type { JsonBounds } from "./model/json-bounds.js";
// The model's JSON Schemas (generated from zod once) and its event check: the HTTP server validates with these.
export { MODEL_JSON_SCHEMAS, EVENT_SCHEMA_IDS, pointerPath } from "./model/json-schema.js";
export type { JsonSchema } from "./model/json-schema.js";
export { assertEvent } from "./model/validate-input.js";
export type { ErrorCode } from "./errors.js";
export { HOOK_TYPES, TRUST_LEVELS } from "./model/hook-type.js";
export type { HookType, TrustLevel, Scope } from "./model/hook-type.js";
export type { HookDefinition, ResolvedHook, ActionRef } from "./model/hook.js";
export type { HookInput, VcpContext, SessionInfo } from "./model/input.js";
export type { HookResult, ResultStatus, Outcome } from "./model/result.js";
export { OUTCOMES, SKIPPED_OUTCOME_LIST } from "./model/result.js";
export { getProfile, listProfiles, parseProfileRef, registerProfile, isProfileEvent } from "./profiles/index.js";
export type { EventProfile, EventSpec, ProfileContext, NativeObject, PresentedAnswer, Verdict, ExitCode } from "./profiles/index.js";
export type { ProfileChainAnswer } from "./chain/types.js";
export type { ProfileFireInput, ProfileFireResult, ProfileChainResult, ProfileListing, ProfilePlanEntry } from "./runtime/fire-profile.js";
export type { ProfileDeployment } from "./runtime/profile-hooks.js";
// Approvals of Amplifier `ask_user` answers (PROFILES §3.4): `runtime.approvals`.
export { isGranting, DEFAULT_APPROVAL_LIMITS } from "./runtime/approvals.js";
export type { Approval, ApprovalEvent, ApprovalLimits, ApprovalQuery, ApprovalState } from "./runtime/approvals.js";
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
export type { ChainResult, HookExecution } from "./chain/types.js";
export type { LifecycleEventMap, LifecycleEventName, ChainCompletedEvent } from "./observe/events.js";
export type { Manifest, ManifestInput } from "./bundle/manifest.js";
// Policy bundles (DESIGN §3): manifest, build, artifact, keys — the API of `vcp-hooks build|keygen|sign|verify`.
export { loadManifestFile, parseManifestYaml, manifestJsonSchema, renderManifestJsonSchema, MANIFEST_FILE } from "./bundle/manifest.js";
export type { ManifestProblem } from "./bundle/manifest.js";
export { buildBundle, refuseImport, DEFAULT_ENTRY, LLM_SDK_PACKAGES } from "./bundle/build.js";
export type { BuildOptions, BuildResult, BuildProblem, ExportProbe } from "./bundle/build.js";
export {
  createArtifact,
  serializeArtifact,
  parseArtifact,
  readArtifactFile,
  signArtifact,
  verifyArtifact,
  ARTIFACT_FORMAT,
  ARTIFACT_MEDIA_TYPE,
  DEFAULT_MAX_CODE_BYTES,
} from "./bundle/artifact.js";
export type { VcpArtifact, ArtifactSignature, VerifiedArtifact, VerifyOptions } from "./bundle/artifact.js";
export { generateKeyPair, loadKeyring } from "./bundle/keys.js";
export type { Keyring, KeyringKey, KeyringInput, KeyPairPem } from "./bundle/keys.js";
// Audit log (DESIGN §5): `vcp-hooks audit verify`, and the record types of `runtime.audit.query`.
export { verifyAuditLog } from "./audit/verify.js";
// Decision-log export: read the log back (`audit tail|export`) and ship it (`audit.sink`).
export { readAuditRecords, followAuditRecords, type ReadOptions as AuditReadOptions } from "./audit/reader.js";
export { formatRecords, EXPORT_FORMATS, type ExportFormat } from "./audit/export.js";
export { startAuditSink, readSinkCursor, type AuditSink, type AuditSinkOptions, type AuditSinkStats } from "./audit/sink.js";
export { createAuditSinkMetrics } from "./observe/metrics.js";
export type { AuditVerdict, VerifyAuditOptions } from "./audit/verify.js";
export type { AuditRecord, AuditRecordInput } from "./audit/record.js";
export type { AuditOptions, AuditQuery } from "./runtime/audit-trail.js";
// Constitution integrity (DESIGN §4.5): sign constitutions and check their chains of custody.
export { signConstitution, verifySignatureChain } from "./integrity/signatures.js";
// Pipeline (DESIGN §4.6): session views and the outcome shapes of adapt/transition/conflict/violation.
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
  SessionAccess,
  SessionPrincipal,
} from "./pipeline/index.js";
