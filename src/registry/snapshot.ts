import { compileChainPlan } from "../chain/plan.js";
import type { ChainPlan } from "../model/chain.js";
import { VcpError } from "../errors.js";
import { isHookType, type HookType, type Scope } from "../model/hook-type.js";
import type { HookDefinition, ResolvedHook } from "../model/hook.js";
import { compareHooks } from "./ordering.js";
import { createProfileTable, type ProfileTable } from "./profile-table.js";
import type { RegistrySnapshot } from "./types.js";

/** Hooks of one scope by name, in registration order. Never mutated once part of a state. */
export type HookTable = ReadonlyMap<string, ResolvedHook>;

/** What the active revision of one installed bundle offers to sessions: its session-scope hooks by name. */
export interface BundleOffer {
  readonly version: string;
  readonly digest: string;
  readonly hooks: ReadonlyMap<string, HookDefinition>;
}

/**
 * The registry's whole state at one revision. Copy-on-write: a change builds new tables for the
 * scopes it touches and shares the rest, so an older state (and every snapshot of it) stays valid.
 *
 * ```
 *   RegistryState r7 ──▶ deployment: HookTable ◀── shared ── RegistryState r8
 *                   └─▶ sessions: { s1 → HookTable }         └─▶ sessions: { s1 → HookTable',
 *                                                                           s2 → HookTable }
 * ```
 */
export interface RegistryState {
  readonly revision: number;
  readonly deployment: HookTable;
  /**
   * Only sessions with at least one hook have an entry. A session hook refers to (its bundle, its
   * name); it is always bound to the bundle's active revision (registry.ts `swapBundle`).
   */
  readonly sessions: ReadonlyMap<string, HookTable>;
  /** Installed bundles (by name) → what their active revision offers to sessions. */
  readonly offers: ReadonlyMap<string, BundleOffer>;
  /** The event-profile hooks, keyed by (profile, event): shared, untouched, by states that did not change them. */
  readonly profiles: ProfileTable;
  /**
   * Deployment-scope hooks switched off in one session only (a cascade in that session, spec §7.3.4):
   * session id → hook names. Only sessions with at least one such hook have an entry.
   */
  readonly sessionDisabled: ReadonlyMap<string, ReadonlySet<string>>;
}

/** A new registry's state. Its own profile table: the plans a table memoizes are never shared between registries. */
export function emptyState(): RegistryState {
  return Object.freeze({ revision: 0, deployment: new Map(), sessions: new Map(), sessionDisabled: new Map(), offers: new Map(), profiles: createProfileTable(new Map(), 0) });
}

/**
 * The immutable view of one state (spec §6.3). Plans are compiled on first use and memoized here,
 * so a plan is built once per (revision, type, session), never per event; a chain that holds a plan
 * or a snapshot keeps its hooks after a deregistration.
 *
 * @example
 * ```ts
 * const snap = createSnapshot(state);
 * snap.chain("pre_inject", "s1") === snap.chain("pre_inject", "s1"); // true
 * ```
 */
export function createSnapshot(state: RegistryState): RegistrySnapshot {
  const { revision, deployment, sessions, sessionDisabled, offers, profiles } = state;
  const deploymentPlans = new Map<HookType, ChainPlan>();
  const sessionPlans = new Map<string, ChainPlan>();
  // Precomputed at construction: isEmpty sits on the path of every pipeline event.
  const deploymentEnabled = new Set<HookType>();
  for (const hook of deployment.values()) if (hook.enabled && hook.type !== undefined) deploymentEnabled.add(hook.type);
  let all: readonly ResolvedHook[] | undefined;

  function deploymentPlan(type: HookType): ChainPlan {
    let plan = deploymentPlans.get(type);
    if (plan === undefined) {
      plan = compileChainPlan(type, ofType(deployment.values(), type).sort(compareHooks), revision);
      deploymentPlans.set(type, plan);
    }
    return plan;
  }

  const snapshot: RegistrySnapshot = {
    revision,
    chain(type, sessionId) {
      if (!isHookType(type)) throw unknownType(type);
      if (sessionId === undefined) return deploymentPlan(type);
      const own = ofType(sessions.get(sessionId)?.values() ?? [], type);
      const off = sessionDisabled.get(sessionId);
      const shared = ofType(deployment.values(), type);
      // SECURITY: a deployment hook disabled in this session only is off here and nowhere else: the
      // shared deployment plan (every other session's) is never touched.
      const offHere = off === undefined ? [] : shared.filter((h) => h.enabled && off.has(h.name));
      if (own.length === 0 && offHere.length === 0) return deploymentPlan(type);
      const key = `${type}\u0000${sessionId}`;
      let plan = sessionPlans.get(key);
      if (plan === undefined) {
        // Same seq: a hook off in this session keeps its place in the chain (outcome skipped_disabled).
        const deploymentHere = offHere.length === 0 ? shared : shared.map((h) => (off!.has(h.name) ? Object.freeze({ ...h, enabled: false }) : h));
        const hooks = deploymentHere.concat(own).sort(compareHooks);
        plan = compileChainPlan(type, hooks, revision);
        sessionPlans.set(key, plan);
      }
      return plan;
    },
    hooks() {
      if (all === undefined) {
        const list = [...deployment.values()];
        for (const table of sessions.values()) list.push(...table.values());
        list.push(...profiles.hooks());
        all = Object.freeze(list);
      }
      return all;
    },
    profilePlan: (enabled, event) => profiles.plan(enabled, event),
    profileEvents: (profileId) => profiles.eventsWithHooks(profileId),
    guard: (profileId) => profiles.guard(profileId),
    get cachedProfilePlans() {
      return profiles.cachedPlans;
    },
    sessionOffer(bundle, hook) {
      const offer = offers.get(bundle);
      if (offer === undefined) throw new VcpError("UNKNOWN_BUNDLE", `bundle '${bundle}' is not installed`, { bundle });
      const definition = offer.hooks.get(hook);
      if (definition === undefined) {
        throw new VcpError("UNKNOWN_HOOK", `bundle '${bundle}' offers no session-scope hook '${hook}' (revision ${offer.version}, ${offer.digest})`, { bundle, hook, version: offer.version, digest: offer.digest });
      }
      return definition;
    },
    find(name: string, scope: Scope, sessionId?: string) {
      if (scope === "deployment") return deployment.get(name);
      return sessionId === undefined ? undefined : sessions.get(sessionId)?.get(name);
    },
    isEmpty(type, sessionId) {
      // A session with deployment hooks off only there may still have others of the type: ask the plan.
      if (sessionId !== undefined && sessionDisabled.has(sessionId)) return snapshot.chain(type, sessionId).hooks.every((p) => !p.hook.enabled);
      if (deploymentEnabled.has(type)) return false;
      if (!isHookType(type)) throw unknownType(type);
      const table = sessionId === undefined ? undefined : sessions.get(sessionId);
      if (table === undefined) return true;
      for (const hook of table.values()) if (hook.enabled && hook.type === type) return false;
      return true;
    },
  };
  return Object.freeze(snapshot);
}

function ofType(hooks: Iterable<ResolvedHook>, type: HookType): ResolvedHook[] {
  const out: ResolvedHook[] = [];
  for (const hook of hooks) if (hook.type === type) out.push(hook);
  return out;
}

function unknownType(type: unknown): VcpError {
  return new VcpError("UNKNOWN_HOOK_TYPE", `hooks: "${String(type)}" is not one of the six hook types (spec §3)`, {
    type: String(type),
  });
}
