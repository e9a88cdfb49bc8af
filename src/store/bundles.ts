/*
 * The shared bundle state in Redis: which revision of each bundle every replica should run, in the
 * order the changes were made, and the artifacts themselves.
 *
 *   <prefix>:bundle:active   hash  name → {"seq":N,"bundle","digest","version","by","at","allow_downgrade"}
 *                                  or a removal {"seq":N,"bundle","removed":true,"by","at"}; an entry a
 *                                  replica wrote back after Redis lost data also has "from": the revision
 *                                  that replica ran it at (0: unknown), see `restore`
 *   <prefix>:bundle:seq      the shared revision: one INCR per change, so changes have one order
 *   <prefix>:bundle:generation  made with the first change; after Redis lost its data (no AOF) the next
 *                            change makes a new one, and replicas re-read everything instead of trusting
 *                            a seq number they have seen before
 *   <prefix>:bundle:artifact:<digest>  the .vcpb as uploaded (a replaced one expires after an hour,
 *                                      so a replica mid-reconcile can still read it)
 *   <prefix>:bundle:changed  channel: the new seq, published in the same script
 *
 * Each change is one Lua script: artifact, entry, counter and notification together. Redis does not
 * roll a script back when one of its writes is refused half-way: the artifact is stored expiring and
 * kept for good only once its entry is written, so such a script leaves nothing that stays.
 *
 * After Redis lost data (data-loss.ts) the counter is first raised back to the highest revision a
 * replica has seen (`floor`, with a new generation so every replica re-reads everything), then each
 * replica writes back what it runs in `restore` mode: an entry stands unless the one written back
 * was run at a later revision (`from`) — so whichever replica ran the newest revision of a bundle
 * wins, in whatever order they come back, and a replica that remembers nothing (from 0) never
 * overrides one that does.
 * What a replica does with this (verify with its own keyring, swap, report) is src/install/bundle-sync.ts.
 */
import { defineScript, newInstanceId, type StoreConnection } from "./connection.js";

/** How long an artifact no entry names any more stays readable. */
const REPLACED_ARTIFACT_TTL_MS = 60 * 60 * 1000;

export type SharedBundleEntry =
  | { seq: number; bundle: string; digest: string; version: string; by: string; at: string; allow_downgrade: boolean; removed?: undefined; from?: number }
  | { seq: number; bundle: string; removed: true; by: string; at: string; from?: number };

/** A point in the shared order: seq numbers compare only within one generation. */
export interface SharedRevision {
  generation: string | null;
  seq: number;
}

/** The revision an entry stands for: where it was run before Redis lost data (`from`), else its own seq. */
export function entrySource(entry: SharedBundleEntry): number {
  return typeof entry.from === "number" ? entry.from : entry.seq;
}

interface PublishInput {
  bundle: string;
  digest: string;
  version: string;
  artifactJson: string;
  by: string;
  allowDowngrade: boolean;
  /** The writer's highest revision seen: the change gets a higher one even if Redis lost data since. */
  floor?: number;
}

export interface SharedBundleState {
  /** The current shared revision and every bundle's entry, read atomically, with the last floor record. */
  read(): Promise<SharedRevision & { entries: SharedBundleEntry[]; floor: SharedFloorRecord | null }>;
  /** Only the shared revision and the store's epoch (data-loss.ts; null: absent) — the reconciler's cheap check. */
  revision(): Promise<SharedRevision & { epoch: string | null }>;
  /**
   * Raise the revision counter to `highest` if it is below (Redis lost data), start a new generation
   * (every replica re-reads everything) and record it for the others. The record's id when it was below.
   */
  floor(input: { highest: number; by: string; kind: "emptied" | "rewound" }): Promise<string | null>;
  /** A stored artifact (parsed JSON), or undefined when it is gone. */
  artifact(digest: string): Promise<unknown>;
  /**
   * Make `artifact` the shared revision of `bundle`. `mode: "restore"` (a replica writing back what
   * it runs: its data directory's bundles to an empty Redis, or after Redis lost data) writes only
   * when the entry there stands for an earlier revision than `from` (the one this replica ran it at; 0:
   * unknown), or there is none. Returns the new seq, or the current one when nothing changed (same
   * digest already shared, or a restore that found a later entry).
   */
  publish(input: PublishInput & ({ mode: "replace" } | { mode: "restore"; from: number })): Promise<SharedRevision & { changed: boolean }>;
  /** Record that `bundle` is removed everywhere (`restoreFrom`: only over an entry standing for an earlier revision). */
  remove(input: { bundle: string; by: string; restoreFrom?: number; floor?: number }): Promise<SharedRevision & { changed: boolean }>;
  /** Call `listener` with each notified seq (pub/sub); returns an unsubscribe. */
  onChange(listener: (seq: number) => void): Promise<() => Promise<void>>;
}

