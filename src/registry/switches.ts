/**
 * Hook switches (spec §7.3.4): which hooks are on or off, deployment-wide and per session — the rule
 * once, over one port, so every replica of a deployment sees the same switches.
 *
 *   a switch          one hook on or off: deployment-wide (operators), or in one session (its session
 *                     hook of that name, or a deployment hook there only: how a cascade disables it)
 *   how it changes    validated and applied in this replica's registry (`Registry.setEnabled`: authority,
 *                     UNKNOWN_HOOK), then recorded in the store; a store that cannot take it undoes the
 *                     change here and the caller gets the store's error: nothing half-done
 *   how long it holds until switched again: a deployment-wide switch applies to every later revision
 *                     that registers a hook of that name (registry `deploymentSwitch`); a session's
 *                     switches go with the session
 *   where it is kept  a HookSwitchStore: this process (switches-local.ts) or Redis (store/switches.ts),
 *                     where a session's switches live with the session and are read with it before each
 *                     of its operations, and a deployment-wide switch is announced to every replica
 *                     (pub/sub), which also re-reads them all after each reconnect
 */
import type { Logger } from "../observe/events.js";
import type { ResolvedHook } from "../model/hook.js";
import type { Scope } from "../model/hook-type.js";
import type { Principal, RegisterOptions, Registry, RegistrySnapshot } from "./types.js";

/** One hook's switch in one session: its session hook of that name (`scope: session`) or the deployment hook there only. */
export interface HookSwitch {
  readonly hook: string;
  readonly scope: Scope;
  readonly enabled: boolean;
}

/** Where switches are kept (the port). Every method is one atomic step. */
export interface HookSwitchStore {
  /** Record a deployment-wide switch; every replica's `onChange` hears of it. */
  put(hook: string, enabled: boolean): Promise<void>;
  /** Every deployment-wide switch recorded, by hook name. */
  read(): Promise<ReadonlyMap<string, boolean>>;
  /**
   * Record a switch in one session, kept (and deleted) with the session, so every replica that serves
   * the session applies it. False when the store holds no open session of that key: nothing recorded
   * (the local store holds none: this replica's registry is the only copy).
   */
  putInSession(sessionKey: string, change: HookSwitch): Promise<boolean>;
  /** Call `listener` whenever the deployment-wide switches may have changed elsewhere (a peer's `put`, a reconnect). */
  onChange(listener: () => void): Promise<() => Promise<void>>;
}

export interface HookSwitches {
  /**
   * Switch a hook (`opts` as `Registry.setEnabled`): applied here, then recorded for every replica.
   * If the store cannot take it, the change is undone here and its error thrown.
   */
  set(name: string, enabled: boolean, opts: RegisterOptions): Promise<ResolvedHook>;
  /** The recorded deployment-wide switch of `name` (the registry applies it to each revision registering the hook). */
  deploymentSwitch(name: string): boolean | undefined;
  /** Bring this replica's registry in line with a session's recorded switches (read with the session). */
  applyInSession(sessionKey: string, switches: readonly HookSwitch[]): void;
  /** Listen for other replicas' switches, then read them all. A store that does not answer now is read at its next reconnect. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The runtime applying what is recorded: exempt from rate limits, allowed to switch any scope. */
const RECORDED: Principal = Object.freeze({ id: "system", role: "system" });

/**
 * @example
 * ```ts
 * const switches = createHookSwitches({ registry, store: createLocalHookSwitchStore(), logger });
 * await switches.set("strip-pii", false, { scope: "deployment", principal: ops });
 * ```
 */
export function createHookSwitches(deps: { registry: Registry; store: HookSwitchStore; logger: Logger }): HookSwitches {
  const { registry, store, logger } = deps;
  /** The deployment-wide switches as last read or written here. */
  let deployment: ReadonlyMap<string, boolean> = new Map();
  let unsubscribe: (() => Promise<void>) | undefined;
  let refreshing: Promise<void> = Promise.resolve();

  /** Apply `enabled` here if the hook is here and differs; recorded switches are replayed, never counted twice. */
  function applyHere(name: string, enabled: boolean, scope: Scope, sessionKey?: string): void {
    const now = enabledNow(registry.snapshot(), name, scope, sessionKey);
    if (now === undefined || now === enabled) return;
    try {
      registry.setEnabled(name, enabled, { scope, ...(sessionKey !== undefined ? { sessionId: sessionKey } : {}), principal: RECORDED, rateAdmitted: "shared" });
    } catch (err) {
      logger.warn({ err, hook: name, scope }, "a recorded hook switch could not be applied on this replica");
    }
  }

  async function refresh(): Promise<void> {
    const read = await store.read();
    deployment = read;
    for (const [name, enabled] of read) applyHere(name, enabled, "deployment");
  }

  /** One read at a time; a read that fails is logged (the next notification or reconnect reads again). */
  function refreshSoon(): Promise<void> {
    refreshing = refreshing.then(refresh).catch((err: unknown) => logger.warn({ err }, "store: could not read the hook switches; retrying at the next notification or reconnect"));
    return refreshing;
  }

  return {
    async set(name, enabled, opts) {
      const sessionKey = opts.sessionId;
      const before = enabledNow(registry.snapshot(), name, opts.scope, sessionKey);
      const hook = registry.setEnabled(name, enabled, opts);
      const previous = deployment;
      try {
        if (sessionKey === undefined) {
          deployment = new Map(deployment).set(name, enabled);
          await store.put(name, enabled);
        } else await store.putInSession(sessionKey, { hook: name, scope: opts.scope, enabled });
      } catch (err) {
        // Not recorded for the other replicas ⇒ not switched at all.
        if (sessionKey === undefined) deployment = previous;
        if (before !== undefined) applyHere(name, before, opts.scope, sessionKey);
        throw err;
      }
      return hook;
    },
    deploymentSwitch: (name) => deployment.get(name),
    applyInSession(sessionKey, switches) {
      for (const s of switches) applyHere(s.hook, s.enabled, s.scope, sessionKey);
    },
    async start() {
      // Subscribed before the first read: a switch made meanwhile is either read or announced.
      unsubscribe = await store.onChange(() => void refreshSoon());
      await refreshSoon();
    },
    async close() {
      await unsubscribe?.().catch(() => undefined);
      await refreshing;
    },
  };
}

/**
 * Whether `name` runs now (deployment-wide, or in session `sessionKey`: its session hook of that name
 * with `scope: session`, the deployment hook as that session's chain has it with `scope: deployment`);
 * undefined when no such hook is registered here.
 */
export function enabledNow(snapshot: RegistrySnapshot, name: string, scope: Scope, sessionKey?: string): boolean | undefined {
  if (scope === "session") return sessionKey === undefined ? undefined : snapshot.find(name, "session", sessionKey)?.enabled;
  const hook = snapshot.find(name, "deployment");
  if (hook === undefined || sessionKey === undefined || hook.type === undefined) return hook?.enabled;
  return snapshot.chain(hook.type, sessionKey).hooks.find((p) => p.hook.name === name && p.hook.scope === "deployment")?.hook.enabled;
}
