/**
 * What `GET /v1/hooks` and `runtime.hooks.list` show: every hook of one registry snapshot in the
 * order its chain runs it, keyed by (profile, event) — a VCP hook is profile `vcp`, its event its
 * type — filtered by any combination of profile, event, bundle and VCP type.
 *
 * ```
 *   vcp: pre_inject chain, post_select chain, … (HOOK_TYPES order; a session's chain with `session`)
 *   then each enabled profile: its own events in catalogue order, then other events with hooks
 *        (Amplifier's custom `ns:name`), each event's plan in PROFILES §8.5 order with its dedup
 * ```
 */
import { VcpError } from "../errors.js";
import { HOOK_TYPES, isHookType, type HookType } from "../model/hook-type.js";
import type { ActionRef, ResolvedHook } from "../model/hook.js";
import type { EnabledProfile } from "../profiles/enabled.js";
import { getProfile, isProfileEvent, VCP_PROFILE_ID } from "../profiles/index.js";
import type { ResolvedProfilePlan } from "./profile-table.js";
import type { RegistrySnapshot } from "./types.js";

/** One hook of a resolved profile plan as `GET /v1/hooks?profile=…&event=…` shows it. */
export interface ProfilePlanEntry {
  name: string;
  bundle: string;
  event: string;
  priority: number;
  timeout_ms: number;
  trust: string;
  scope: string;
  enabled: boolean;
  fail_closed: boolean;
  matcher: string | null;
  sequential: boolean;
  /** repo-yaml `match` filters as written (PROFILES §8.8), null when none. */
  match: unknown;
  /** repo-yaml `blocking` (PROFILES §8.8). */
  blocking: boolean;
  /** Set when an earlier hook with the same (bundle digest, action, matcher) runs in its place. */
  deduplicated_by: string | null;
  /** Exec hooks (PROFILES §6): the pinned command this hook runs outside the sandbox; null for a sandboxed hook. */
  exec: { command: string; sha256: string; shell: boolean } | null;
}

/**
 * One hook as `GET /v1/hooks` lists it. A VCP hook: every field of its registry entry (as before),
 * plus `profile: "vcp"`, `event` (its type) and `bundle`. An event-profile hook: its plan entry plus
 * `profile`, `action`, `condition` and `metadata`; it has no `type`.
 */
export type HookListing =
  | (ResolvedHook & { profile: string; event: string; bundle: string })
  | (ProfilePlanEntry & { profile: string; action: ActionRef; condition: ResolvedHook["condition"]; metadata: ResolvedHook["metadata"] });

/** The filters of a listing; each alone is valid, any combination narrows. */
export interface HookListFilter {
  /** An enabled profile (`name` or `name@version`; `vcp` for the VCP hooks). */
  profile?: string;
  /** An event of that profile (or, without `profile`, of any enabled one); a VCP type is `vcp`'s event. */
  event?: string;
  /** Only the hooks of this bundle. */
  bundle?: string;
  /** VCP only: hooks of this type (event-profile hooks have no type). */
  type?: HookType;
}

/**
 * The plan's hooks as entries, in plan order.
 *
 * @example
 * ```ts
 * profilePlanEntries(snapshot.profilePlan(enabled, "BeforeTool")).map((e) => e.deduplicated_by);
 * ```
 */
export function profilePlanEntries(resolved: ResolvedProfilePlan): ProfilePlanEntry[] {
  const event = resolved.ref.event;
  return resolved.plan.hooks.map(({ hook, duplicateOf }) => ({
    name: hook.name,
    bundle: hook.action.bundle,
    event,
    priority: hook.priority,
    timeout_ms: hook.timeout_ms,
    trust: hook.trust,
    scope: hook.scope,
    enabled: hook.enabled,
    fail_closed: hook.fail_closed,
    matcher: hook.matcher ?? null,
    sequential: hook.sequential === true,
    match: hook.match ?? null,
    blocking: hook.blocking === true,
    deduplicated_by: duplicateOf ?? null,
    exec: hook.exec !== undefined ? { command: hook.exec.command, sha256: hook.exec.sha256, shell: hook.exec.shell === true } : null,
  }));
}