/** An entry's source revision, in Lua (entrySource): `from` when written back after a loss, else its seq. */
const LUA_SOURCE = `
local function source(text)
  local ok, entry = pcall(cjson.decode, text)
  if not ok or type(entry) ~= 'table' then return 0 end
  return tonumber(entry['from'] or entry['seq']) or 0
end
`;

// KEYS: active hash, seq, new artifact, generation. ARGV: name, digest, entry JSON without seq (starts
// with "{"), artifact JSON, mode ('replace' | 'restore'), channel, replaced-artifact ttl ms, artifact key
// prefix, a fresh generation id (used only when there is none), restore's from, the lowest seq the
// counter may be at (the writer's highest seen: after a data loss no number is given out twice).
// Returns { seq, changed, generation }.
const PUBLISH = defineScript(
  "bundle-publish",
  `${LUA_SOURCE}
redis.call('SET', KEYS[4], ARGV[9], 'NX')
local generation = redis.call('GET', KEYS[4])
local current = redis.call('HGET', KEYS[1], ARGV[1])
local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
local same = current and not string.find(current, '"removed":true', 1, true) and string.find(current, '"digest":"' .. ARGV[2] .. '"', 1, true)
if current and ARGV[5] == 'restore' and (same or source(current) >= tonumber(ARGV[10])) then return { seq, 0, generation } end
if same then
  redis.call('SET', KEYS[3], ARGV[4])
  return { seq, 0, generation }
end
-- Redis keeps the writes of a script that stops half-way (a write it refuses): the new artifact is
-- stored expiring and kept for good, and the one it replaces set to expire, only once the entry that
-- names the new one is written. Stopped before, the shared revision and its artifact stand as they were.
redis.call('SET', KEYS[3], ARGV[4], 'PX', tonumber(ARGV[7]))
if seq < tonumber(ARGV[11]) then redis.call('SET', KEYS[2], ARGV[11]) end
seq = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], ARGV[1], '{"seq":' .. seq .. ',' .. string.sub(ARGV[3], 2))
redis.call('PERSIST', KEYS[3])
if current then
  local old = string.match(current, '"digest":"([^"]+)"')
  if old and old ~= ARGV[2] then redis.call('PEXPIRE', ARGV[8] .. string.gsub(old, ':', '%%3A'), tonumber(ARGV[7])) end
end
redis.call('PUBLISH', ARGV[6], tostring(seq))
return { seq, 1, generation }
`,
);

// KEYS: active hash, seq, generation. ARGV: name, tombstone JSON without seq, channel, replaced-artifact
// ttl ms, artifact key prefix, a fresh generation id, restore's from ('' when not a restore), the lowest
// seq the counter may be at (as PUBLISH). Returns { seq, changed, generation }.
const REMOVE = defineScript(
  "bundle-remove",
  `${LUA_SOURCE}
redis.call('SET', KEYS[3], ARGV[6], 'NX')
local generation = redis.call('GET', KEYS[3])
local current = redis.call('HGET', KEYS[1], ARGV[1])
local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
if current and string.find(current, '"removed":true', 1, true) then return { seq, 0, generation } end
if ARGV[7] ~= '' and ((not current) or source(current) >= tonumber(ARGV[7])) then return { seq, 0, generation } end
if seq < tonumber(ARGV[8]) then redis.call('SET', KEYS[2], ARGV[8]) end
seq = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], ARGV[1], '{"seq":' .. seq .. ',' .. string.sub(ARGV[2], 2))
-- Only once the tombstone is written (as in bundle-publish): a removal stopped half-way leaves the
-- shared revision's artifact as it was.
if current then
  local old = string.match(current, '"digest":"([^"]+)"')
  if old then redis.call('PEXPIRE', ARGV[5] .. string.gsub(old, ':', '%%3A'), tonumber(ARGV[4])) end
end
redis.call('PUBLISH', ARGV[3], tostring(seq))
return { seq, 1, generation }
`,
);

// KEYS: seq, generation, floor record. ARGV: highest revision seen, a fresh generation id, replica id,
// ISO time, kind of loss. → 1 raised (and recorded), 0 not below.
const FLOOR = defineScript(
  "bundle-floor",
  `
local found = tonumber(redis.call('GET', KEYS[1]) or '0')
if found >= tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('SET', KEYS[3], cjson.encode({ id = ARGV[2], highest = tonumber(ARGV[1]), found = found, by = ARGV[3], at = ARGV[4], kind = ARGV[5] }))
return 1
`,
);

/** A replica raised the revision counter back after a data loss (`<prefix>:bundle:floor`). */
export interface SharedFloorRecord {
  id: string;
  highest: number;
  found: number;
  by: string;
  at: string;
  kind: "emptied" | "rewound";
}

