/*
 * Rate-limited keys shared by every replica: the Redis adapter of the rate limit port
 * (src/registry/rate-limit.ts RateLimitStore). The step is that file's `gcraStep`, run as one Lua
 * script on Redis's own clock, so N replicas together allow what one would, whatever their clocks
 * say. test/integration/scale-out/rate-limit-store.test.ts runs the same sequences on both adapters.
 */
import type { GcraLimit, RateDecision, RateLimitStore } from "../registry/index.js";
import { defineScript, type StoreConnection } from "./connection.js";

// gcraStep (registry/rate-limit.ts) in Lua. KEYS: the key's TAT. ARGV: interval ms, tolerance ms,
// now ms ('' = Redis TIME). Returns { 1, 0 } allowed, { 0, retry_after_ms } refused (a refused call
// consumes nothing). The TAT is written with 17 significant digits, so it reads back as the same
// double and both adapters compute alike; the key expires when its bucket is full again.
const TAKE = defineScript(
  "rate-take",
  `
local now = tonumber(ARGV[3])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
end
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(tat, now)
local ahead = start - now
if ahead > tolerance then return { 0, math.ceil(ahead - tolerance) } end
local nextTat = start + interval
redis.call('SET', KEYS[1], string.format('%.17g', nextTat), 'PX', math.ceil(nextTat - now) + 1)
return { 1, 0 }
`,
);

export interface RedisRateLimitStoreOptions {
  /** The limiter's name in the key (`<prefix>:rate:<scope>:<key>`), e.g. `registry`. */
  scope: string;
  /** What is limited, for the STORE_UNAVAILABLE message ("checking the <what> rate limit of '<key>'"); default `scope`. */
  what?: string;
  /** Read now (ms) from this clock instead of Redis's TIME: the contract test steps one clock for both adapters. */
  now?: () => number;
}

/**
 * @example
 * ```ts
 * const store = createRedisRateLimitStore(shared.connection, { scope: "registry", what: "registry change" });
 * await store.take("ops", gcraSpacing(30)); // { ok: true } or { ok: false, retryAfterMs }; STORE_UNAVAILABLE when Redis is
 * ```
 */
export function createRedisRateLimitStore(connection: StoreConnection, options: RedisRateLimitStoreOptions): RateLimitStore<false> {
  return {
    scope: "all_replicas",
    async take(key: string, limit: GcraLimit): Promise<RateDecision> {
      const now = options.now?.() ?? "";
      const reply = (await connection.eval(`checking the ${options.what ?? options.scope} rate limit of '${key}'`, TAKE, [connection.keys.rate(options.scope, key)], [limit.intervalMs, limit.toleranceMs, now])) as [number, number];
      return Number(reply[0]) === 1 ? { ok: true } : { ok: false, retryAfterMs: Number(reply[1]) };
    },
  };
}
