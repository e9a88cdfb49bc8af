/**
 * The event profiles a deployment enables (vcp.yaml `profiles:`, RuntimeOptions.profiles) with their
 * resolved settings: which profiles take events and hooks, strict or not, and each one's idle TTL.
 */
import { VcpError } from "../errors.js";
import { checkProfileSettings, getProfile, listProfiles, VCP_PROFILE_ID } from "./index.js";
import type { EventProfile } from "./types.js";

/** Deployment settings of one profile (vcp.yaml `profiles.<ref>`, RuntimeOptions.profiles). */
export interface ProfileDeployment {
  strict?: boolean;
  session_ttl_s?: number;
  [setting: string]: unknown;
}

/** An enabled profile with its resolved settings. */
export interface EnabledProfile {
  readonly profile: EventProfile;
  readonly strict: boolean;
  readonly sessionTtlMs: number;
  /** Profile-specific settings (everything but `strict` and `session_ttl_s`). */
  readonly settings: Readonly<Record<string, unknown>>;
}

export const DEFAULT_SESSION_TTL_S = 86_400;

/**
 * The enabled profiles of a deployment. Absent ⇒ every catalogued profile, non-strict (the embedded
 * default). `vcp@1` is always enabled: it is the runtime's own hook system.
 *
 * @example
 * ```ts
 * resolveEnabledProfiles({ "gemini-cli@0.x": { strict: true } }).get("gemini-cli")?.strict; // true
 * ```
 */
export function resolveEnabledProfiles(config: Readonly<Record<string, ProfileDeployment>> | undefined): ReadonlyMap<string, EnabledProfile> {
  const enabled = new Map<string, EnabledProfile>();
  const entries: Array<[string, ProfileDeployment]> = config === undefined ? listProfiles().map((p) => [p.id, {}]) : Object.entries(config);
  for (const [ref, deployment] of entries) {
    let profile: EventProfile;
    try {
      profile = getProfile(ref);
    } catch (err) {
      throw new VcpError("INVALID_CONFIG", `profiles.${ref}: ${err instanceof Error ? err.message : String(err)}`, { field: `profiles.${ref}` });
    }
    if (enabled.has(profile.id)) throw new VcpError("INVALID_CONFIG", `profiles.${ref}: profile ${profile.id} is listed twice (one pinned version per name)`, { field: `profiles.${ref}` });
    const { strict, session_ttl_s: ttl, ...settings } = deployment;
    if (strict !== undefined && typeof strict !== "boolean") throw new VcpError("INVALID_CONFIG", `profiles.${ref}.strict: must be a boolean`, { field: `profiles.${ref}.strict` });
    if (ttl !== undefined && (typeof ttl !== "number" || !Number.isSafeInteger(ttl) || ttl < 1)) {
      throw new VcpError("INVALID_CONFIG", `profiles.${ref}.session_ttl_s: must be a positive integer (seconds)`, { field: `profiles.${ref}.session_ttl_s` });
    }
    // The profile's own settings, checked by its schema (a bad one names profiles.<ref>.<field>).
    const { session_ttl_s: _ttl, ...own } = checkProfileSettings(profile, ref, ttl !== undefined ? { ...settings, session_ttl_s: ttl } : settings);
    enabled.set(profile.id, Object.freeze({ profile, strict: strict === true, sessionTtlMs: (ttl ?? DEFAULT_SESSION_TTL_S) * 1000, settings: Object.freeze(own) }));
  }
  if (!enabled.has(VCP_PROFILE_ID)) {
    const vcp = getProfile(VCP_PROFILE_ID);
    enabled.set(vcp.id, Object.freeze({ profile: vcp, strict: false, sessionTtlMs: DEFAULT_SESSION_TTL_S * 1000, settings: Object.freeze({}) }));
  }
  return enabled;
}
