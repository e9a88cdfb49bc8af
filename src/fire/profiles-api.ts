/*
 * The Runtime members of agent events: `fireProfile` (the profile fire path, profile.ts, with an
 * Amplifier `ask_user` answer turned into an approval, approvals.ts) and `profiles` (the enabled
 * profiles, their plans and guards, and the blocking answer to a refused request).
 */
import type { Approvals } from "../pipeline/approvals.js";
import type { Principal, ProfileGuard } from "../registry/index.js";
import { fireWithApproval } from "./approvals.js";
import type { ProfileFireInput, ProfileFireResult, ProfileFirer, ProfileListing, ProfilePlanEntry, ProfileRefusedResult } from "./profile.js";

/** The enabled event profiles (`GET /v1/profiles`) and the resolved plan of one event (`GET /v1/hooks?profile=…&event=…`). */
export interface ProfilesApi {
  list(): ProfileListing[];
  plan(profile: string, event: string): ProfilePlanEntry[];
  /**
   * The profile's guard (issue 24): its events an enabled fail-closed hook guards, bound to its
   * installed bundle revisions; computed once per bundle change. UNKNOWN_PROFILE / PROFILE_DISABLED.
   */
  guard(profile: string): ProfileGuard;
  /**
   * A request for (profile, event) the caller refused instead of firing (too large, not JSON, too
   * deep, over a bound, any coded error): when an enabled fail-closed hook guards the event, the
   * profile's blocking answer naming the refusal (exit code 2), audited as one `refused_fail_closed`
   * record; `undefined` otherwise (answer the coded error). The HTTP server calls it for every error
   * of the profile route after authentication.
   */
  refuse(profile: string, event: string, refusal: { code: string; message: string }, options?: { principal?: Principal }): Promise<ProfileRefusedResult | undefined>;
}

/**
 * @example
 * ```ts
 * const { fireProfile, profiles } = createProfilesApi({ firer: profileFirer, approvals });
 * const out = await fireProfile("gemini-cli", "BeforeTool", { input, principal });
 * ```
 */
export function createProfilesApi(deps: { firer: ProfileFirer; approvals: Pick<Approvals, "request" | "wait"> }): {
  /**
   * One event of an agent's hook system (PROFILES §2): the native input in, the merged native answer,
   * its exit code and the chain result out. The input's `session_id` keys an implicit session owned by
   * `principal`. Errors: UNKNOWN_PROFILE, UNKNOWN_EVENT, PROFILE_DISABLED, INVALID_INPUT, SESSION_NOT_FOUND.
   */
  fireProfile(profile: string, event: string, input: ProfileFireInput): Promise<ProfileFireResult>;
  profiles: ProfilesApi;
} {
  const { firer } = deps;
  return {
    fireProfile: (profile, event, input) => fireWithApproval(deps, profile, event, input),
    profiles: { list: firer.list, plan: firer.plan, guard: firer.guard, refuse: firer.refuse },
  };
}
