/*
 * Replica presence: each replica heartbeats a record of itself into `<prefix>:replicas` (what it runs:
 * software and config version, applied bundle revision, refused revisions) and reads everyone's back
 * in the same round trip. Liveness is judged on Redis's clock (`TIME` inside the script), so replicas
 * with skewed clocks agree on who is alive.
 *
 * At start (and whenever the picture changes) it says what is inconsistent between peers:
 *   - a live peer with another config version (store.config_version, else a digest of the shared config);
 *   - no live peer under this prefix while other prefixes have live replicas (a mistyped store.prefix);
 *   - another store layout version in Redis than this software writes.
 * A second live process heartbeating under the same replica id stops the start (REPLICA_ID_IN_USE).
 */
import { hostname } from "node:os";
import { VcpError } from "../errors.js";
import { createOutageLog, systemClock, type Logger } from "../observe/events.js";
import { defineScript, newInstanceId, type StoreConnection } from "./connection.js";
import { PREFIX_INDEX_KEY, STORE_LAYOUT_VERSION } from "./keys.js";
import type { DataLossWatch } from "./data-loss.js";

/** A record older than this (by Redis time) is deleted: a replica gone for a day is forgotten. */
const FORGET_AFTER_MS = 24 * 60 * 60 * 1000;
/** A replica is live while its last heartbeat is younger than this many of its intervals. */
const LIVE_INTERVALS = 3;

/** A revision this replica would not activate (its keyring refused it, it failed to load, its data directory refused it) or a removal it could not apply; it keeps the previous one. */
export interface RefusedRevision {
  bundle: string;
  /** The refused revision's digest; for a refused removal, the revision this replica keeps. */
  digest: string;
  version: string | null;
  /** A removal this replica could not apply (its data directory…): it still runs `digest`. */
  removed?: true;
  /** The shared revision number (store seq) of the refused change. */
  revision: number;
  code: string;
  message: string;
  at: string;
}

/** What a replica reports about its bundles (filled by the bundle sync). */
export interface ReplicaBundleReport {
  /** The last shared bundle revision (store seq) this replica has reconciled to; null before the first. */
  revision: number | null;
  /** Installed revisions by bundle name. */
  bundles: Record<string, { version: string; digest: string }>;
  refused: RefusedRevision[];
}

export interface ReplicaRecord extends ReplicaBundleReport {
  id: string;
  /** Random per process: tells a restarted replica from a twin using the same id. */
  instance: string;
  host: string;
  pid: number;
  version: string;
  config_version: string;
  started_at: string;
  heartbeat_ms: number;
  /** Where this replica serves HTTP, when it says (e.g. http://10.0.0.7:8787). */
  url: string | null;
}

export interface PeerView extends ReplicaRecord {
  /** Milliseconds since its last heartbeat, by Redis time. */
  seen_ms_ago: number;
  live: boolean;
  self: boolean;
}

export interface ReplicaPresence {
  readonly id: string;
  readonly instance: string;
  readonly configVersion: string;
  /** Every replica of this prefix seen in the last day (live ones first), as of the last heartbeat. */
  peers(): PeerView[];
  /** Inconsistencies between this replica and its peers, as of the last heartbeat (empty when none). */
  warnings(): string[];
  /** Heartbeat now (also runs every heartbeat interval). */
  beat(): Promise<void>;
  /** Stop heartbeating and remove this replica's record. */
  close(): Promise<void>;
}

export interface ReplicaPresenceOptions {
  connection: StoreConnection;
  id: string;
  version: string;
  configVersion: string;
  heartbeatMs: number;
  url?: string | null;
  /** The bundle part of the record, read at each heartbeat. */
  report(): ReplicaBundleReport;
  logger: Logger;
  /** Told the store's epoch at every heartbeat (which writes one when absent): a changed one is a data loss. */
  dataLoss?: DataLossWatch;
}