/**
 * Every hook of `snapshot` that passes `filter`, in chain order (module comment). `sessionKey`: the
 * VCP chains are that session's (its session hooks included). A profile that is not enabled, or an
 * event no selected profile has, is INVALID_REQUEST naming the query field and what is known.
 *
 * @example
 * ```ts
 * listHooks(registry.snapshot(), enabledProfiles, { profile: "gemini-cli" }).map((h) => `${h.event}/${h.name}`);
 * ```
 */
export function listHooks(snapshot: RegistrySnapshot, enabled: ReadonlyMap<string, EnabledProfile>, filter: HookListFilter = {}, sessionKey?: string): HookListing[] {
  const profiles = selectProfiles(enabled, filter);
  const out: HookListing[] = [];
  for (const entry of profiles) {
    if (entry.profile.id === VCP_PROFILE_ID) {
      for (const type of vcpTypes(filter)) {
        for (const { hook } of snapshot.chain(type, sessionKey).hooks) out.push({ ...hook, profile: VCP_PROFILE_ID, event: type, bundle: hook.action.bundle });
      }
      continue;
    }
    if (filter.type !== undefined) continue;
    for (const event of filter.event !== undefined ? [filter.event] : eventsOf(snapshot, entry)) {
      const resolved = snapshot.profilePlan(entry, event);
      profilePlanEntries(resolved).forEach((listed, i) => {
        const hook = resolved.plan.hooks[i]!.hook;
        out.push({ ...listed, profile: entry.profile.id, action: hook.action, condition: hook.condition, metadata: hook.metadata });
      });
    }
  }
  return filter.bundle === undefined ? out : out.filter((h) => h.bundle === filter.bundle);
}

/** The enabled profiles the filter selects; a bad `profile` or `event` is a 400 naming it. */
function selectProfiles(enabled: ReadonlyMap<string, EnabledProfile>, filter: HookListFilter): EnabledProfile[] {
  let selected = [...enabled.values()];
  if (filter.profile !== undefined) {
    const found = enabledProfileOf(enabled, filter.profile);
    if (found === undefined) {
      const known = [...enabled.keys()];
      throw new VcpError("INVALID_REQUEST", `querystring.profile: '${filter.profile}' is not an enabled profile of this deployment; enabled: ${known.join(", ")}`, {
        field: "querystring.profile", received: filter.profile, known,
      });
    }
    selected = [found];
  }
  if (filter.event !== undefined) {
    const event = filter.event;
    selected = selected.filter((entry) => isProfileEvent(entry.profile, event));
    if (selected.length === 0) {
      const where = filter.profile !== undefined ? `profile '${filter.profile}'` : "no enabled profile";
      const known = filter.profile !== undefined ? Object.keys(enabledProfileOf(enabled, filter.profile)!.profile.events) : undefined;
      throw new VcpError("INVALID_REQUEST", `querystring.event: ${where} has no event '${event}'${known !== undefined ? `; its events: ${known.join(", ")}` : ""}`, {
        field: "querystring.event", received: event, ...(known !== undefined ? { known } : {}),
      });
    }
  }
  return selected;
}

function enabledProfileOf(enabled: ReadonlyMap<string, EnabledProfile>, ref: string): EnabledProfile | undefined {
  try {
    return enabled.get(getProfile(ref).id);
  } catch {
    return undefined;
  }
}

function vcpTypes(filter: HookListFilter): readonly HookType[] {
  const event = filter.event;
  if (filter.type !== undefined) return event === undefined || event === filter.type ? [filter.type] : [];
  return event !== undefined && isHookType(event) ? [event] : HOOK_TYPES;
}

/** A profile's events with hooks: its own in catalogue order, then the others (custom names) in install order. */
function eventsOf(snapshot: RegistrySnapshot, entry: EnabledProfile): string[] {
  const withHooks = snapshot.profileEvents(entry.profile.id);
  const own = Object.keys(entry.profile.events).filter((e) => withHooks.includes(e));
  return [...own, ...withHooks.filter((e) => !Object.hasOwn(entry.profile.events, e))];
}
