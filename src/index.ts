/**
 * vcp-hooks public API: the runtime, its types, and the types policy authors use
 * (`import type { HookInput, HookResult } from "vcp-hooks"`).
 */
export { createRuntime, assertNodeVersion } from "./runtime/runtime.js";
export type { Runtime, RuntimeOptions, RuntimeStatus, BundleInfo, BundleSource, FireInput } from "./runtime/runtime.js";
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
