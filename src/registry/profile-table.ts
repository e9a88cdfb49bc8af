/**
 * The event-profile part of the registry (PROFILES §2 "Registry key: (profile, event)"): the hooks of
 * installed event-profile bundles, and what is derived from them once per change, never per event —
 * each (profile, event)'s ordered plan and each profile's guard (issue 24).
 *
 * A table is immutable like the rest of a registry state; the registry builds a new one when a
 * profile bundle changes and shares it, untouched, across every other change (a session hook, a
 * VCP install). Its plans are memoized inside it, so a plan keeps its identity until the profile's
 * hooks change: the sandbox supervisor then sends each hook list once (pool/supervisor.ts plan keys).
 */
import { createHash } from "node:crypto";
import { compilePlan, hookFailsClosed, orderProfileHooks, type ChainPlan, type ProfilePlanRef } from "../chain/plan.js";
import { findProfile, profileConditionFields } from "../profiles/index.js";
import type { ResolvedHook } from "../model/hook.js";
import type { EnabledProfile } from "../profiles/enabled.js";
import type { ProfileHookDefinition } from "../model/hook.js";
import { compileHook } from "./validate.js";

/** One resolved plan: the ordered hook list (stable identity until the profile's hooks change) and the compiled plan. */
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

/** The hooks one installed event-profile bundle contributes. */
export interface ProfileBundleEntry {
  readonly profile: string;
  readonly digest: string;
  readonly hooks: readonly ResolvedHook[];
}

/** The profile hooks of one registry state. */
export interface ProfileTable {
  /** Changes with every change of the profile hooks (and only then). */
  readonly revision: number;
  readonly bundles: ReadonlyMap<string, ProfileBundleEntry>;
  /** Every profile hook, bundle by bundle in install order. */
  hooks(): readonly ResolvedHook[];
  /** The events of `profile` that have hooks, in install order. */
  eventsWithHooks(profile: string): readonly string[];
  /** The plan of one (profile, event): hooks in PROFILES §8.5 order, matchers compiled, dedup fixed. */
  plan(enabled: EnabledProfile, event: string): ResolvedProfilePlan;
  /** The profile's guard, computed once per table: which events an enabled fail-closed hook guards. */
  guard(profileId: string): ProfileGuardIndex;
  /** How many plans are cached: at most the enabled profiles' events plus the installed hooks' events. */
  readonly cachedPlans: number;
}

const sha256Hex = (text: string) => createHash("sha256").update(text).digest("hex");

/** The guard of a profile with no bundle installed: nothing is guarded. */
const UNGUARDED: ProfileGuardIndex = Object.freeze({
  guard: Object.freeze({ revisions: sha256Hex(""), fail_closed_events: Object.freeze([]) }),
  eventsHeader: "",
  hooksByEvent: new Map(),
});

const NO_HOOKS: readonly ResolvedHook[] = Object.freeze([]);

/** What a table derives from its bundles on first use: each (profile, event)'s hooks and each profile's guard. */
interface TableIndex {
  /** `profile\0event` → its hooks in install order; events without hooks are absent. */
  readonly hooksByKey: ReadonlyMap<string, readonly ResolvedHook[]>;
  readonly eventsByProfile: ReadonlyMap<string, readonly string[]>;
  readonly guards: ReadonlyMap<string, ProfileGuardIndex>;
}

