import { VcpError } from "../errors.js";
import type { LifecycleEvent } from "../observe/events.js";
import { silentLogger } from "../observe/events.js";
import { hookEventOf, type ResolvedHook } from "../model/hook.js";
import { authorizeScope, authorizeSessionOverride, checkAllowlist, type ScopeKey } from "./authorize.js";
import { createRegistryRateLimit, DEFAULT_REGISTRATIONS_PER_MINUTE } from "./rate-limit.js";
import { createLocalRateLimitStore } from "./rate-limit-local.js";
import { createSnapshot, emptyState, type BundleOffer, type HookTable, type RegistryState } from "./snapshot.js";
import type { BundleRevision, RegisterOptions, Registry, RegistryOptions, RegistrySnapshot } from "./types.js";
import { compileHook } from "./validate.js";
import { compileProfileHooks, withProfileBundle } from "./profile-table.js";
import { SESSION_HOOK_REF } from "../model/names.js";
import { VCP_PROFILE_ID } from "../profiles/index.js";

/** Principal id reported for changes the runtime makes on its own (session close). */
const SYSTEM_PRINCIPAL_ID = "system";

/**
 * Creates a hook registry (spec §6, §10.1). Every change validates first, then commits one new
 * immutable state and snapshot, then emits lifecycle events and notifies listeners; a call that
 * throws changed nothing and emitted nothing.
 *
 * Each call except `dropSession` and `snapshot` consumes one rate unit of its principal first, so
 * rejected calls count too (spec §8.2.5 is about denial of service, and rejections cost work).
 *
 * @example
 * ```ts
 * const registry = createRegistry({ clock: systemClock, emit: sink, sessionHookAllowlist: ["pii/strip"] });
 * const ops = { id: "alice", role: "operator" } as const;
 * registry.registerAll(bundle.hooks, { scope: "deployment", principal: ops });
 * const plan = registry.snapshot().chain("pre_inject", sessionId);
 * ```
 */
