import type { HookType } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import type { ChainOrigin } from "../observe/events.js";
import { compilePredicate, type CompiledPredicate } from "./predicate.js";
import type { ChainPlan, PlannedHook, ProfilePlanRef } from "../model/chain.js";
import type { CompiledMatcher, EventProfile } from "../profiles/types.js";
import { findProfile, hookMatcher, profileConditionFields, VCP_PROFILE_ID, vcpProfile } from "../profiles/index.js";

export type { ChainPlan, PlannedHook, ProfilePlanRef } from "../model/chain.js";

// Predicates compile once per hook object; hooks are frozen and replaced (never mutated) on change,
// so a WeakMap keyed by the hook is an exact cache and frees itself when a hook is deregistered.
const compiledConditions = new WeakMap<ResolvedHook, CompiledPredicate | null>();

function compiledConditionOf(hook: ResolvedHook): CompiledPredicate | null {
  let compiled = compiledConditions.get(hook);
  if (compiled === undefined) {
    compiled = hook.condition == null ? null : compilePredicate(hook.condition, undefined, "condition", conditionFieldsOf(hook));
    compiledConditions.set(hook, compiled);
  }
  return compiled;
}

/** An event-profile hook's condition reads its event's native input; a VCP hook's, the HookInput (spec §4.4). */
function conditionFieldsOf(hook: ResolvedHook) {
  if (hook.profile === undefined || hook.profile === VCP_PROFILE_ID || hook.event === undefined) return undefined;
  // Install checked the path; a profile this thread does not know accepts it as installed.
  return profileConditionFields(findProfile(hook.profile) ?? { id: hook.profile }, hook.event);
}

/** The plan reference of a VCP chain: profile `vcp`, the hook type as its event. */
export function vcpPlanRef(type: HookType): ProfilePlanRef {
  let ref = vcpRefs.get(type);
  if (ref === undefined) vcpRefs.set(type, (ref = Object.freeze({ id: VCP_PROFILE_ID, event: type, strict: false, settings: Object.freeze({}) })));
  return ref;
}
const vcpRefs = new Map<HookType, ProfilePlanRef>();

/**
 * The plan of one VCP chain: {@link compilePlan} with the `vcp` descriptor. Called when the registry
 * changes (or when a worker first sees a registry revision), never per event. `hooks` must already be
 * in spec §5.1 order.
 *
 * @example
 * ```ts
 * const plan = compileChainPlan("pre_inject", snapshot.hooks().filter((h) => h.type === "pre_inject"), 7);
 * ```
 */
export function compileChainPlan(type: HookType, hooks: readonly ResolvedHook[], revision: number): ChainPlan {
  return compilePlan(vcpProfile, vcpPlanRef(type), hooks, revision);
}

/** The hook type of a VCP plan; `undefined` for another profile's. */
export function vcpTypeOf(plan: Pick<ChainPlan, "profile">): HookType | undefined {
  return plan.profile.id === VCP_PROFILE_ID ? (plan.profile.event as HookType) : undefined;
}

/**
 * What a chain's lifecycle events name it by (observe/events.ts `ChainOrigin`): a VCP chain its hook
 * type, an event-profile chain its profile and event. One frozen object per plan reference.
 *
 * @example
 * ```ts
 * chainOriginOf(vcpPlanRef("pre_inject")); // { type: "pre_inject" }
 * ```
 */
export function chainOriginOf(ref: ProfilePlanRef): ChainOrigin {
  let origin = origins.get(ref);
  if (origin === undefined) {
    origin = Object.freeze(ref.id === VCP_PROFILE_ID ? { type: ref.event as HookType } : { profile: ref.id, event: ref.event });
    origins.set(ref, origin);
  }
  return origin;
}
const origins = new WeakMap<ProfilePlanRef, ChainOrigin>();

/**
 * Whether a failure of this profile hook yields its blocking answer: `fail_closed`, or repo-yaml's
 * `blocking` (a failing blocking hook blocks, PROFILES §8.8). The one rule the executor applies to a
 * failed hook and the server applies to a refused event (issue 24): a guarded event never fails open.
 *
 * @example
 * ```ts
 * hookFailsClosed({ fail_closed: true, trust: "deployment" }); // true
 * ```
 */
export function hookFailsClosed(hook: Pick<ResolvedHook, "fail_closed" | "trust" | "blocking">): boolean {
  // SECURITY: never for a session-trust hook (spec §8.3: it cannot block). Install refuses fail_closed
  // with session trust; a session-trust `blocking` hook runs as an observer (its block is stripped,
  // its failure is a warning), as repo-yaml hooks from an untrusted repository must.
  return hook.trust !== "session" && (hook.fail_closed || hook.blocking === true);
}

