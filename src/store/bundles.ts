/*
 * The shared bundle state in Redis: which revision of each bundle every replica should run, in the
 * order the changes were made, and the artifacts themselves.
 *
 *   <prefix>:bundle:active   hash  name → {"seq":N,"bundle","digest","version","by","at","allow_downgrade"}
 *                                  or a removal {"seq":N,"bundle","removed":true,"by","at"}
 *   <prefix>:bundle:seq      the shared revision: one INCR per change, so changes have one order
 *   <prefix>:bundle:generation  made with the first change; after Redis lost its data (no AOF) the next
 *                            change makes a new one, and replicas re-read everything instead of trusting
 *                            a seq number they have seen before
 *   <prefix>:bundle:artifact:<digest>  the .vcpb as uploaded (a replaced one expires after an hour,
 *                                      so a replica mid-reconcile can still read it)
 *   <prefix>:bundle:changed  channel: the new seq, published in the same script
 *
 * Each change is one Lua script: artifact, entry, counter and notification together or not at all.
 * What a replica does with this (verify with its own keyring, swap, report) is src/runtime/bundle-sync.ts.
 */
import { defineScript, newInstanceId, type StoreConnection } from "./connection.js";

/** How long an artifact no entry names any more stays readable. */
const REPLACED_ARTIFACT_TTL_MS = 60 * 60 * 1000;

export type SharedBundleEntry =
  | { seq: number; bundle: string; digest: string; version: string; by: string; at: string; allow_downgrade: boolean; removed?: undefined }
  | { seq: number; bundle: string; removed: true; by: string; at: string };

/** A point in the shared order: seq numbers compare only within one generation. */
export interface SharedRevision {
  generation: string | null;
  seq: number;
}

export interface SharedBundleState {
  /** The current shared revision and every bundle's entry, read atomically. */
  read(): Promise<SharedRevision & { entries: SharedBundleEntry[] }>;
  /** Only the shared revision (the reconciler's cheap check). */
  revision(): Promise<SharedRevision>;
  /** A stored artifact (parsed JSON), or undefined when it is gone. */
  artifact(digest: string): Promise<unknown>;
  /**
   * Make `artifact` the shared revision of `bundle`. `mode: "seed"` writes only when the shared state
   * has no entry for the bundle at all (a replica bringing its data directory's bundles to an empty
   * Redis). Returns the new seq, or the current one when nothing changed (same digest already shared,
   * or a seed that found an entry).
   */
  publish(input: { bundle: string; digest: string; version: string; artifactJson: string; by: string; allowDowngrade: boolean; mode: "replace" | "seed" }): Promise<SharedRevision & { changed: boolean }>;
  /** Record that `bundle` is removed everywhere. */
  remove(input: { bundle: string; by: string }): Promise<SharedRevision & { changed: boolean }>;
  /** Call `listener` with each notified seq (pub/sub); returns an unsubscribe. */
  onChange(listener: (seq: number) => void): Promise<() => Promise<void>>;
}

// KEYS: active hash, seq, new artifact, generation. ARGV: name, digest, entry JSON without seq (starts
// with "{"), artifact JSON, mode, channel, replaced-artifact ttl ms, artifact key prefix, a fresh
// generation id (used only when there is none). Returns { seq, changed, generation }.
const PUBLISH = defineScript(
  "bundle-publish",
  `
redis.call('SET', KEYS[4], ARGV[9], 'NX')
local generation = redis.call('GET', KEYS[4])
local current = redis.call('HGET', KEYS[1], ARGV[1])
local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
if current and ARGV[5] == 'seed' then return { seq, 0, generation } end
if current and not string.find(current, '"removed":true', 1, true) and string.find(current, '"digest":"' .. ARGV[2] .. '"', 1, true) then
  redis.call('SET', KEYS[3], ARGV[4])
  return { seq, 0, generation }
end
redis.call('SET', KEYS[3], ARGV[4])
if current then
  local old = string.match(current, '"digest":"([^"]+)"')
  if old and old ~= ARGV[2] then redis.call('PEXPIRE', ARGV[8] .. string.gsub(old, ':', '%%3A'), tonumber(ARGV[7])) end
end
seq = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], ARGV[1], '{"seq":' .. seq .. ',' .. string.sub(ARGV[3], 2))
redis.call('PUBLISH', ARGV[6], tostring(seq))
return { seq, 1, generation }
`,
);

