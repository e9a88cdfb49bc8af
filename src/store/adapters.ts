/*
 * Every state port's adapter, picked once from `store.kind` (docs/state.md): with `kind: local` the
 * in-process ones (pipeline/), with `kind: redis` those of this folder. The rules behind each port
 * are the same either way; the runtime takes what these return and never asks which store it has.
 */
import type { Logger } from "../observe/events.js";
import { createApprovals, type ApprovalDeps, type Approvals } from "../pipeline/approvals.js";
import { createLocalApprovalStore } from "../pipeline/approvals-local.js";
import { createPipeline, localSessions, type PipelineDeps, type SessionService } from "../pipeline/index.js";
import { createLocalHookSwitchStore, createRegistryRateLimit, type HookSwitches, type HookSwitchStore, type Principal, type Registry, type SessionHooksRebound } from "../registry/index.js";
import type { ImplicitSessionStore } from "../pipeline/implicit-sessions.js";
import { createRedisApprovalStore } from "./approvals.js";
import { createRedisImplicitSessionStore } from "./implicit-sessions.js";
import type { SharedStore } from "./index.js";
import { createRedisRateLimitStore } from "./rate-limit.js";
import { createRedisHookSwitchStore } from "./switches.js";
import { createSyncedSessions, type SharedSessionTuning } from "./session-hook-sync.js";
import { sessionRedisOf } from "./session-redis.js";
import type { SessionHookRef } from "./sessions.js";

/** A session's session-scope hooks as every replica must see them (a no-op with the local store: one replica). */
export interface SessionHookSync {
  /** Record a hook just registered here for `key`, so every replica registers it; false when the session is not open in the store. */
  remember(key: string, ref: SessionHookRef, options?: { periodic?: boolean }): Promise<boolean>;
  /** Forget a closed session's hooks on this replica. */
  forget(key: string): void;
  /** A bundle swap here dropped (or, undone, brought back) session hooks: the shared record follows once the change is settled. */
  rebound(change: SessionHooksRebound): void;
  /** The bundle manager is done with a change of `bundle`, kept or undone: what its swaps dropped and did not bring back goes from the store. */
  settled(bundle: string): void;
  /** This replica published a change of `bundle`: what its swap withdrew goes from every session in the store (never rejects). */
  published(bundle: string): Promise<void>;
}

export interface SessionStore {
  /** The session store behind every session operation (pipeline/types.ts SessionService). */
  sessions: SessionService;
  hooks: SessionHookSync;
  /** Open sessions for the metrics gauge: exact locally; with Redis the latest count read (a round trip). */
  openSessions(): number;
  /** Start the periodic ticks of the shared schedule (locally the pipeline's timers run by themselves). */
  startPeriodic(): void;
}

/**
 * The session store: the in-process pipeline, or sessions in Redis with their hooks synced to this
 * replica's registry (session-hook-sync.ts).
 *
 * @example
 * ```ts
 * const { sessions } = sessionStoreFor(undefined, { pipeline: pipelineDeps, registry, logger, tuning: {} });
 * await sessions.open({ session_id: "s1", context, constitution, state: "professional" });
 * ```
 */
export function sessionStoreFor(
  shared: SharedStore | undefined,
  deps: { pipeline: PipelineDeps; registry: Registry; switches: HookSwitches; logger: Logger; tuning: SharedSessionTuning; periodicReady?(): boolean; bundlesCurrent?(): boolean },
): SessionStore {
  if (shared === undefined) {
    const pipeline = createPipeline(deps.pipeline);
    return { sessions: localSessions(pipeline), hooks: { remember: async () => false, forget: () => undefined, rebound: () => undefined, settled: () => undefined, published: async () => undefined }, openSessions: () => pipeline.list().length, startPeriodic: () => undefined };
  }
  const synced = createSyncedSessions({ store: shared, tuning: deps.tuning, pipeline: deps.pipeline, registry: deps.registry, switches: deps.switches, logger: deps.logger, ...(deps.periodicReady !== undefined ? { periodicReady: deps.periodicReady } : {}), ...(deps.bundlesCurrent !== undefined ? { bundlesCurrent: deps.bundlesCurrent } : {}) });
  let latest = 0;
  return {
    sessions: synced.sessions,
    hooks: { remember: synced.rememberHook, forget: synced.forget, rebound: synced.rebound, settled: synced.settled, published: synced.published },
    openSessions() {
      synced.sessions.count().then((n) => (latest = n), () => undefined);
      return latest;
    },
    startPeriodic: () => synced.sessions.periodic.start(),
  };
}

/**
 * The approvals coordinator (pipeline/approvals.ts) over this process's store, or Redis. With Redis a
 * session's "allow always" grants expire with `allowAlwaysTtlMs` (the Amplifier profile's
 * implicit-session idle TTL), so Redis does not keep them forever.
 */
export function approvalsFor(shared: SharedStore | undefined, deps: Omit<ApprovalDeps, "store"> & { logger: Logger; allowAlwaysTtlMs?: number | undefined; pollMs?: number | undefined }): Approvals {
  const { allowAlwaysTtlMs, pollMs, ...rest } = deps;
  const store = shared === undefined
    ? createLocalApprovalStore()
    : createRedisApprovalStore(sessionRedisOf(shared.connection, shared.replicaId, shared.options.commandTimeoutMs), {
      logger: deps.logger, ...(allowAlwaysTtlMs !== undefined ? { allowAlwaysTtlMs } : {}), ...(pollMs !== undefined ? { pollMs } : {}),
    });
  return createApprovals({ ...rest, store });
}

/** The registry-change limit a principal's change takes before any work (spec §8.2.5). */
export interface RegistryAdmission {
  /** Take one change of `principal`'s rate, or throw REGISTRY_RATE_LIMITED. */
  admit(principal: Principal | undefined): Promise<void>;
  /** True when `admit` counted the change deployment-wide: the registry must not count it again (`rateAdmitted: "shared"`). */
  readonly shared: boolean;
}

/**
 * Registry changes per principal across every replica, with a shared store: taken before any work on
 * the change, on Redis's clock. The registry's own limiter still counts this replica's bundle changes
 * (it can only refuse what the shared one already would); a session hook admitted here is registered
 * with `rateAdmitted: "shared"`, on this replica and on every replica that replays it
 * (session-hook-sync.ts), so it counts once for the deployment. The embedding application (no
 * principal) and the runtime itself are not counted. Locally: nothing here (the registry counts).
 */
export function registryAdmission(shared: SharedStore | undefined, perMinute: number): RegistryAdmission {
  if (shared === undefined) return { admit: async () => undefined, shared: false };
  const limit = createRegistryRateLimit(createRedisRateLimitStore(shared.connection, { scope: "registry", what: "registry change" }), perMinute);
  return {
    shared: true,
    async admit(principal) {
      await limit.admit(principal);
    },
  };
}

/** With a shared store, `limits.sessions_per_client` counts a client's implicit sessions on every replica. */
export function implicitSessionsFor(shared: SharedStore | undefined): { implicitSessions?: ImplicitSessionStore<false> } {
  return shared === undefined ? {} : { implicitSessions: createRedisImplicitSessionStore(shared.connection) };
}

/** Hook switches (registry/switches.ts): kept in this process, or in Redis for every replica. */
export function hookSwitchStoreFor(shared: SharedStore | undefined): HookSwitchStore {
  return shared === undefined ? createLocalHookSwitchStore() : createRedisHookSwitchStore(shared.connection);
}
