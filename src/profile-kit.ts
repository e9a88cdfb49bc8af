/**
 * `vcp-hooks/profiles`: the event-profile catalogue and the model a profile is written against
 * (PROFILES.md) — for tools that list profiles and for an embedder adding a hook system of its own
 * (`registerProfile`). Each agent's author types (the native input and output an action is written
 * against) are `vcp-hooks/profiles/<id>`; running events is the root entry's `runtime.fireProfile`.
 *
 * @example
 * ```ts
 * import { listProfiles, getProfile } from "vcp-hooks/profiles";
 * for (const p of listProfiles()) console.log(`${p.id}@${p.version}`, Object.keys(getProfile(p.id).events).length);
 * ```
 */
export { getProfile, listProfiles, parseProfileRef, registerProfile, isProfileEvent } from "./profiles/index.js";
export type { EventProfile, EventSpec, ProfileContext, PresentedAnswer, ProfileRef } from "./profiles/index.js";
export type { Aggregated, ChainIntegrity, CommandResult, CompiledMatcher, ComposedInput, Decoded, HookOutputEntry, OutputMisfit, ParsedCommand, SubjectFacts } from "./profiles/types.js";
// A profile's matchers: a CompiledMatcher declares its static `cost` and charges the meter it is given.
export { chargeScan, MAX_MATCHER_COST, ScanBudgetExceeded } from "./profiles/common/scan.js";
export type { ScanMeter } from "./profiles/common/scan.js";