export function createRegistry(options: RegistryOptions): Registry {
  const perMinute = options.registrationsPerMinute ?? DEFAULT_REGISTRATIONS_PER_MINUTE;
  if (!Number.isInteger(perMinute) || perMinute < 1) {
    throw new VcpError("INVALID_CONFIG", "registry: registrationsPerMinute must be a positive integer", {
      field: "registrationsPerMinute",
      received: perMinute,
    });
  }
  for (const entry of options.sessionHookAllowlist ?? []) {
    if (typeof entry !== "string" || !SESSION_HOOK_REF.regex.test(entry)) {
      throw new VcpError("INVALID_CONFIG", `registry: session hook allowlist entry "${String(entry)}" must be "bundle/hook"`, {
        field: "sessionHookAllowlist",
        received: entry,
      });
    }
  }
  const allowlist: ReadonlySet<string> = new Set(options.sessionHookAllowlist ?? []);
  // This replica's count of every principal's changes (with `store: redis` the runtime takes the shared one first).
  const rateLimit = createRegistryRateLimit(createLocalRateLimitStore(options.clock), perMinute);
  const logger = options.logger ?? silentLogger;
  const listeners = new Set<(snapshot: RegistrySnapshot) => void>();

  let state: RegistryState = emptyState();
  /**
   * Bundle → the session hooks its last swap deregistered because the new revision did not offer them,
   * until the change is settled (`settleSwap`). A failed install swaps the previous revision back
   * (bundles.ts restoreHooks): those hooks, still bound to that revision, come back with it, so a
   * refused change loses no session's hooks.
   */
  const droppedBySwap = new Map<string, readonly ResolvedHook[]>();
  let current = createSnapshot(state);
  /** Next registration sequence number; advanced only by a commit. */
  let nextSeq = 1;

  /** Rate limit, then scope and authorization: the common prologue of every principal's call. */
  function begin(opts: RegisterOptions): ScopeKey {
    // One count per change: a change admitted by the limit shared by every replica is not counted again here.
    if (opts.rateAdmitted !== "shared") rateLimit.admit(opts.principal);
    return authorizeScope(opts);
  }

  function tableOf(key: ScopeKey): HookTable {
    return key.scope === "deployment" ? state.deployment : (state.sessions.get(key.sessionId) ?? new Map());
  }

  /** The next state with `table` as the hooks of `key`'s scope. */
  function withTable(key: ScopeKey, table: HookTable): RegistryState {
    const revision = state.revision + 1;
    if (key.scope === "deployment") return Object.freeze({ ...state, revision, deployment: table });
    const sessions = new Map(state.sessions);
    if (table.size === 0) sessions.delete(key.sessionId);
    else sessions.set(key.sessionId, table);
    return Object.freeze({ ...state, revision, sessions });
  }

  /** The next state with `names` as the deployment hooks switched off in session `sessionId` only. */
  function withSessionDisabled(sessionId: string, names: ReadonlySet<string>): RegistryState {
    const sessionDisabled = new Map(state.sessionDisabled);
    if (names.size === 0) sessionDisabled.delete(sessionId);
    else sessionDisabled.set(sessionId, names);
    return Object.freeze({ ...state, revision: state.revision + 1, sessionDisabled });
  }

  /**
   * `setEnabled` of a deployment hook in one session (spec §7.3.4 cascade, session-local): the hook
   * stays as it is for every other session. Returns the hook as that session's chain now sees it.
   */
  function setEnabledInSession(name: string, enabled: boolean, opts: RegisterOptions): ResolvedHook {
    const key = authorizeSessionOverride(opts);
    const hook = lookup(name, { scope: "deployment" });
    const current = state.sessionDisabled.get(key.sessionId) ?? new Set<string>();
    if (current.has(name) !== enabled) return enabled ? hook : Object.freeze({ ...hook, enabled: false });
    const names = new Set(current);
    if (enabled) names.delete(name);
    else names.add(name);
    commit(withSessionDisabled(key.sessionId, names), []);
    return enabled ? hook : Object.freeze({ ...hook, enabled: false });
  }

  /**
   * Validates `defs` on top of `base` (a working copy, mutated) without touching the registry.
   * Uniqueness is checked against `base`, which already includes earlier hooks of the same batch.
   */
  function stage(defs: readonly unknown[], key: ScopeKey, base: Map<string, ResolvedHook>): ResolvedHook[] {
    if (!Array.isArray(defs)) {
      const rule = "must be an array of hook definitions";
      throw new VcpError("INVALID_HOOK", `hooks: definitions: ${rule}`, { field: "definitions", rule, received: typeof defs });
    }
    const admit =
      key.scope === "session"
        ? (p: { name: string; action: { bundle: string } }) => checkAllowlist(p.action.bundle, p.name, key.sessionId, allowlist)
        : undefined;
    const added: ResolvedHook[] = [];
    for (const def of defs) {
      let hook = compileHook(def, {
        scope: key.scope,
        sessionId: key.sessionId,
        seq: nextSeq + added.length,
        resolveAction: options.resolveAction,
        predicateOptions: options.predicateOptions,
        admit,
      });
      const existing = base.get(hook.name);
      if (existing !== undefined) throw duplicate(hook, existing, key);
      // A deployment-wide switch holds until switched again: every revision registering the name gets it (switches.ts).
      const switched = key.scope === "deployment" ? options.deploymentSwitch?.(hook.name) : undefined;
      if (switched !== undefined && switched !== hook.enabled) hook = Object.freeze({ ...hook, enabled: switched });
      base.set(hook.name, hook);
      added.push(hook);
    }
    return added;
  }

  function commit(next: RegistryState, events: LifecycleEvent[]): void {
    state = next;
    current = createSnapshot(next);
    // The change is committed; a throwing sink or listener must not make the caller think otherwise.
    for (const event of events) {
      try {
        options.emit(event);
      } catch (err) {
        logger.error({ err, event: event.event }, "registry: event sink threw");
      }
    }
    const snapshot = current;
    for (const listener of [...listeners]) {
      try {
        listener(snapshot);
      } catch (err) {
        logger.error({ err, revision: snapshot.revision }, "registry: change listener threw");
      }
    }
  }

  function registerMany(defs: readonly unknown[], opts: RegisterOptions): ResolvedHook[] {
    const key = begin(opts);
    const table = new Map(tableOf(key));
    const added = stage(defs, key, table);
    if (added.length === 0) return added;
    nextSeq += added.length;
    commit(withTable(key, table), added.map((h) => registered(h, opts.principal.id)));
    return added;
  }

  function lookup(name: string, key: ScopeKey): ResolvedHook {
    const hook = typeof name === "string" ? tableOf(key).get(name) : undefined;
    if (hook === undefined) throw unknown(name, key);
    return hook;
  }

  /**
   * Every session's hooks that refer to `bundle`, bound to its new revision `offer` (undefined: the
   * bundle is removed). A hook the revision still offers is compiled again from the new definition,
   * keeping its session, `seq` (its place in the chain) and enabled switch; one it no longer offers is
   * dropped with a reason naming the revision. Sessions not using the bundle keep their tables.
   */
  function rebindSessions(bundle: string, offer: BundleOffer | undefined): { sessions: Map<string, HookTable>; dropped: Array<{ hook: ResolvedHook; reason: string }> } {
    const sessions = new Map(state.sessions);
    const dropped: Array<{ hook: ResolvedHook; reason: string }> = [];
    for (const [sessionId, table] of state.sessions) {
      let next: Map<string, ResolvedHook> | undefined;
      for (const hook of table.values()) {
        if (hook.action.bundle !== bundle) continue;
        next ??= new Map(table);
        const definition = offer?.hooks.get(hook.name);
        let rebound: ResolvedHook | undefined;
        let reason = offer === undefined
          ? `bundle "${bundle}" was removed`
          : `bundle "${bundle}" revision ${offer.version} (${offer.digest}) offers no session hook "${hook.name}"`;
        if (definition !== undefined) {
          try {
            // SECURITY: compiled as a session hook again: session trust (no abort, no fail_closed),
            // whatever the new revision's definition asks for (DESIGN §3.4).
            const compiled = compileHook(definition, { scope: "session", sessionId, seq: hook.seq, resolveAction: options.resolveAction, predicateOptions: options.predicateOptions });
            rebound = compiled.enabled === hook.enabled ? compiled : Object.freeze({ ...compiled, enabled: hook.enabled });
          } catch (err) {
            reason = `bundle "${bundle}" revision ${offer!.version} (${offer!.digest}): session hook "${hook.name}" is refused: ${err instanceof Error ? err.message : String(err)}`;
          }
        }
        if (rebound !== undefined) next.set(hook.name, rebound);
        else {
          next.delete(hook.name);
          dropped.push({ hook, reason });
        }
      }
      if (next === undefined) continue;
      if (next.size === 0) sessions.delete(sessionId);
      else sessions.set(sessionId, next);
    }
    return { sessions, dropped };
  }

  function swapBundle(bundle: string, revision: BundleRevision | null, opts: RegisterOptions): ResolvedHook[] {
    const key = begin(opts);
    if (key.scope !== "deployment") {
      const rule = "a bundle revision is swapped at deployment scope";
      throw new VcpError("INVALID_HOOK", `hooks: scope: ${rule}`, { field: "scope", rule, received: key.scope });
    }
    const table = new Map(state.deployment);
    const removed = [...table.values()].filter((h) => h.action.bundle === bundle);
    for (const hook of removed) table.delete(hook.name);
    const added = stage(revision?.deployment ?? [], key, table);
    // Profile hooks are compiled before anything is committed: a bad one leaves the registry as it was.
    const profileHooks = revision?.profile === undefined ? [] : compileProfileHooks(revision.profile.id, revision.profile.hooks, nextSeq + added.length);
    const previousProfile = state.profiles.bundles.get(bundle);
    const profiles = previousProfile === undefined && revision?.profile === undefined
      ? state.profiles
      : withProfileBundle(state.profiles, bundle, revision?.profile === undefined ? undefined : { profile: revision.profile.id, digest: revision.digest, hooks: profileHooks });
    const offers = new Map(state.offers);
    const previousOffer = state.offers.get(bundle);
    let offer: BundleOffer | undefined;
    if (revision === null) offers.delete(bundle);
    else offers.set(bundle, (offer = Object.freeze({ version: revision.version, digest: revision.digest, hooks: new Map(revision.session.map((d) => [d.name, d] as const)) })));
    const { sessions, dropped } = rebindSessions(bundle, offer);
    const revived = revive(sessions, droppedBySwap.get(bundle) ?? [], offer);
    nextSeq += added.length + profileHooks.length;
    const principal = opts.principal.id;
    // SECURITY: one commit: no snapshot ever holds a session hook bound to a revision that is not active.
    commit(Object.freeze({ ...state, revision: state.revision + 1, deployment: table, sessions, offers, profiles }), [
      ...removed.map((h) => deregistered(h, principal)),
      ...(previousProfile?.hooks ?? []).map((h) => deregistered(h, principal)),
      ...dropped.map(({ hook, reason }) => deregistered(hook, SYSTEM_PRINCIPAL_ID, reason)),
      ...added.map((h) => registered(h, principal)),
      ...profileHooks.map((h) => registered(h, principal)),
      ...revived.map((h) => registered(h, SYSTEM_PRINCIPAL_ID)),
    ]);
    if (dropped.length > 0) droppedBySwap.set(bundle, dropped.map((d) => d.hook));
    else droppedBySwap.delete(bundle);
    // What the previous revision offered to sessions and this one does not (every session's, known here or not).
    const withdrawn = [...(previousOffer?.hooks.keys() ?? [])].filter((name) => offer?.hooks.has(name) !== true);
    if (options.onSessionHooksRebound !== undefined) {
      const refOf = (h: ResolvedHook) => ({ session: h.session_id!, bundle: h.action.bundle, hook: h.name });
      try {
        options.onSessionHooksRebound({ bundle, withdrawn, dropped: dropped.map((d) => refOf(d.hook)), revived: revived.map(refOf) });
      } catch (err) {
        logger.error({ err, bundle }, "registry: session hook listener threw");
      }
    }
    return [...added, ...profileHooks];
  }

  /**
   * Puts back into `sessions` (mutated) the hooks a bundle's previous swap dropped that are bound to
   * exactly the revision now offered (`offer.digest`: the previous revision restored) and are offered
   * by it, each as it was (same seq, same switch). Returns them.
   */
  function revive(sessions: Map<string, HookTable>, candidates: readonly ResolvedHook[], offer: BundleOffer | undefined): ResolvedHook[] {
    if (offer === undefined) return [];
    const revived: ResolvedHook[] = [];
    for (const hook of candidates) {
      const sessionId = hook.session_id!;
      const table = sessions.get(sessionId);
      if (hook.action.digest !== offer.digest || !offer.hooks.has(hook.name) || table?.has(hook.name) === true) continue;
      sessions.set(sessionId, new Map(table ?? []).set(hook.name, hook));
      revived.push(hook);
    }
    return revived;
  }

  const registry: Registry = {
    register(def, opts) {
      return registerMany([def], opts)[0] as ResolvedHook;
    },

    registerAll(defs, opts) {
      return registerMany(defs, opts);
    },

    deregister(name, opts) {
      const key = begin(opts);
      const hook = lookup(name, key);
      const table = new Map(tableOf(key));
      table.delete(name);
      commit(withTable(key, table), [deregistered(hook, opts.principal.id)]);
      return hook;
    },

    replace(removeNames, add, opts) {
      const key = begin(opts);
      const table = new Map(tableOf(key));
      const removed: ResolvedHook[] = [];
      for (const name of new Set(removeNames)) {
        removed.push(lookup(name, key));
        table.delete(name);
      }
      const added = stage(add, key, table);
      if (removed.length === 0 && added.length === 0) return added;
      nextSeq += added.length;
      const principal = opts.principal.id;
      commit(withTable(key, table), [
        ...removed.map((h) => deregistered(h, principal)),
        ...added.map((h) => registered(h, principal)),
      ]);
      return added;
    },

    swapBundle,

    settleSwap(bundle) {
      droppedBySwap.delete(bundle);
    },

    registerSessionHook(ref, opts) {
      if (opts.scope !== "session") {
        const rule = "a hook registered by reference is session scope";
        throw new VcpError("INVALID_HOOK", `hooks: scope: ${rule}`, { field: "scope", rule, received: String(opts.scope) });
      }
      // UNKNOWN_BUNDLE / UNKNOWN_HOOK before the change counts against the principal's rate.
      const definition = current.sessionOffer(ref.bundle, ref.hook);
      return registerMany([definition], opts)[0] as ResolvedHook;
    },

    setEnabled(name, enabled, opts) {
      if (opts.scope === "deployment" && opts.sessionId !== undefined) {
        // Admitted by the limit shared by every replica: not counted again here (as in `begin`).
        if (opts.rateAdmitted !== "shared") rateLimit.admit(opts.principal);
        assertBoolean(enabled);
        return setEnabledInSession(name, enabled, opts);
      }
      const key = begin(opts);
      assertBoolean(enabled);
      const hook = lookup(name, key);
      if (hook.enabled === enabled) return hook;
      // Same seq: re-enabling puts the hook back where it was in the chain.
      const next: ResolvedHook = Object.freeze({ ...hook, enabled });
      const table = new Map(tableOf(key));
      table.set(name, next);
      commit(withTable(key, table), []);
      return next;
    },

    dropSession(sessionId) {
      // A closed session's hooks never come back with a restored revision.
      for (const [bundle, hooks] of droppedBySwap) {
        const left = hooks.filter((h) => h.session_id !== sessionId);
        if (left.length === 0) droppedBySwap.delete(bundle);
        else if (left.length !== hooks.length) droppedBySwap.set(bundle, left);
      }
      const table = state.sessions.get(sessionId);
      if (table === undefined && !state.sessionDisabled.has(sessionId)) return;
      const key: ScopeKey = { scope: "session", sessionId };
      // One commit: the session's hooks and its session-local disables go together (a session id
      // used again later starts with every deployment hook as the operator left it).
      const sessionDisabled = new Map(state.sessionDisabled);
      sessionDisabled.delete(sessionId);
      const next = table === undefined ? { ...state, revision: state.revision + 1 } : withTable(key, new Map());
      commit(
        Object.freeze({ ...next, sessionDisabled }),
        [...(table?.values() ?? [])].map((h) => deregistered(h, SYSTEM_PRINCIPAL_ID)),
      );
    },

    snapshot() {
      return current;
    },

    onChange(listener) {
      // Wrapped so subscribing the same function twice yields two independent subscriptions.
      const entry = (snapshot: RegistrySnapshot) => listener(snapshot);
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
      };
    },
  };
  return Object.freeze(registry);
}