// KEYS: records hash, seen hash, prefix index, meta, epoch. ARGV: id, record JSON, instance, claim
// ("1"/"0"), live window ms, prefix, layout version, forget-after ms, a fresh epoch (used when none).
// Returns { "taken", age_ms } when claiming an id another live instance holds; else
// { now_ms, layout, live_prefixes[], epoch, id1, json1, seen1, id2, … }.
const HEARTBEAT = defineScript(
  "replica-heartbeat",
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local live = tonumber(ARGV[5])
if ARGV[4] == '1' then
  local seen = tonumber(redis.call('HGET', KEYS[2], ARGV[1]) or '0')
  local old = redis.call('HGET', KEYS[1], ARGV[1])
  if old and now - seen < live then
    local ok, rec = pcall(cjson.decode, old)
    if ok and type(rec) == 'table' and rec.instance ~= ARGV[3] then return { 'taken', tostring(now - seen) } end
  end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], tostring(now))
redis.call('HSETNX', KEYS[4], 'layout', ARGV[7])
redis.call('SET', KEYS[5], ARGV[9], 'NX')
redis.call('ZADD', KEYS[3], now, ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - tonumber(ARGV[8]))
local out = { tostring(now), redis.call('HGET', KEYS[4], 'layout') or '', redis.call('ZRANGEBYSCORE', KEYS[3], now - live, '+inf'), redis.call('GET', KEYS[5]) }
local seenAll = redis.call('HGETALL', KEYS[2])
for i = 1, #seenAll, 2 do
  local id, at = seenAll[i], tonumber(seenAll[i + 1])
  if now - at > tonumber(ARGV[8]) then
    redis.call('HDEL', KEYS[1], id)
    redis.call('HDEL', KEYS[2], id)
  else
    local rec = redis.call('HGET', KEYS[1], id)
    if rec then
      out[#out + 1] = id
      out[#out + 1] = rec
      out[#out + 1] = tostring(at)
    end
  end
end
return out
`,
);

/**
 * Claim the replica id and start heartbeating. With Redis up the claim and the start-up checks happen
 * before this resolves (a twin is REPLICA_ID_IN_USE); with Redis down they happen at the first
 * connection.
 *
 * @example
 * ```ts
 * const presence = await startReplicaPresence({ connection, id: "web-1", version: "0.1.0", configVersion,
 *   heartbeatMs: 1000, report: () => sync.report(), logger });
 * presence.peers(); // [{ id: "web-1", live: true, self: true, revision: 4, … }, …]
 * ```
 */
export async function startReplicaPresence(options: ReplicaPresenceOptions): Promise<ReplicaPresence> {
  const { connection, logger } = options;
  const keys = connection.keys;
  const seenKey = `${keys.replicas}:seen`;
  const instance = newInstanceId();
  const startedAt = new Date().toISOString();
  const liveWindowMs = LIVE_INTERVALS * options.heartbeatMs;
  let peers: PeerView[] = [];
  let warnings: string[] = [];
  let claimed = false;
  let closed = false;
  // One warning when heartbeats start failing, one a minute while they do, one line when they resume.
  const outage = createOutageLog({ logger, clock: systemClock, failing: "store: heartbeat failed", recovered: "store: heartbeat resumed", fields: { replica: options.id } });

  function record(): ReplicaRecord {
    return {
      id: options.id,
      instance,
      host: hostname(),
      pid: process.pid,
      version: options.version,
      config_version: options.configVersion,
      started_at: startedAt,
      heartbeat_ms: options.heartbeatMs,
      url: options.url ?? null,
      ...options.report(),
    };
  }

  async function heartbeat(claim: boolean): Promise<"ok" | { takenAgeMs: number }> {
    const reply = (await connection.eval("replica heartbeat", HEARTBEAT, [keys.replicas, seenKey, PREFIX_INDEX_KEY, keys.meta, keys.epoch], [
      options.id, JSON.stringify(record()), instance, claim ? "1" : "0", liveWindowMs, keys.prefix, STORE_LAYOUT_VERSION, FORGET_AFTER_MS, newInstanceId(),
    ])) as unknown[];
    if (reply[0] === "taken") return { takenAgeMs: Number(reply[1]) };
    const now = Number(reply[0]);
    const layout = String(reply[1]);
    const livePrefixes = (reply[2] as string[]).filter((p) => p !== keys.prefix);
    options.dataLoss?.epochSeen(typeof reply[3] === "string" ? reply[3] : null);
    const next: PeerView[] = [];
    for (let i = 4; i + 2 < reply.length; i += 3) {
      let rec: ReplicaRecord;
      try {
        rec = JSON.parse(String(reply[i + 1])) as ReplicaRecord;
      } catch {
        continue;
      }
      const seenAgo = Math.max(0, now - Number(reply[i + 2]));
      next.push({ ...rec, seen_ms_ago: seenAgo, live: seenAgo <= LIVE_INTERVALS * (rec.heartbeat_ms || options.heartbeatMs), self: rec.id === options.id });
    }
    next.sort((a, b) => Number(b.live) - Number(a.live) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    peers = next;
    setWarnings(checkPeers({ self: options.id, prefix: keys.prefix, configVersion: options.configVersion, peers: next, livePrefixes, layout }));
    return "ok";
  }

  function setWarnings(next: string[]): void {
    const added = next.filter((w) => !warnings.includes(w));
    warnings = next;
    for (const warning of added) logger.warn({ replica: options.id, prefix: keys.prefix }, `store: ${warning}`);
  }

  /** The first heartbeat: claim the id (waiting out a dead predecessor's record once), then check peers. */
  async function claimId(): Promise<void> {
    let result = await heartbeat(true);
    if (result !== "ok") {
      // A record under our id, fresh, from another instance: a predecessor killed a moment ago, or a twin.
      // Wait until a dead one's record would be stale; a twin keeps it fresh.
      await sleep(Math.max(0, liveWindowMs - result.takenAgeMs) + 50);
      result = await heartbeat(true);
      if (result !== "ok") {
        throw new VcpError(
          "REPLICA_ID_IN_USE",
          `replica id '${options.id}' is heartbeating in store prefix '${keys.prefix}' from another live process (last seen ${result.takenAgeMs} ms ago); give each replica its own data directory or VCP_REPLICA_ID`,
          { replica_id: options.id, prefix: keys.prefix },
        );
      }
    }
    claimed = true;
  }

  const tick = (): void => {
    if (closed || !connection.connected()) return;
    const work = claimed ? heartbeat(false) : claimId();
    work.then(
      () => outage.succeeded(),
      (err: unknown) => outage.failed(err),
    );
  };

  if (connection.connected()) await claimId();
  const stopReady = connection.onReady(() => {
    if (!claimed) tick();
    else void heartbeat(false).catch(() => undefined);
  });
  const timer = setInterval(tick, options.heartbeatMs);
  timer.unref();

  return {
    id: options.id,
    instance,
    configVersion: options.configVersion,
    peers: () => peers,
    warnings: () => warnings,
    beat: async () => {
      if (!claimed) await claimId();
      else await heartbeat(false);
    },
    async close() {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      stopReady();
      if (claimed && connection.connected()) {
        await connection
          .run("removing this replica's record", (redis) => redis.multi().hdel(keys.replicas, options.id).hdel(seenKey, options.id).exec())
          .catch(() => undefined);
      }
    },
  };
}

/** The start-up checks, as sentences an operator can act on. */
export function checkPeers(input: { self: string; prefix: string; configVersion: string; peers: readonly PeerView[]; livePrefixes: readonly string[]; layout: string }): string[] {
  const out: string[] = [];
  if (input.layout !== "" && input.layout !== String(STORE_LAYOUT_VERSION)) {
    out.push(`Redis holds store layout version ${input.layout} under prefix '${input.prefix}', this replica writes version ${STORE_LAYOUT_VERSION}: do not mix these releases on one prefix`);
  }
  const others = input.peers.filter((p) => p.live && !p.self);
  for (const peer of others) {
    if (peer.config_version !== input.configVersion) {
      out.push(`config version mismatch: replica '${peer.id}' runs config version '${peer.config_version}', this replica '${input.self}' runs '${input.configVersion}' (same store prefix '${input.prefix}'); deploy the same vcp.yaml to every replica`);
    }
  }
  if (others.length === 0 && input.livePrefixes.length > 0) {
    out.push(`no other live replica uses store prefix '${input.prefix}', but live replicas use prefix ${input.livePrefixes.map((p) => `'${p}'`).join(", ")} on this Redis: check store.prefix against the other replicas' vcp.yaml`);
  }
  return out;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