function buildIndex(bundles: ReadonlyMap<string, ProfileBundleEntry>): TableIndex {
  const hooksByKey = new Map<string, ResolvedHook[]>();
  const eventsByProfile = new Map<string, string[]>();
  const perProfile = new Map<string, { lines: string[]; guarded: Map<string, ResolvedHook[]> }>();
  for (const [bundle, entry] of bundles) {
    let own = perProfile.get(entry.profile);
    if (own === undefined) perProfile.set(entry.profile, (own = { lines: [], guarded: new Map() }));
    own.lines.push(`${bundle}@${entry.digest}`);
    for (const hook of entry.hooks) {
      const key = `${entry.profile}\u0000${hook.event}`;
      let list = hooksByKey.get(key);
      if (list === undefined) {
        hooksByKey.set(key, (list = []));
        let events = eventsByProfile.get(entry.profile);
        if (events === undefined) eventsByProfile.set(entry.profile, (events = []));
        events.push(hook.event!);
      }
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
  return { hooksByKey, eventsByProfile, guards };
}

/**
 * A table of `bundles` at profile revision `revision`; its index and plans are built on first use.
 *
 * @example
 * ```ts
 * const table = createProfileTable(new Map([["no-rm", { profile: "gemini-cli", digest, hooks }]]), 1);
 * table.plan(enabled.get("gemini-cli")!, "BeforeTool").hooks;
 * table.guard("gemini-cli").guard.fail_closed_events; // ["BeforeTool"] when a fail_closed hook guards it
 * ```
 */
export function createProfileTable(bundles: ReadonlyMap<string, ProfileBundleEntry>, revision: number): ProfileTable {
  let index: TableIndex | undefined;
  let all: readonly ResolvedHook[] | undefined;
  // Plans of the profiles' own events and of events with hooks only: both sets are bounded (the
  // catalogue, the installed hooks), whatever event names clients send (Amplifier's custom `ns:name`).
  const plans = new Map<string, ResolvedProfilePlan>();
  const indexed = (): TableIndex => (index ??= buildIndex(bundles));

  function resolvePlan(enabled: EnabledProfile, event: string, found: readonly ResolvedHook[]): ResolvedProfilePlan {
    const ordered = found.length === 0 ? NO_HOOKS : Object.freeze(orderProfileHooks(enabled.profile, found));
    const ref: ProfilePlanRef = Object.freeze({ id: enabled.profile.id, event, strict: enabled.strict, settings: enabled.settings });
    const plan = compilePlan(enabled.profile, ref, ordered, revision);
    return Object.freeze({ ref, hooks: ordered, plan, hasExec: ordered.some((h) => h.exec !== undefined) });
  }

  return Object.freeze({
    revision,
    bundles,
    hooks() {
      return (all ??= Object.freeze([...bundles.values()].flatMap((entry) => entry.hooks)));
    },
    eventsWithHooks(profile: string) {
      return indexed().eventsByProfile.get(profile) ?? [];
    },
    plan(enabled: EnabledProfile, event: string) {
      const key = `${enabled.profile.id}\u0000${event}`;
      const cached = plans.get(key);
      if (cached !== undefined) return cached;
      const found = indexed().hooksByKey.get(key);
      // An event name outside the profile's own events with no hook (an Amplifier custom event nobody
      // hooks): its empty plan is built for this call and not kept, so client-chosen names allocate nothing lasting.
      if (found === undefined && !Object.hasOwn(enabled.profile.events, event)) return resolvePlan(enabled, event, NO_HOOKS);
      const resolved = resolvePlan(enabled, event, found ?? NO_HOOKS);
      plans.set(key, resolved);
      return resolved;
    },
    guard(profileId: string) {
      return indexed().guards.get(profileId) ?? UNGUARDED;
    },
    get cachedPlans() {
      return plans.size;
    },
  });
}

/**
 * The table with `bundle`'s hooks replaced by `entry` (or gone when `entry` is undefined): one new
 * profile revision. `table` itself is left as it is (older snapshots keep it).
 */
export function withProfileBundle(table: ProfileTable, bundle: string, entry: ProfileBundleEntry | undefined): ProfileTable {
  const bundles = new Map(table.bundles);
  if (entry === undefined) bundles.delete(bundle);
  else bundles.set(bundle, entry);
  return createProfileTable(bundles, table.revision + 1);
}

/**
 * Compile an event-profile bundle's hook definitions with the registry's per-hook rules (the same
 * `compileHook` as VCP hooks, errors naming `hooks[i].<field>`), each deployment scope, `seq`
 * numbered from `firstSeq`. Throws on the first bad hook; nothing is stored.
 *
 * @example
 * ```ts
 * compileProfileHooks("gemini-cli", manifestProfileHooks(manifest, digest), 1)[0].event; // "BeforeTool"
 * ```
 */
export function compileProfileHooks(profile: string, definitions: readonly ProfileHookDefinition[], firstSeq: number): ResolvedHook[] {
  return definitions.map((def, index) => {
    const { event, matcher, sequential, match, blocking, exec, ...fields } = def;
    const catalogued = findProfile(profile);
    const compiled = compileHook(fields, {
      scope: "deployment", seq: firstSeq + index, at: ["hooks", index], profileHook: true,
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
}
