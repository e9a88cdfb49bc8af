/*
 * The shared store (issue 18): with `store: { kind: redis }` every replica of a deployment shares
 * bundles, sessions, limits and approvals through one Redis. This folder is the only one that talks to
 * Redis (eslint's import table); the runtime builds one `SharedStore` at start and hands it to the
 * parts that share state.
 *
 *   connection.ts  the Redis clients: fail-fast commands, timeouts, reconnect with backoff, pub/sub
 *   keys.ts        every key and channel, under `store.prefix`
 *   errors.ts      Redis failures → STORE_UNAVAILABLE (503) naming the operation
 *   replica-id.ts  who this replica is
 *   replica.ts     heartbeat, peers, start-up checks (prefix / config version / layout)
 */
import type { Logger } from "../observe/events.js";
import { connectStore, describeUrl, type StoreConnection, type StoreConnectionStatus } from "./connection.js";
import { startReplicaPresence, type PeerView, type RefusedRevision, type ReplicaBundleReport, type ReplicaPresence } from "./replica.js";
import { resolveReplicaId } from "./replica-id.js";
import { DEFAULTS } from "../config/defaults.js";
import type { Registry } from "prom-client";
import { createDataLossWatch, type DataLossEvent, type DataLossWatch } from "./data-loss.js";

export { connectStore, defineScript, backoffMs, describeUrl, newInstanceId, type StoreConnection, type StoreConnectionStatus, type StoreScript, type RedisClient } from "./connection.js";
export { storeKeys, keyPart, PREFIX_INDEX_KEY, STORE_LAYOUT_VERSION, type StoreKeys } from "./keys.js";
export { storeUnavailable, classifyStoreError, type StoreFailure } from "./errors.js";
export { resolveReplicaId, checkReplicaId, REPLICA_ID, REPLICA_ID_FILE } from "./replica-id.js";
export { checkPeers, startReplicaPresence, type PeerView, type RefusedRevision, type ReplicaBundleReport, type ReplicaPresence, type ReplicaRecord } from "./replica.js";

/** `createRuntime({ store })`: where shared state lives. `{ kind: "local" }` (the default) touches no Redis. */
export type StoreOptions = { kind: "local" } | RedisStoreOptions;

