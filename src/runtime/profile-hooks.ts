/**
 * The hooks of installed event-profile bundles (PROFILES §2 "Registry key: (profile, event)") and the
 * deployment's enabled profiles. `vcp@1` hooks live in the VCP registry (src/registry/) as always;
 * profile hooks never enter it. Plans are built when the store changes (at install), never per
 * event, and keep their identity between changes so the sandbox supervisor sends each hook list
 * once (pool/supervisor.ts plan keys).
 */
import { compileProfilePlan, orderProfileHooks, type ProfileChainPlan, type ProfilePlanRef } from "../chain/plan.js";
import { VcpError } from "../errors.js";
import type { ResolvedHook } from "../model/hook.js";
import { checkProfileSettings, getProfile, listProfiles, VCP_PROFILE_ID } from "../profiles/index.js";
import type { EventProfile } from "../profiles/types.js";
import type { ProfileHookDefinition } from "../bundle/hooks.js";
import { compileHook } from "../registry/validate.js";

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

/** One resolved plan: the ordered hook list (stable identity until the store changes) and the compiled plan. */
export interface ResolvedProfilePlan {
  readonly ref: ProfilePlanRef;
  readonly hooks: readonly ResolvedHook[];
  readonly plan: ProfileChainPlan;
  /**
   * Some hook is an exec hook (PROFILES §6): the chain runs in the main process (the sandbox host must
   * never spawn), its sandboxed hooks as one-action sandbox tasks (a parallel group all at once). False: the whole chain is one
   * sandbox task, as always.
   */
  readonly hasExec: boolean;
}

/**
 * @example
 * ```ts
 * const store = createProfileHookStore();
 * store.set("no-rm", "gemini-cli", manifestProfileHooks(manifest, digest));
 * store.plan(enabled.get("gemini-cli")!, "BeforeTool").hooks;
 * ```
 */
export function createProfileHookStore() {
  const bundles = new Map<string, { profile: string; hooks: readonly ResolvedHook[] }>();
  let seq = 0;
  let revision = 0;
  const plans = new Map<string, ResolvedProfilePlan & { revision: number }>();

  return {
    get revision(): number {
      return revision;
    },
    /** Compile a bundle's hooks (the registry's per-hook rules) without storing them: throws on the first bad hook. */
    compile(profile: string, definitions: readonly ProfileHookDefinition[]): ResolvedHook[] {
      return definitions.map((def, index) => {
        const { event, matcher, sequential, match, blocking, exec, ...vcp } = def;
        const compiled = compileHook(vcp, { scope: "deployment", seq: ++seq, at: ["hooks", index] });
        return Object.freeze({
          ...compiled,
          profile,
          event,
          ...(matcher !== undefined ? { matcher } : {}),
          ...(sequential !== undefined ? { sequential } : {}),
          ...(match !== undefined ? { match } : {}),
          ...(blocking !== undefined ? { blocking } : {}),
          ...(exec !== undefined ? { exec: Object.freeze({ ...exec, ...(exec.args !== undefined ? { args: Object.freeze([...exec.args]) } : {}) }) } : {}),
        });
      });
    },
    /** Replace the hooks of `bundle` (atomic: one revision). */
    set(bundle: string, profile: string, hooks: readonly ResolvedHook[]): void {
      bundles.set(bundle, { profile, hooks });
      revision++;
    },
    delete(bundle: string): boolean {
      const had = bundles.delete(bundle);
      if (had) revision++;
      return had;
    },
    has(bundle: string): boolean {
      return bundles.has(bundle);
    },
    /** Every stored hook, bundle by bundle in install order (status lists them). */
    hooks(): ResolvedHook[] {
      return [...bundles.values()].flatMap((entry) => entry.hooks);
    },
    /** The plan of one (profile, event): hooks in PROFILES §8.5 order, matchers compiled, dedup fixed. */
    plan(enabled: EnabledProfile, event: string): ResolvedProfilePlan {
      const id = enabled.profile.id;
      const key = `${id}\u0000${event}`;
      const cached = plans.get(key);
      if (cached !== undefined && cached.revision === revision) return cached;
      const hooks: ResolvedHook[] = [];
      for (const entry of bundles.values()) {
        if (entry.profile !== id) continue;
        for (const hook of entry.hooks) if (hook.event === event) hooks.push(hook);
      }
      const ordered = Object.freeze(orderProfileHooks(enabled.profile, hooks));
      const ref: ProfilePlanRef = Object.freeze({ id, event, strict: enabled.strict, settings: enabled.settings });
      const plan = compileProfilePlan(enabled.profile, ref, ordered, revision);
      const resolved = { ref, hooks: ordered, plan, revision, hasExec: ordered.some((h) => h.exec !== undefined) };
      plans.set(key, resolved);
      return resolved;
    },
  };
}

export type ProfileHookStore = ReturnType<typeof createProfileHookStore>;
