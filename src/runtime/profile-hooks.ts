/**
 * The hooks of installed event-profile bundles (PROFILES §2 "Registry key: (profile, event)") and the
 * deployment's enabled profiles. `vcp@1` hooks live in the VCP registry (src/registry/) as always;
 * profile hooks never enter it. Plans are built when the store changes (at install), never per
 * event, and keep their identity between changes so the sandbox supervisor sends each hook list
 * once (pool/supervisor.ts plan keys).
 */
import { createHash } from "node:crypto";
import { compilePlan, hookFailsClosed, orderProfileHooks, type ChainPlan, type ProfilePlanRef } from "../chain/plan.js";
import { VcpError } from "../errors.js";
import type { ResolvedHook } from "../model/hook.js";
import { checkProfileSettings, findProfile, getProfile, listProfiles, profileConditionFields, VCP_PROFILE_ID } from "../profiles/index.js";
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
  readonly plan: ChainPlan;
  /**
   * Some hook is an exec hook (PROFILES §6): the chain runs in the main process (the sandbox host must
   * never spawn), its sandboxed hooks as one-action sandbox tasks (a parallel group all at once). False: the whole chain is one
   * sandbox task, as always.
   */
  readonly hasExec: boolean;
}

/**
 * What every answer of a profile's route tells an adapter about its guards (issue 24): which events a
 * failure must not open, bound to the bundle revisions that said so. The adapter keeps it and blocks
 * those events when the server cannot answer.
 */
export interface ProfileGuard {
  /** sha256 hex of the profile's installed bundles as `bundle@digest` lines, sorted, joined by "\n". */
  readonly revisions: string;
  /** The profile's events whose plan holds an enabled fail-closed hook (`fail_closed`, or repo-yaml `blocking`), sorted. */
  readonly fail_closed_events: readonly string[];
}

/** A profile's guard with what a refusal names: the fail-closed hooks of each guarded event. */
export interface ProfileGuardIndex {
  readonly guard: ProfileGuard;
  /** `fail_closed_events` joined by "," (the `X-VCP-Fail-Closed-Events` header of a native answer). */
  readonly eventsHeader: string;
  /** Guarded event → its enabled fail-closed hooks, in install order. */
  readonly hooksByEvent: ReadonlyMap<string, readonly ResolvedHook[]>;
}

const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");

/** The guard of a profile with no bundle installed: nothing is guarded. */
const UNGUARDED: ProfileGuardIndex = Object.freeze({
  guard: Object.freeze({ revisions: sha256Hex(""), fail_closed_events: Object.freeze([]) }),
  eventsHeader: "",
  hooksByEvent: new Map(),
});

const NO_HOOKS: readonly ResolvedHook[] = Object.freeze([]);

/**
 * What the store derives from its bundles once per change (never per event): each (profile, event)'s
 * hooks and each profile's guard.
 */
interface StoreIndex {
  readonly revision: number;
  /** `profile\0event` → its hooks in install order; events without hooks are absent. */
  readonly hooksByKey: ReadonlyMap<string, readonly ResolvedHook[]>;
  readonly guards: ReadonlyMap<string, ProfileGuardIndex>;
}

function buildIndex(bundles: ReadonlyMap<string, { profile: string; digest: string; hooks: readonly ResolvedHook[] }>, revision: number): StoreIndex {
  const hooksByKey = new Map<string, ResolvedHook[]>();
  const perProfile = new Map<string, { lines: string[]; guarded: Map<string, ResolvedHook[]> }>();
  for (const [bundle, entry] of bundles) {
    let own = perProfile.get(entry.profile);
    if (own === undefined) perProfile.set(entry.profile, (own = { lines: [], guarded: new Map() }));
    own.lines.push(`${bundle}@${entry.digest}`);
    for (const hook of entry.hooks) {
      const key = `${entry.profile}\u0000${hook.event}`;
      let list = hooksByKey.get(key);
      if (list === undefined) hooksByKey.set(key, (list = []));
      list.push(hook);
      if (!hook.enabled || !hookFailsClosed(hook)) continue;
      let guards = own.guarded.get(hook.event!);
      if (guards === undefined) own.guarded.set(hook.event!, (guards = []));
      guards.push(hook);
    }
  }
  const guards = new Map<string, ProfileGuardIndex>();
  for (const [profile, { lines, guarded }] of perProfile) {
    const events = Object.freeze([...guarded.keys()].sort());
    guards.set(profile, Object.freeze({
      guard: Object.freeze({ revisions: sha256Hex(lines.sort().join("\n")), fail_closed_events: events }),
      eventsHeader: events.join(","),
      hooksByEvent: new Map([...guarded].map(([event, hooks]) => [event, Object.freeze(hooks)])),
    }));
  }
  return { revision, hooksByKey, guards };
}

