/**
 * Rate-limited keys kept in this process: the in-memory adapter of the rate limit port
 * (rate-limit.ts {@link RateLimitStore}), synchronous, on this process's clock.
 */
import type { Clock } from "../observe/events.js";
import { gcraStep, type RateLimitStore } from "./rate-limit.js";

/** Keys are swept (full buckets forgotten) when the map grows past this, then past twice what stayed. */
const FIRST_SWEEP = 1024;

/**
 * Keys whose TAT is in the past hold a full bucket and are indistinguishable from absent keys, so
 * they are swept when the map grows: an attacker rotating principal ids cannot grow it without bound.
 *
 * @example
 * ```ts
 * const store = createLocalRateLimitStore(clock);
 * store.take("alice", gcraSpacing(3)); // { ok: true }: bursts of 3, then one every 20 s
 * ```
 */
export function createLocalRateLimitStore(clock: Pick<Clock, "now">): RateLimitStore<true> {
  const tats = new Map<string, number>();
  let sweepAt = FIRST_SWEEP;
  return {
    scope: "replica",
    take(key, limit) {
      const now = clock.now();
      const step = gcraStep(tats.get(key), now, limit);
      if (!step.decision.ok) return step.decision;
      tats.set(key, step.tat!);
      if (tats.size > sweepAt) {
        for (const [k, t] of tats) if (t <= now) tats.delete(k);
        sweepAt = Math.max(FIRST_SWEEP, tats.size * 2);
      }
      return step.decision;
    },
  };
}