export interface RedisStoreOptions {
  kind: "redis";
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` */
  url: string;
  /** Key prefix of this deployment (default `vcp`); replicas of one deployment share it. */
  prefix?: string;
  /** This replica's id; default: kept in `<dataDir>/replica-id`, else fresh per process. */
  replicaId?: string;
  /** What peers compare at start (vcp.yaml: `store.config_version`, else a digest of the shared config). */
  configVersion?: string;
  /** The software version in this replica's record. */
  version?: string;
  /** Where this replica serves HTTP, shown to peers in status. */
  advertiseUrl?: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  maxBackoffMs?: number;
  heartbeatMs?: number;
  /** How often a replica re-reads the shared bundle revision even without a notification. */
  reconcileMs?: number;
  /** How long an upload's answer waits for the other live replicas to accept or refuse the revision (0: not at all). */
  uploadWaitMs?: number;
  /** How long Redis may not answer before this replica is not ready (0: never); health.ts. */
  unreachableAfterMs?: number;
}

/** `runtime.status().store`. */
export type StoreStatus =
  | { kind: "local" }
  | {
      kind: "redis";
      prefix: string;
      /** host:port/db, never the credentials */
      url: string;
      replica_id: string;
      config_version: string;
      connection: StoreConnectionStatus;
      /** Start-up and later inconsistencies with peers (config version, prefix, layout), as sentences. */
      warnings: string[];
      /** Every replica seen under this prefix (this one included), as of the last heartbeat. */
      replicas: PeerView[];
      /** The last time this replica noticed Redis lost data (data-loss.ts), or null. */
      data_loss: DataLossEvent | null;
      /** This replica's shared bundles: the revision it reconciled to, the newest it has read, what it refused. */
      bundles?: {
        revision: number | null;
        desired_revision: number | null;
        refused: RefusedRevision[];
        /** False while this replica refuses the active revision of a bundle (then /readyz answers 503 with `reason`). */
        ready: boolean;
        not_ready_reason: string | null;
      };
    };

/** The store as the runtime's parts see it (created once per runtime by `openSharedStore`). */
export interface SharedStore {
  readonly replicaId: string;
  readonly connection: StoreConnection;
  readonly presence: ReplicaPresence;
  /** Noticing that Redis lost data (data-loss.ts): the heartbeat and the bundle sync report to it. */
  readonly dataLoss: DataLossWatch;
  readonly options: Required<Omit<RedisStoreOptions, "replicaId" | "advertiseUrl" | "configVersion" | "version">> & { configVersion: string; version: string };
  status(): StoreStatus & { kind: "redis" };
  /** Where the heartbeat record's bundle part comes from (the bundle sync, once it exists). */
  setReport(report: () => ReplicaBundleReport): void;
  /** Add the store's metric families (health.ts) to a runtime's registry. */
  registerMetrics(registry: Registry): void;
  /** Stop heartbeating, remove this replica's record, close the connections. */
  close(): Promise<void>;
}

/**
 * Connect, claim the replica id and start heartbeating. `report` supplies the bundle part of this
 * replica's record (the bundle sync sets it once it exists; until then: nothing applied).
 *
 * @example
 * ```ts
 * const shared = await openSharedStore({ kind: "redis", url: "redis://127.0.0.1:6379", prefix: "vcp" }, { dataDir, logger });
 * await shared.connection.run("counting sessions", (redis) => redis.hlen(shared.connection.keys.custom("sessions")));
 * ```
 */
export async function openSharedStore(
  options: RedisStoreOptions,
  context: { dataDir?: string | undefined; logger: Logger; report?: () => ReplicaBundleReport },
): Promise<SharedStore> {
  const resolved = {
    kind: "redis" as const,
    url: options.url,
    prefix: options.prefix ?? DEFAULTS.store.prefix,
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULTS.store.connect_timeout_ms,
    commandTimeoutMs: options.commandTimeoutMs ?? DEFAULTS.store.command_timeout_ms,
    maxBackoffMs: options.maxBackoffMs ?? DEFAULTS.store.max_backoff_ms,
    heartbeatMs: options.heartbeatMs ?? DEFAULTS.store.heartbeat_ms,
    reconcileMs: options.reconcileMs ?? DEFAULTS.store.reconcile_ms,
    uploadWaitMs: options.uploadWaitMs ?? DEFAULTS.store.upload_wait_ms,
    unreachableAfterMs: options.unreachableAfterMs ?? DEFAULTS.store.unreachable_after_ms,
    configVersion: options.configVersion ?? "unversioned",
    version: options.version ?? "unknown",
  };
  const replicaId = resolveReplicaId({ explicit: options.replicaId, dataDir: context.dataDir });
  const connection = await connectStore({ ...resolved, clientName: `vcp-hooks:${replicaId}`, logger: context.logger });
  let report: () => ReplicaBundleReport = context.report ?? (() => ({ revision: null, bundles: {}, refused: [] }));
  const dataLoss = createDataLossWatch({ logger: context.logger, epochKey: connection.keys.epoch });
  let presence: ReplicaPresence;
  try {
    presence = await startReplicaPresence({
      connection,
      id: replicaId,
      version: resolved.version,
      configVersion: resolved.configVersion,
      heartbeatMs: resolved.heartbeatMs,
      url: options.advertiseUrl ?? null,
      report: () => report(),
      logger: context.logger,
      dataLoss,
    });
  } catch (err) {
    await connection.close();
    throw err;
  }
  return {
    replicaId,
    connection,
    presence,
    dataLoss,
    options: resolved,
    setReport(next) {
      report = next;
    },
    registerMetrics(registry) {
      connection.health.registerMetrics(registry);
      dataLoss.registerMetrics(registry);
    },
    status: () => ({
      kind: "redis",
      prefix: resolved.prefix,
      url: describeUrl(resolved.url),
      replica_id: replicaId,
      config_version: resolved.configVersion,
      connection: connection.status(),
      // A data loss stays in the warnings (what `vcp-hooks status` prints) until the process restarts.
      warnings: [...presence.warnings(), ...dataLossWarning(dataLoss.last())],
      replicas: presence.peers(),
      data_loss: dataLoss.last(),
    }),
    async close() {
      await presence.close();
      await connection.close();
    },
  };
}
function dataLossWarning(loss: DataLossEvent | null): string[] {
  return loss === null ? [] : [`Redis lost data (${loss.kind}, noticed ${loss.detected_at}): ${loss.message}`];
}

export { entrySource, sharedBundleState, type SharedBundleEntry, type SharedBundleState, type SharedRevision } from "./bundles.js";
export type { DataLossEvent, DataLossKind, DataLossWatch } from "./data-loss.js";
export type { StoreHealth, StoreHealthStatus } from "./health.js";
export { createRedisRateLimitStore, type RedisRateLimitStoreOptions } from "./rate-limit.js";
export { createRedisApprovalStore, type RedisApprovalStoreOptions } from "./approvals.js";
export { sessionRedisOf, type SessionRedis } from "./session-redis.js";
export { createRedisImplicitSessionStore, type RedisImplicitSessionStoreOptions } from "./implicit-sessions.js";