/**
 * @example
 * ```ts
 * const store = createProfileHookStore();
 * store.set("no-rm", "gemini-cli", manifestProfileHooks(manifest, digest), digest);
 * store.plan(enabled.get("gemini-cli")!, "BeforeTool").hooks;
 * store.guard("gemini-cli").guard.fail_closed_events; // ["BeforeTool"] when a fail_closed hook guards it
 * ```
 */
export function createProfileHookStore() {
  const bundles = new Map<string, { profile: string; digest: string; hooks: readonly ResolvedHook[] }>();
  let seq = 0;
  let revision = 0;
  let index: StoreIndex = buildIndex(bundles, revision);
  // Plans of the profiles' own events and of events with hooks only: both sets are bounded (the
  // catalogue, the installed hooks), whatever event names clients send (Amplifier's custom `ns:name`).
  const plans = new Map<string, ResolvedProfilePlan & { revision: number }>();

  /** The index of the current revision, rebuilt (and the plan cache emptied) on the first use after a change. */
  function indexed(): StoreIndex {
    if (index.revision !== revision) {
      index = buildIndex(bundles, revision);
      plans.clear();
    }
    return index;
  }

  function resolvePlan(enabled: EnabledProfile, event: string, found: readonly ResolvedHook[]): ResolvedProfilePlan & { revision: number } {
    const id = enabled.profile.id;
    const ordered = found.length === 0 ? NO_HOOKS : Object.freeze(orderProfileHooks(enabled.profile, found));
    const ref: ProfilePlanRef = Object.freeze({ id, event, strict: enabled.strict, settings: enabled.settings });
    const plan = compilePlan(enabled.profile, ref, ordered, revision);
    return { ref, hooks: ordered, plan, revision, hasExec: ordered.some((h) => h.exec !== undefined) };
  }

  return {
    get revision(): number {
      return revision;
    },
    /** How many plans are cached: at most the enabled profiles' events plus the installed hooks' events. */
    get cachedPlans(): number {
      return plans.size;
    },
    /** Compile a bundle's hooks (the registry's per-hook rules) without storing them: throws on the first bad hook. */
    compile(profile: string, definitions: readonly ProfileHookDefinition[]): ResolvedHook[] {
      return definitions.map((def, index) => {
        const { event, matcher, sequential, match, blocking, exec, ...vcp } = def;
        const catalogued = findProfile(profile);
        const compiled = compileHook(vcp, {
          scope: "deployment", seq: ++seq, at: ["hooks", index],
          // The condition reads the event's native input (PROFILES §2), checked against its schema.
          ...(catalogued !== undefined ? { conditionFields: profileConditionFields(catalogued, event) } : {}),
        });
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
    /** Replace the hooks of `bundle`, its installed revision `digest` (atomic: one revision). */
    set(bundle: string, profile: string, hooks: readonly ResolvedHook[], digest: string): void {
      bundles.set(bundle, { profile, digest, hooks });
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
      const key = `${enabled.profile.id}\u0000${event}`;
      const cached = plans.get(key);
      if (cached !== undefined && cached.revision === revision) return cached;
      const found = indexed().hooksByKey.get(key);
      // An event name outside the profile's own events with no hook (an Amplifier custom event nobody
      // hooks): its empty plan is built for this call and not kept, so client-chosen names allocate nothing lasting.
      if (found === undefined && !Object.hasOwn(enabled.profile.events, event)) return resolvePlan(enabled, event, NO_HOOKS);
      const resolved = resolvePlan(enabled, event, found ?? NO_HOOKS);
      plans.set(key, resolved);
      return resolved;
    },
    /**
     * The profile's guard (issue 24), computed once per change: which events an enabled fail-closed
     * hook guards, bound to the profile's installed bundle revisions.
     */
    guard(profileId: string): ProfileGuardIndex {
      return indexed().guards.get(profileId) ?? UNGUARDED;
    },
  };
}

export type ProfileHookStore = ReturnType<typeof createProfileHookStore>;
