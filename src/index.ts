/**
 * vcp-hooks public API: the runtime, its types, and the types policy authors use
 * (`import type { HookInput, HookResult } from "vcp-hooks"`).
 */
export { createRuntime, assertNodeVersion } from "./runtime/runtime.js";
export type { Runtime, RuntimeOptions, RuntimeStatus, BundleInfo, BundleInstallError, BundleSource, FireInput, InstallOptions } from "./runtime/runtime.js";
export type { ChainBackend, BackendChainTask } from "./runtime/backend.js";
export { VcpError, ERROR_CODES } from "./errors.js";
export type { ErrorCode } from "./errors.js";
export { HOOK_TYPES, TRUST_LEVELS } from "./model/hook-type.js";
export type { HookType, TrustLevel, Scope } from "./model/hook-type.js";
export type { HookDefinition, ResolvedHook, ActionRef } from "./model/hook.js";
export type { HookInput, VcpContext, SessionInfo } from "./model/input.js";
export type { HookResult, ResultStatus, Outcome } from "./model/result.js";
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
export type { LifecycleEventMap, LifecycleEventName } from "./observe/events.js";
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
