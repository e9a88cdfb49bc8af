export { createRegistry } from "./registry.js";
export { compareHooks } from "./ordering.js";
export { compileHook, parseHookDefinition } from "./validate.js";
export { countsTowardRegistryLimit, createRateLimiter, DEFAULT_REGISTRATIONS_PER_MINUTE, gcraSpacing, registryRateLimited, type RateLimiter, type RateDecision } from "./rate-limit.js";
export type { ProfileGuard, ProfileGuardIndex, ResolvedProfilePlan } from "./profile-table.js";
export type { ActionResolver, BundleRevision, Principal, RegisterOptions, Registry, RegistryOptions, RegistrySnapshot, SessionHookRef } from "./types.js";
