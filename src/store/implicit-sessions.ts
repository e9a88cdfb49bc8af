/**
 * Implicit profile sessions counted across replicas: the Redis adapter of the implicit session port
 * (src/pipeline/implicit-sessions.ts ImplicitSessionStore, whose doc states the rule). Each replica
 * keeps its own table of the sessions it serves (src/fire/implicit-sessions.ts); this keeps a
 * client's live ones in one sorted set, so `limits.sessions_per_client` holds for the deployment,
 * not once per replica:
 *
 * ```
 *  <prefix>:implicit:<owner>   zset member (implicitMember: JSON [profile, session id]) → expires at (ms)
 * ```
 * Expiry is read on Redis's clock (replicas' clocks may differ); the set itself expires with its last
 * member, so an owner who stops sending leaves nothing behind.
 */
import { NOTHING_TAKEN_OUT, type ImplicitAdmitted, type ImplicitSessionStore } from "../pipeline/implicit-sessions.js";
import { defineScript, type StoreConnection } from "./connection.js";

// The port's admit step. KEYS: the owner's set. ARGV: member, ttl ms, limit, now ms ('' = Redis TIME),
// then the caller's in-use members. → { evicted members, expired members }.
// (The set may hold more than the limit when a replica extended a session evicted meanwhile: the
// next admission of a new session evicts back down to it.)
const ADMIT = defineScript(
  "implicit-session-admit",
  `
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local member = ARGV[1]
local expires = now + tonumber(ARGV[2])
local current = redis.call('ZSCORE', KEYS[1], member)
local expired = {}
local evicted = {}
if not (current and tonumber(current) > now) then
  if current then redis.call('ZREM', KEYS[1], member) end
  expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now)
  if #expired > 0 then redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now) end
  local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3]) + 1
  if over > 0 then
    local busy = {}
    for i = 5, #ARGV do busy[ARGV[i]] = true end
    local order = {}
    local members = redis.call('ZRANGE', KEYS[1], 0, -1)
    for _, m in ipairs(members) do if not busy[m] then order[#order + 1] = m end end
    for _, m in ipairs(members) do if busy[m] then order[#order + 1] = m end end
    for i = 1, over do
      evicted[i] = order[i]
      redis.call('ZREM', KEYS[1], order[i])
    end
  end
end
redis.call('ZADD', KEYS[1], expires, member)
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], math.max(1, math.ceil(tonumber(last[2]) - now) + 1000))
return { evicted, expired }
`,
);

export interface RedisImplicitSessionStoreOptions {
  /** Read now (ms) from this clock instead of Redis's TIME: the contract test steps one clock for both adapters. */
  now?: () => number;
}

/**
 * @example
 * ```ts
 * const count = createRedisImplicitSessionStore(shared.connection);
 * await count.admit({ owner: "app", member: implicitMember("amplifier", "s1"), ttlMs: 86_400_000, limit: 100, inUse: new Set() }); // { evicted: [], expired: [] }
 * ```
 */
export function createRedisImplicitSessionStore(connection: StoreConnection, options: RedisImplicitSessionStoreOptions = {}): ImplicitSessionStore<false> {
  return {
    scope: "all_replicas",
    available: () => connection.connected(),
    async admit({ owner, member, ttlMs, limit, inUse }): Promise<ImplicitAdmitted> {
      const [evicted, expired] = (await connection.eval(`counting the implicit sessions of '${owner}'`, ADMIT, [connection.keys.custom("implicit", owner)], [
        member, Math.max(1, Math.floor(ttlMs)), limit, options.now?.() ?? "", ...inUse,
      ])) as [string[], string[]];
      return evicted.length === 0 && expired.length === 0 ? NOTHING_TAKEN_OUT : { evicted, expired };
    },
    async release(owner, member) {
      await connection.run(`releasing an implicit session of '${owner}'`, (redis) => redis.zrem(connection.keys.custom("implicit", owner), member));
    },
  };
}
