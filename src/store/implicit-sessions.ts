/**
 * Implicit profile sessions counted across replicas (PROFILES §8.3, issue 18). A profile event that
 * names a session (`session_id`) opens an implicit session of its sender, which expires after the
 * profile's idle TTL; `limits.sessions_per_client` caps how many one client has at a time. Each
 * replica keeps its own table (src/fire/profile.ts); this keeps the client's live ones in one
 * sorted set, so the cap holds for the deployment, not once per replica:
 *
 * ```
 *  <prefix>:implicit:<owner>   zset JSON [profile, session id] → expires at (ms, Redis TIME + the profile's TTL)
 * ```
 * A session count never refuses an event (issue 24): a new session past the cap evicts the client's
 * sessions with the earliest expiry — the least recently used, as each use moves a session's expiry
 * to now + its profile's TTL. Expiry is read on Redis's clock (replicas' clocks may differ); the set
 * itself expires with its last member, so an owner who stops sending leaves nothing behind.
 */
import { defineScript, type StoreConnection } from "./connection.js";

// KEYS: the owner's set. ARGV: member, ttl ms, limit. Admits (or extends) the member; a member not in
// the set makes room first. → how many of the owner's other sessions it evicted (0 most of the time).
// (The set may hold more than the limit when a replica extended a session evicted meanwhile: the
// next admission evicts back down to it.)
const TOUCH = defineScript(
  "implicit-session-touch",
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local evicted = 0
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[3]) + 1
  if over > 0 then
    redis.call('ZPOPMIN', KEYS[1], over)
    evicted = over
  end
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], math.max(1, tonumber(last[2]) - now + 1000))
return evicted
`,
);

export interface ImplicitSessionTouch {
  owner: string;
  profile: string;
  session: string;
  ttlMs: number;
  /** `limits.sessions_per_client`. */
  limit: number;
}

export interface SharedImplicitSessions {
  /** False while the store is disconnected: the caller falls back to its own count at once. */
  available(): boolean;
  /** Admit (or extend) one implicit session in one script, evicting past the cap; STORE_UNAVAILABLE when Redis does not answer. */
  touch(input: ImplicitSessionTouch): Promise<{ evicted: number }>;
}

/**
 * @example
 * ```ts
 * const implicit = createSharedImplicitSessions(shared.connection);
 * await implicit.touch({ owner: "app", profile: "amplifier", session: "s1", ttlMs: 86_400_000, limit: 100 }); // { evicted: 0 }
 * ```
 */
export function createSharedImplicitSessions(connection: StoreConnection): SharedImplicitSessions {
  return {
    available: () => connection.connected(),
    async touch(input) {
      const evicted = Number(await connection.eval(`counting the implicit ${input.profile} sessions of '${input.owner}'`, TOUCH, [connection.keys.custom("implicit", input.owner)], [
        JSON.stringify([input.profile, input.session]), Math.max(1, Math.floor(input.ttlMs)), input.limit,
      ]));
      return { evicted };
    },
  };
}