const compiledMatchers = new WeakMap<ResolvedHook, CompiledMatcher>();

/**
 * The definition's `matcher` AND its `match` filters (repo-yaml, PROFILES §8.8), compiled once per hook
 * object. A profile without `compileFilter` never sees a `match`: the manifest refuses it at build.
 */
function compiledMatcherOf(profile: EventProfile, hook: ResolvedHook, event: string): CompiledMatcher {
  let compiled = compiledMatchers.get(hook);
  if (compiled === undefined) {
    const matcher = profile.compileMatcher(hook.matcher, event);
    if (hook.match !== undefined && profile.compileFilter === undefined) {
      throw new Error(`hook '${hook.name}': profile ${profile.id} has no match filters`);
    }
    compiled = hookMatcher(matcher, hook.match !== undefined ? profile.compileFilter!(hook.match, event) : undefined);
    compiledMatchers.set(hook, compiled);
  }
  return compiled;
}

/**
 * PROFILES §8.5: the profile's priority rule (descending; Amplifier ascending; config order keeps
 * registration order), then deployment before session scope, then registration order. Stable, pure.
 *
 * @example
 * ```ts
 * const ordered = orderProfileHooks(profile, hooks.filter((h) => h.event === "BeforeTool"));
 * ```
 */
export function orderProfileHooks(profile: Pick<EventProfile, "ordering">, hooks: readonly ResolvedHook[]): ResolvedHook[] {
  const sign = profile.ordering === "priority_asc" ? 1 : profile.ordering === "priority_desc" ? -1 : 0;
  return [...hooks].sort(
    (a, b) =>
      sign * (a.priority - b.priority) ||
      (a.scope === b.scope ? 0 : a.scope === "deployment" ? -1 : 1) ||
      a.seq - b.seq,
  );
}

/**
 * The one plan compiler: the immutable plan of one (profile, event) from hooks already in the
 * profile's order ({@link orderProfileHooks}; VCP: spec §5.1). Conditions and matchers are compiled
 * once (a matcher RE2 refuses throws here, at install, never per event), and, except for a profile
 * that keeps duplicates (VCP), the dedup key (bundle digest, action, matcher) is fixed: later
 * duplicates are recorded `deduplicated` (PROFILES §8.6). repo-yaml's `match` filters and `blocking`
 * flag are part of the key: they change when the definition applies and what its output means, so
 * two definitions that differ there are not identical.
 *
 * @example
 * ```ts
 * const plan = compilePlan(profile, { id: "gemini-cli", event: "BeforeTool", strict: false, settings: {} }, ordered, 3);
 * ```
 */
export function compilePlan(profile: EventProfile, ref: ProfilePlanRef, hooks: readonly ResolvedHook[], revision: number): ChainPlan {
  const firstByKey = new Map<string, string>();
  const planned = hooks.map((hook): PlannedHook => {
    let first: string | undefined;
    if (profile.keepDuplicates !== true) {
      // Exec hooks dedup as upstream does, by name and command (PROFILES §8.6), within one matcher (a
      // twin whose matcher differs may match when this one does not).
      const key = hook.exec !== undefined
        ? JSON.stringify(["exec", hook.name, hook.exec.command, hook.matcher ?? ""])
        : JSON.stringify([hook.action.digest ?? hook.action.bundle, hook.action.export, hook.matcher ?? "", hook.match ?? null, hook.blocking === true]);
      first = firstByKey.get(key);
      if (first === undefined) firstByKey.set(key, hook.name);
    }
    return Object.freeze({
      hook,
      predicate: compiledConditionOf(hook),
      matcher: compiledMatcherOf(profile, hook, ref.event),
      ...(first !== undefined ? { duplicateOf: first } : {}),
    });
  });
  return Object.freeze({ profile: ref, revision, hooks: Object.freeze(planned) });
}

/**
 * How the matching hooks of one event run: the profile's mode, or for `per_definition` sequential as
 * soon as one matching definition says `sequential: true` (gemini-cli, llxprt), else parallel.
 *
 * @example
 * ```ts
 * executionModeOf(profile, matching.map((p) => p.hook)); // "parallel"
 * ```
 */
export function executionModeOf(profile: Pick<EventProfile, "execution">, matching: readonly Pick<ResolvedHook, "sequential">[]): "sequential" | "parallel" {
  if (profile.execution !== "per_definition") return profile.execution;
  return matching.some((h) => h.sequential === true) ? "sequential" : "parallel";
}
