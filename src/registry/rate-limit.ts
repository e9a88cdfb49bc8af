import type { Clock } from "../observe/events.js";
import { DEFAULTS } from "../config/defaults.js";
import { VcpError } from "../errors.js";

export const DEFAULT_REGISTRATIONS_PER_MINUTE = DEFAULTS.limits.registrations_per_minute;
const WINDOW_MS = 60_000;

/**
 * The spacing of a `perMinute` GCRA, for every store that keeps one (this file's in-memory limiter,
 * store/rate-limit.ts's Redis script): one call advances a key's TAT by `intervalMs`; a call is
 * refused while the TAT would run more than `toleranceMs` (a full window minus one interval) ahead.
 */
export function gcraSpacing(perMinute: number): { intervalMs: number; toleranceMs: number } {
  const intervalMs = WINDOW_MS / perMinute;
  return { intervalMs, toleranceMs: WINDOW_MS - intervalMs };
}

/**
 * Whether a registry change by `principal` counts toward the limit (spec §8.2.5): the runtime itself
 * (`system`) and the embedding application (no principal) are not counted. One rule for every limiter.
 */
export function countsTowardRegistryLimit<P extends { role: string }>(principal: P | undefined): principal is P {
  return principal !== undefined && principal.role !== "system";
}

/** Verdict of one {@link RateLimiter.take}. */
export type RateDecision = { ok: true } | { ok: false; retryAfterMs: number };

/**
 * Per-key limiter for registry calls (spec §8.2.5).
 *
 * @example
 * ```ts
 * const limiter = createRateLimiter(30, systemClock);
 * const d = limiter.take("alice");
 * if (!d.ok) throw new VcpError("RATE_LIMITED", "...", { retry_after_ms: d.retryAfterMs });
 * ```
 */
export interface RateLimiter {
  /** Consume one unit for `key` if one is available. A refused call consumes nothing. */
  take(key: string): RateDecision;
}

/**
 * A token bucket of `perMinute` tokens refilled continuously, written as GCRA so each key costs one
 * number: its "theoretical arrival time" (TAT). One call advances TAT by `interval`; a call is refused
 * while TAT would run more than a full window (minus one interval) ahead of now.
 *
 * ```
 *   now ──────────── TAT ───────────────▶ time
 *        ≤ window - interval  → allowed, TAT += interval
 *        > window - interval  → refused, retry after the excess
 * ```
 *
 * Keys whose TAT is in the past hold a full bucket and are indistinguishable from absent keys, so
 * they are swept when the map grows; an attacker rotating principal ids cannot grow it without bound.
 *
 * @example
 * ```ts
 * const limiter = createRateLimiter(3, clock); // bursts of 3, then one every 20 s
 * ```
 */
export function createRateLimiter(perMinute: number, clock: Clock): RateLimiter {
  const { intervalMs: interval, toleranceMs: tolerance } = gcraSpacing(perMinute);
  const tat = new Map<string, number>();
  let sweepAt = 1024;

  return {
    take(key) {
      const now = clock.now();
      const start = Math.max(tat.get(key) ?? now, now);
      const ahead = start - now;
      if (ahead > tolerance) return { ok: false, retryAfterMs: Math.ceil(ahead - tolerance) };
      tat.set(key, start + interval);
      if (tat.size > sweepAt) {
        for (const [k, t] of tat) if (t <= now) tat.delete(k);
        sweepAt = Math.max(1024, tat.size * 2);
      }
      return { ok: true };
    },
  };
}

/**
 * The refusal of a registry change over the limit (spec §8.2.5), whichever limiter decided it: this
 * replica's (`createRateLimiter`) or the one shared by every replica (store/rate-limit.ts).
 */
export function registryRateLimited(principalId: string, perMinute: number, retryAfterMs: number, shared = false): VcpError {
  return new VcpError(
    "RATE_LIMITED",
    `hooks: principal "${principalId}" exceeded ${perMinute} registry changes per minute${shared ? " across all replicas" : ""} (spec §8.2.5); retry in ${retryAfterMs} ms`,
    { principal: principalId, limit: perMinute, retry_after_ms: retryAfterMs, ...(shared ? { scope: "all_replicas" } : {}) },
  );
}
