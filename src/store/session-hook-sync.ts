/**
 * Sessions in the shared store with `store: redis` (issue 18; sessions.ts, with their periodic
 * schedule), plus the one thing only this process can do for them: keep this replica's registry
 * holding each session's session-scope hooks and hook switches, which are recorded in the store when
 * registered (switched) on any replica and applied here before one of the session's chains runs. A
 * session hook a bundle revision dropped is forgotten in the store too, so no replica registers it
 * again when a later revision offers it — once the bundle change that dropped it is settled
 * (`settled`): an install the shared store refuses is undone, and the store never heard of the drop.
 */
import { VcpError } from "../errors.js";
import type { Logger } from "../observe/events.js";
import type { PipelineDeps } from "../pipeline/index.js";
import type { HookSwitch, HookSwitches, Registry, SessionHookAt, SessionHooksRebound } from "../registry/index.js";
import { createSharedSessions, type SessionHookRef } from "./sessions.js";
import type { SharedStore } from "./index.js";
import { sessionRedisOf } from "./session-redis.js";

/**
 * Tuning of sessions, periodic hooks and approvals in the shared store (with `store: redis` they
 * live in Redis and every replica serves every session, issue 18). Ignored with the local store.
 */
export interface SharedSessionTuning {
  /** Per-session lock: time to live (renewed while held) and how long an operation waits for it. */
  lock?: { ttlMs?: number; waitMs?: number };
  /** How often this replica looks for due periodic ticks (ms). Default 200. */
  periodicScanMs?: number;
  /** Approval expiry sweep and waiter poll period (ms). Default 500. */
  approvalPollMs?: number;
}

export interface SyncedSessionsDeps {
  store: SharedStore;
  tuning: SharedSessionTuning;
  pipeline: PipelineDeps;
  registry: Registry;
  /** Applies a session's recorded hook switches (registry/switches.ts). */
  switches: Pick<HookSwitches, "applyInSession">;
  logger: Logger;
  /** False while this replica should leave periodic ticks to its peers (store/shared-periodic.ts). */
  periodicReady?(): boolean;
  /**
   * True when this replica runs the deployment's active revision of every bundle, as far as it has
   * read (bundle-sync.ts): a session hook its bundles do not offer was then deregistered by a
   * revision (or the bundle's removal), not delayed. Absent: always true.
   */
  bundlesCurrent?(): boolean;
}

/** How many sessions a sweep (`published`) works on at once. */
const SWEEP_CONCURRENCY = 16;

/** The registry's refusals of a hook its bundle's active revision does not offer (or of a bundle not installed). */
const NOT_OFFERED: ReadonlySet<string> = new Set(["UNKNOWN_BUNDLE", "UNKNOWN_HOOK"]);

