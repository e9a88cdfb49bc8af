export { createRegistry } from "./registry.js";
export { compareHooks } from "./ordering.js";
export { compileHook, parseHookDefinition } from "./validate.js";
export { countsTowardRegistryLimit, createRegistryRateLimit, DEFAULT_REGISTRATIONS_PER_MINUTE, gcraSpacing, gcraStep, registryRateLimited, type GcraLimit, type RateDecision, type RateLimitStore, type RegistryRateLimit } from "./rate-limit.js";
export { createLocalRateLimitStore } from "./rate-limit-local.js";
export type { ProfileGuard, ProfileGuardIndex, ResolvedProfilePlan } from "./profile-table.js";
export type { ActionResolver, BundleRevision, Principal, RegisterOptions, Registry, RegistryOptions, RegistrySnapshot, SessionHookAt, SessionHookRef, SessionHooksRebound } from "./types.js";
export { createHookSwitches, enabledNow, type HookSwitch, type HookSwitches, type HookSwitchStore } from "./switches.js";
export { createLocalHookSwitchStore } from "./switches-local.js";
