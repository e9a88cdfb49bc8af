/**
 * Registry changes per principal (spec §8.2.5): the rule, once, over one port.
 *
 *   what is counted   countsTowardRegistryLimit: a principal's change; not the runtime (`system`), not
 *                     the embedding application (no principal)
 *   how it is counted a GCRA of `limits.registrations_per_minute` (gcraSpacing, gcraStep)
 *   what a refusal says registryRateLimited: 429 RATE_LIMITED, the principal, the limit, retry_after_ms
 *   where it is kept  a RateLimitStore: this process's memory (rate-limit-local.ts) or Redis, shared
 *                     by every replica (store/rate-limit.ts, the same step as one Lua script)
 */
import { DEFAULTS } from "../config/defaults.js";
import { VcpError } from "../errors.js";
import type { Principal } from "./types.js";

export const DEFAULT_REGISTRATIONS_PER_MINUTE = DEFAULTS.limits.registrations_per_minute;
const WINDOW_MS = 60_000;

/** A GCRA's parameters: one call advances a key's TAT by `intervalMs`; refused while the TAT would run more than `toleranceMs` ahead. */
export interface GcraLimit {
  readonly intervalMs: number;
  readonly toleranceMs: number;
}

/**
 * The spacing of a `perMinute` GCRA: bursts of `perMinute`, then one every `60 s / perMinute`. The
 * tolerance is a full window minus one interval.
 */
export function gcraSpacing(perMinute: number): GcraLimit {
  const intervalMs = WINDOW_MS / perMinute;
  return { intervalMs, toleranceMs: WINDOW_MS - intervalMs };
}

/** Verdict of one take. */
export type RateDecision = { ok: true } | { ok: false; retryAfterMs: number };

/**
 * One GCRA step — a token bucket written so each key costs one number, its "theoretical arrival
 * time" (TAT). An absent key (or a TAT in the past) is a full bucket.
 *
 * ```
 *   now ──────────── TAT ───────────────▶ time
 *        ≤ tolerance  → allowed, TAT = max(TAT, now) + interval
 *        > tolerance  → refused, retry after the excess; the TAT is unchanged (a refusal consumes nothing)
 * ```
 * store/rate-limit.ts runs this same step in Lua (the contract test runs both on one sequence).
 */
export function gcraStep(tat: number | undefined, now: number, limit: GcraLimit): { decision: RateDecision; tat: number | undefined } {
  const start = Math.max(tat ?? now, now);
  const ahead = start - now;
  if (ahead > limit.toleranceMs) return { decision: { ok: false, retryAfterMs: Math.ceil(ahead - limit.toleranceMs) }, tat };
  return { decision: { ok: true }, tat: start + limit.intervalMs };
}

/**
 * Where rate-limited keys are kept (the port): one atomic {@link gcraStep} per `take`, on the store's
 * own clock. `Sync` is true for the in-memory adapter (the registry's synchronous calls take from it
 * without a round trip), false for Redis.
 */
export interface RateLimitStore<Sync extends boolean = boolean> {
  /** Who shares the counts: this replica, or every replica of the deployment. */
  readonly scope: "replica" | "all_replicas";
  /** Take one unit of `key` if one is available (a refused take consumes nothing). */
  take(key: string, limit: GcraLimit): Sync extends true ? RateDecision : Promise<RateDecision>;
}

/**
 * Whether a registry change by `principal` counts toward the limit (spec §8.2.5): the runtime itself
 * (`system`) and the embedding application (no principal) are not counted.
 */
export function countsTowardRegistryLimit<P extends { role: string }>(principal: P | undefined): principal is P {
  return principal !== undefined && principal.role !== "system";
}

/** The refusal of a registry change over the limit (spec §8.2.5), whichever store decided it. */
export function registryRateLimited(principalId: string, perMinute: number, retryAfterMs: number, scope: RateLimitStore["scope"] = "replica"): VcpError {
  const shared = scope === "all_replicas";
  return new VcpError(
    "RATE_LIMITED",
    `hooks: principal "${principalId}" exceeded ${perMinute} registry changes per minute${shared ? " across all replicas" : ""} (spec §8.2.5); retry in ${retryAfterMs} ms`,
    { principal: principalId, limit: perMinute, retry_after_ms: retryAfterMs, ...(shared ? { scope: "all_replicas" } : {}) },
  );
}

/** The registry limit over one store: `admit` throws RATE_LIMITED past it, before any work on the change. */
export interface RegistryRateLimit<Sync extends boolean> {
  admit(principal: Principal | undefined): Sync extends true ? void : Promise<void>;
}

/**
 * @example
 * ```ts
 * const limit = createRegistryRateLimit(createLocalRateLimitStore(clock), 30);
 * limit.admit({ id: "ops", role: "operator" }); // throws RATE_LIMITED on the 31st within a minute
 * const shared = createRegistryRateLimit(createRedisRateLimitStore(connection, { scope: "registry" }), 30);
 * await shared.admit(principal);
 * ```
 */
export function createRegistryRateLimit(store: RateLimitStore<true>, perMinute: number): RegistryRateLimit<true>;
export function createRegistryRateLimit(store: RateLimitStore<false>, perMinute: number): RegistryRateLimit<false>;
export function createRegistryRateLimit(store: RateLimitStore, perMinute: number): RegistryRateLimit<boolean> {
  const limit = gcraSpacing(perMinute);
  function settle(principalId: string, decision: RateDecision): void {
    if (!decision.ok) throw registryRateLimited(principalId, perMinute, decision.retryAfterMs, store.scope);
  }
  return {
    admit(principal) {
      if (!countsTowardRegistryLimit(principal)) return undefined as never;
      const decision = store.take(principal.id, limit);
      return (decision instanceof Promise ? decision.then((d) => settle(principal.id, d)) : settle(principal.id, decision)) as never;
    },
  };
}