export function createSyncedSessions(deps: SyncedSessionsDeps) {
  const { registry, logger } = deps;
  const redis = sessionRedisOf(deps.store.connection, deps.store.replicaId, deps.store.options.commandTimeoutMs);
  /** Session keys whose hooks this replica took from the store: the opening (epoch) and the refs registered. */
  const synced = new Map<string, { epoch: string; refs: Set<string> }>();

  /** Forget a session's hooks on this replica (closed, or re-opened as a new session). */
  function forget(key: string): void {
    // Its hooks a bundle change in progress dropped: the session's keys went with it.
    for (const [bundle, hooks] of droppedHere) {
      const left = hooks.filter((h) => h.session !== key);
      if (left.length === 0) droppedHere.delete(bundle);
      else droppedHere.set(bundle, left);
    }
    if (!synced.has(key)) return;
    synced.delete(key);
    registry.dropSession(key);
  }

  /** A session hook is gone for good (a revision dropped it): out of the store, so no replica registers it again. */
  function forgetDropped(key: string, ref: { bundle: string; hook: string }): void {
    synced.get(key)?.refs.delete(`${ref.bundle}/${ref.hook}`);
    sessions.forgetHooks(key, ref.bundle, [ref.hook]).catch((err: unknown) => logger.warn({ err, hook: `${ref.bundle}/${ref.hook}` }, "store: could not forget a session hook a bundle revision dropped; a later revision offering it again would bring it back on replicas that meet the session"));
  }

  function applySessionHooks(key: string, epoch: string | null, refs: readonly SessionHookRef[], switches: readonly HookSwitch[]): void {
    const known = synced.get(key);
    // SECURITY: an id closed and opened again is a new session: the old opening's hooks never carry over.
    if (epoch === null || (known !== undefined && known.epoch !== epoch)) forget(key);
    if (epoch === null) return;
    let entry = synced.get(key);
    if (entry === undefined) synced.set(key, (entry = { epoch, refs: new Set() }));
    for (const ref of refs) {
      const name = `${ref.bundle}/${ref.hook}`;
      if (entry.refs.has(name)) continue;
      if (registry.snapshot().find(ref.hook, "session", key) === undefined) {
        try {
          // The registering replica took this change from the deployment-wide limit: replaying it here
          // costs the principal nothing (a refusal would leave the session's chains here without it).
          registry.registerSessionHook(ref, { scope: "session", sessionId: key, principal: { id: ref.principal, role: "client" }, rateAdmitted: "shared" });
        } catch (err) {
          // Tried again on the next operation either way. Pending only when this replica is behind
          // (the revision that offers it has not reached it, or it refused that revision); a replica
          // that runs the active revisions and is not offered the hook: a revision dropped it, and
          // every replica deregistered it (hook.deregistered there) — no news for this one's log.
          const dropped = err instanceof VcpError && NOT_OFFERED.has(err.code) && deps.bundlesCurrent?.() !== false;
          if (!dropped) logger.warn({ err, hook: name }, "a session hook recorded in the shared store could not be registered on this replica yet");
          // Not forgotten in the store from here: "runs the active revisions" is as of this replica's
          // last read, and a revision offering the hook may be on its way (the replica whose swap
          // dropped it forgets it: `rebound`).
          else if (logger.isLevelEnabled("debug")) logger.debug({ hook: name, session: key, reason: err.message }, "a session hook recorded in the shared store is no longer offered (deregistered by a bundle revision)");
          continue;
        }
      }
      entry.refs.add(name);
    }
    // After the hooks: a switch of a session hook applies once the hook is registered here.
    if (switches.length > 0) deps.switches.applyInSession(key, switches);
  }

  const sessions = createSharedSessions({
    ...deps.pipeline,
    redis,
    ...(deps.tuning.lock !== undefined ? { lock: deps.tuning.lock } : {}),
    ...(deps.tuning.periodicScanMs !== undefined ? { periodicScanMs: deps.tuning.periodicScanMs } : {}),
    ...(deps.periodicReady !== undefined ? { periodicReady: deps.periodicReady } : {}),
    applySessionHooks,
  });

  /** Bundle → the session hooks its last swap here withdrew, swept from every session once it is published. */
  const withdrawn = new Map<string, readonly string[]>();
  /**
   * Bundle → the session hooks the swaps of the change in progress dropped here, forgotten in the store
   * only once that change is settled (`settled`). Why not at once: an install is swapped in before it is
   * published and persisted, and undone when either fails; had the drop reached the store, the undo
   * would have to write every hook back as it was (its registrant, its switch, its periodic schedule),
   * and could fail to. Not written until settled, an undone drop leaves nothing to repair. (Once
   * published, the change is the shared revision: `published` sweeps what it withdrew, undone or not.)
   */
  const droppedHere = new Map<string, SessionHookAt[]>();

  /**
   * Forget `hooks` of `bundle` in every session open in the store, those no replica knows included —
   * each only while the active revision still does not offer it (a later one may have meanwhile).
   */
  async function sweep(bundle: string, hooks: readonly string[]): Promise<void> {
    const keys = await sessions.openKeys();
    for (let i = 0; i < keys.length; i += SWEEP_CONCURRENCY) {
      const gone = hooks.filter((hook) => !offered(bundle, hook));
      if (gone.length === 0) return;
      await Promise.all(keys.slice(i, i + SWEEP_CONCURRENCY).map((key) => sessions.forgetHooks(key, bundle, gone)));
    }
  }

  function offered(bundle: string, hook: string): boolean {
    try {
      registry.snapshot().sessionOffer(bundle, hook);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Record a hook just registered here for an open session, so every replica registers it too.
   * False when the session is not open in the store (a session only ever named in `fire`: its
   * hooks stay on this replica, as with the local store).
   */
  async function rememberHook(key: string, ref: SessionHookRef, options: { periodic?: boolean } = {}): Promise<boolean> {
    // Reading the session first ties this replica's registry to its current opening (epoch).
    if ((await sessions.sessionInfo(key)) === undefined) return false;
    await sessions.rememberHook(key, ref, options);
    synced.get(key)?.refs.add(`${ref.bundle}/${ref.hook}`);
    return true;
  }

  return {
    sessions,
    rememberHook,
    forget,
    /**
     * A bundle swap here deregistered session hooks (registry.ts swapBundle): forgotten in the store once
     * the change is settled (`settled`). The undo of that change brought some back (registry.ts revives
     * only before the change is settled): the store never heard of their drop, nothing to write.
     * What a swap withdrew is swept from every session once this replica has published it (`published`).
     */
    rebound(change: SessionHooksRebound): void {
      if (change.withdrawn.length > 0) withdrawn.set(change.bundle, change.withdrawn);
      else withdrawn.delete(change.bundle);
      const pending = droppedHere.get(change.bundle) ?? [];
      const revived = (h: SessionHookAt) => change.revived.some((r) => r.session === h.session && r.hook === h.hook);
      const left = [...pending.filter((h) => !revived(h)), ...change.dropped];
      if (left.length > 0) droppedHere.set(change.bundle, left);
      else droppedHere.delete(change.bundle);
    },
    /**
     * The bundle manager is done with a change of `bundle` (bundles.ts `onSettled`): kept, or undone.
     * The session hooks its swaps dropped and did not bring back are forgotten in the store now.
     */
    settled(bundle: string): void {
      const dropped = droppedHere.get(bundle);
      droppedHere.delete(bundle);
      for (const h of dropped ?? []) forgetDropped(h.session, h);
    },
    /**
     * This replica published a change of `bundle` (bundle-sync.ts): the session hooks its swap
     * withdrew are forgotten in every open session — those of sessions no running replica knows too,
     * so a later revision offering them again brings none back. Only once published: an install
     * undone before that withdrew nothing. Resolves when done (the install answers after it); never rejects.
     */
    async published(bundle: string): Promise<void> {
      const hooks = withdrawn.get(bundle);
      if (hooks === undefined) return;
      withdrawn.delete(bundle);
      await sweep(bundle, hooks).catch((err: unknown) => logger.warn({ err, bundle, hooks }, "store: could not forget, in every session, the session hooks a bundle revision withdrew; a later revision offering them again may bring them back in sessions no replica has served since"));
    },
  };
}

export type SyncedSessions = ReturnType<typeof createSyncedSessions>;
