/*
 * What time it is in Redis, as far as this replica can tell without asking: a lower bound on Redis's
 * `TIME` at any moment of this process's monotonic clock, learnt from answers that carried `TIME`.
 *
 *   sent ──────────── Redis read TIME = r ──────────── received        (this process's performance.now())
 *   so at local time L:   r + (L − received)  ≤  Redis time  ≤  r + (L − sent)
 *
 * A script given "not after" = the lower bound at the moment this replica stops waiting (send time +
 * command timeout), less a margin, refuses to run once that moment has passed in Redis: whatever
 * reaches Redis after the replica answered 503 does nothing. The bound is only ever too early, never
 * too late — so a script that arrives in time may be refused near the end of its window (the caller
 * then retries with a fresh bound: the refusal carries Redis's time), but a late one is never run.
 *
 * Redis's TIME is its wall clock and may be stepped: an observation whose upper bound is below the
 * current estimate proves the clock went back, and the estimate starts again from it. Replica clocks
 * never enter: only Redis's, and this process's monotonic one.
 */

export interface RedisClock {
  /** One answer that carried Redis TIME `redisMs`, for a command sent and answered at these `performance.now()` instants. */
  observe(redisMs: number, sentAt: number, receivedAt: number): void;
  /** A lower bound on Redis's TIME (ms) at local instant `at` (default now); undefined before any observation. */
  lowerBound(at?: number): number | undefined;
}

/**
 * @example
 * ```ts
 * const clock = createRedisClock();
 * const sent = performance.now();
 * const [s, us] = await redis.time();
 * clock.observe(Number(s) * 1000 + Math.floor(Number(us) / 1000), sent, performance.now());
 * clock.lowerBound(); // ≤ Redis's TIME now
 * ```
 */
export function createRedisClock(): RedisClock {
  /** Redis time minus local time, a lower bound (the best one seen since the clock last went back). */
  let offset: number | undefined;
  return {
    observe(redisMs, sentAt, receivedAt) {
      if (!Number.isFinite(redisMs)) return;
      const lower = redisMs - receivedAt;
      const upper = redisMs - sentAt;
      // The best lower bound wins; one that contradicts this answer's upper bound is stale (TIME stepped back).
      offset = offset === undefined || upper < offset ? lower : Math.max(offset, lower);
    },
    lowerBound(at = performance.now()) {
      return offset === undefined ? undefined : Math.floor(offset + at);
    },
  };
}