// KEYS: active hash, seq, generation. ARGV: name, tombstone JSON without seq, channel, replaced-artifact
// ttl ms, artifact key prefix, a fresh generation id. Returns { seq, changed, generation }.
const REMOVE = defineScript(
  "bundle-remove",
  `
redis.call('SET', KEYS[3], ARGV[6], 'NX')
local generation = redis.call('GET', KEYS[3])
local current = redis.call('HGET', KEYS[1], ARGV[1])
local seq = tonumber(redis.call('GET', KEYS[2]) or '0')
if current and string.find(current, '"removed":true', 1, true) then return { seq, 0, generation } end
if current then
  local old = string.match(current, '"digest":"([^"]+)"')
  if old then redis.call('PEXPIRE', ARGV[5] .. string.gsub(old, ':', '%%3A'), tonumber(ARGV[4])) end
end
seq = redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[1], ARGV[1], '{"seq":' .. seq .. ',' .. string.sub(ARGV[2], 2))
redis.call('PUBLISH', ARGV[3], tostring(seq))
return { seq, 1, generation }
`,
);

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
      const [seqReply, generation, activeReply] = await connection.run("reading the shared bundle revisions", async (redis) => {
        const replies = await redis.multi().get(keys.bundleSeq).get(keys.bundleGeneration).hgetall(keys.bundleActive).exec();
        if (replies === null) throw new Error("the read transaction was aborted");
        for (const [err] of replies) if (err) throw err;
        return [replies[0]![1] as string | null, replies[1]![1] as string | null, replies[2]![1] as Record<string, string>];
      });
      const entries: SharedBundleEntry[] = [];
      for (const text of Object.values(activeReply)) {
        try {
          entries.push(JSON.parse(text) as SharedBundleEntry);
        } catch {
          // An entry this release cannot read is skipped (and stays for the release that wrote it).
        }
      }
      entries.sort((a, b) => a.seq - b.seq);
      return { generation, seq: Number(seqReply ?? 0), entries };
    },
    async revision() {
      const [seq, generation] = await connection.run("reading the shared bundle revision", (redis) => redis.mget(keys.bundleSeq, keys.bundleGeneration));
      return { generation: generation ?? null, seq: Number(seq ?? 0) };
    },
    async artifact(digest) {
      const text = await connection.run(`reading bundle artifact ${digest}`, (redis) => redis.get(keys.bundleArtifact(digest)));
      return text === null ? undefined : (JSON.parse(text) as unknown);
    },
    async publish(input) {
      const at = new Date().toISOString();
      const entry = JSON.stringify({ bundle: input.bundle, digest: input.digest, version: input.version, by: input.by, at, allow_downgrade: input.allowDowngrade });
      const reply = (await connection.eval(`publishing bundle '${input.bundle}' ${input.digest}`, PUBLISH, [keys.bundleActive, keys.bundleSeq, keys.bundleArtifact(input.digest), keys.bundleGeneration], [
        input.bundle, input.digest, entry, input.artifactJson, input.mode, keys.bundleChannel, REPLACED_ARTIFACT_TTL_MS, artifactPrefix, newInstanceId(),
      ])) as [number, number, string];
      return { seq: Number(reply[0]), changed: Number(reply[1]) === 1, generation: String(reply[2]) };
    },
    async remove(input) {
      const tombstone = JSON.stringify({ bundle: input.bundle, removed: true, by: input.by, at: new Date().toISOString() });
      const reply = (await connection.eval(`removing bundle '${input.bundle}'`, REMOVE, [keys.bundleActive, keys.bundleSeq, keys.bundleGeneration], [
        input.bundle, tombstone, keys.bundleChannel, REPLACED_ARTIFACT_TTL_MS, artifactPrefix, newInstanceId(),
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
