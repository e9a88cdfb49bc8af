/*
 * A rate limit shared by every replica: the registry's GCRA (src/registry/rate-limit.ts, one
 * "theoretical arrival time" per key) kept in Redis and advanced by one Lua script on Redis's own
 * clock, so N replicas together allow what one would, whatever their clocks say.
 */
import { gcraSpacing, type RateDecision } from "../registry/index.js";
import { defineScript, type StoreConnection } from "./connection.js";

// KEYS: the key's TAT. ARGV: interval ms, tolerance ms (window − interval). Returns { 1, 0 } allowed,
// { 0, retry_after_ms } refused (a refused call consumes nothing).
const TAKE = defineScript(
  "rate-take",
  `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local start = math.max(tat, now)
local ahead = start - now
if ahead > tolerance then return { 0, math.ceil(ahead - tolerance) } end
local nextTat = start + interval
redis.call('SET', KEYS[1], string.format('%.3f', nextTat), 'PX', math.ceil(nextTat - now) + 1)
return { 1, 0 }
`,
);

export interface SharedRateLimiter {
  /** Consume one unit for `key` across all replicas if one is available (STORE_UNAVAILABLE when Redis is). */
  take(key: string): Promise<RateDecision>;
}

/**
 * @example
 * ```ts
 * const limiter = createSharedRateLimiter(shared.connection, { scope: "registry", perMinute: 30 });
 * const d = await limiter.take("ops"); // { ok: true } or { ok: false, retryAfterMs }
 * ```
 */
export function createSharedRateLimiter(connection: StoreConnection, options: { scope: string; perMinute: number; what?: string }): SharedRateLimiter {
  const { intervalMs: interval, toleranceMs: tolerance } = gcraSpacing(options.perMinute);
  return {
    async take(key) {
      const reply = (await connection.eval(`checking the ${options.what ?? options.scope} rate limit of '${key}'`, TAKE, [connection.keys.rate(options.scope, key)], [interval, tolerance])) as [number, number];
      return Number(reply[0]) === 1 ? { ok: true } : { ok: false, retryAfterMs: Number(reply[1]) };
    },
  };
}