/**
 * @example
 * ```ts
 * const state = sharedBundleState(shared.connection);
 * const { seq } = await state.publish({ bundle: "guard", digest, version: "1.0.0", artifactJson, by: "web-1", allowDowngrade: false, mode: "replace" });
 * ```
 */
export function sharedBundleState(connection: StoreConnection): SharedBundleState {
  const keys = connection.keys;
  // The artifact key of a digest is keys.bundleArtifact(digest); the scripts rebuild it from this
  // prefix, escaping the digest's ':' as keyPart does (a digest is sha256:<hex>, nothing else to escape).
  const artifactPrefix = keys.bundleArtifact("");
  return {
    async read() {
      const [seqReply, generation, activeReply, floorReply] = await connection.run("reading the shared bundle revisions", async (redis) => {
        const replies = await redis.multi().get(keys.bundleSeq).get(keys.bundleGeneration).hgetall(keys.bundleActive).get(keys.bundleFloor).exec();
        if (replies === null) throw new Error("the read transaction was aborted");
        for (const [err] of replies) if (err) throw err;
        return [replies[0]![1] as string | null, replies[1]![1] as string | null, replies[2]![1] as Record<string, string>, replies[3]![1] as string | null];
      });
      let floor: SharedFloorRecord | null = null;
      try {
        floor = floorReply === null ? null : (JSON.parse(floorReply) as SharedFloorRecord);
      } catch {
        floor = null;
      }
      const entries: SharedBundleEntry[] = [];
      for (const text of Object.values(activeReply)) {
        try {
          entries.push(JSON.parse(text) as SharedBundleEntry);
        } catch {
          // An entry this release cannot read is skipped (and stays for the release that wrote it).
        }
      }
      entries.sort((a, b) => a.seq - b.seq);
      return { generation, seq: Number(seqReply ?? 0), entries, floor };
    },
    async revision() {
      const [seq, generation, epoch] = await connection.run("reading the shared bundle revision", (redis) => redis.mget(keys.bundleSeq, keys.bundleGeneration, keys.epoch));
      return { generation: generation ?? null, seq: Number(seq ?? 0), epoch: epoch ?? null };
    },
    async floor(input) {
      const id = newInstanceId();
      const raised = Number(await connection.eval("raising the shared bundle revision after a data loss", FLOOR, [keys.bundleSeq, keys.bundleGeneration, keys.bundleFloor], [input.highest, id, input.by, new Date().toISOString(), input.kind]));
      return raised === 1 ? id : null;
    },
    async artifact(digest) {
      const text = await connection.run(`reading bundle artifact ${digest}`, (redis) => redis.get(keys.bundleArtifact(digest)));
      return text === null ? undefined : (JSON.parse(text) as unknown);
    },
    async publish(input) {
      const at = new Date().toISOString();
      const from = input.mode === "restore" ? input.from : undefined;
      const entry = JSON.stringify({ bundle: input.bundle, digest: input.digest, version: input.version, by: input.by, at, allow_downgrade: input.allowDowngrade, ...(from !== undefined ? { from } : {}) });
      const reply = (await connection.eval(`publishing bundle '${input.bundle}' ${input.digest}`, PUBLISH, [keys.bundleActive, keys.bundleSeq, keys.bundleArtifact(input.digest), keys.bundleGeneration], [
        input.bundle, input.digest, entry, input.artifactJson, input.mode, keys.bundleChannel, REPLACED_ARTIFACT_TTL_MS, artifactPrefix, newInstanceId(), from ?? 0, input.floor ?? 0,
      ])) as [number, number, string];
      return { seq: Number(reply[0]), changed: Number(reply[1]) === 1, generation: String(reply[2]) };
    },
    async remove(input) {
      const from = input.restoreFrom;
      const tombstone = JSON.stringify({ bundle: input.bundle, removed: true, by: input.by, at: new Date().toISOString(), ...(from !== undefined ? { from } : {}) });
      const reply = (await connection.eval(`removing bundle '${input.bundle}'`, REMOVE, [keys.bundleActive, keys.bundleSeq, keys.bundleGeneration], [
        input.bundle, tombstone, keys.bundleChannel, REPLACED_ARTIFACT_TTL_MS, artifactPrefix, newInstanceId(), from ?? "", input.floor ?? 0,
      ])) as [number, number, string];
      return { seq: Number(reply[0]), changed: Number(reply[1]) === 1, generation: String(reply[2]) };
    },
    onChange(listener) {
      return connection.subscribe(keys.bundleChannel, (message) => {
        const seq = Number(message);
        if (Number.isSafeInteger(seq)) listener(seq);
      });
    },
  };
}