function assertBoolean(enabled: unknown): void {
  if (typeof enabled !== "boolean") {
    const rule = "must be a boolean";
    throw new VcpError("INVALID_HOOK", `hooks: enabled: ${rule}`, { field: "enabled", rule, received: typeof enabled });
  }
}

/** The (profile, event) key of a hook: a VCP hook is profile `vcp`, its event its type. */
function keyOf(hook: ResolvedHook): { profile: string; event: string; type?: ResolvedHook["type"] } {
  return hook.profile === undefined ? { profile: VCP_PROFILE_ID, event: hookEventOf(hook), type: hook.type! } : { profile: hook.profile, event: hookEventOf(hook) };
}

function registered(hook: ResolvedHook, principal: string): LifecycleEvent {
  const payload: Extract<LifecycleEvent, { event: "hook.registered" }>["payload"] = {
    hook: hook.name,
    ...keyOf(hook),
    scope: hook.scope,
    bundle: hook.action.bundle,
    priority: hook.priority,
    principal,
  };
  if (hook.session_id !== undefined) payload.session_id = hook.session_id;
  return { event: "hook.registered", payload };
}

function deregistered(hook: ResolvedHook, principal: string, reason?: string): LifecycleEvent {
  const payload: Extract<LifecycleEvent, { event: "hook.deregistered" }>["payload"] = {
    hook: hook.name,
    ...keyOf(hook),
    scope: hook.scope,
    bundle: hook.action.bundle,
    principal,
  };
  if (hook.session_id !== undefined) payload.session_id = hook.session_id;
  if (reason !== undefined) payload.reason = reason;
  return { event: "hook.deregistered", payload };
}

function duplicate(hook: ResolvedHook, existing: ResolvedHook, key: ScopeKey): VcpError {
  const where = key.scope === "deployment" ? "deployment scope" : `session "${key.sessionId}"`;
  const details: Record<string, unknown> = {
    hook: hook.name,
    scope: key.scope,
    existing_bundle: existing.action.bundle,
    new_bundle: hook.action.bundle,
  };
  if (key.scope === "session") details["session_id"] = key.sessionId;
  return new VcpError(
    "DUPLICATE_HOOK",
    `hooks: "${hook.name}" is already registered in ${where} by bundle "${existing.action.bundle}"; ` +
      `bundle "${hook.action.bundle}" cannot register it again (spec §6.2.1)`,
    details,
  );
}

function unknown(name: string, key: ScopeKey): VcpError {
  const where = key.scope === "deployment" ? "deployment scope" : `session "${key.sessionId}"`;
  const details: Record<string, unknown> = { hook: String(name), scope: key.scope };
  if (key.scope === "session") details["session_id"] = key.sessionId;
  return new VcpError("UNKNOWN_HOOK", `hooks: no hook "${String(name)}" is registered in ${where}`, details);
}
