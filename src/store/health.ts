/*
 * Is Redis answering this replica? Judged from the commands themselves (every `run` of
 * connection.ts reports its outcome), not from the socket: a replica cut off by a partition keeps its
 * TCP connection "up" while every command times out. The heartbeat (store.heartbeat_ms) keeps a
 * command going when nothing else does, so the answer stays current on an idle replica.
 *
 *   trouble since = the first timeout or lost connection after the last answer (cleared by an answer)
 *   unreachable_ms = now − trouble since        (0 while Redis answers)
 *   unreachable    = unreachable_ms ≥ store.unreachable_after_ms   ─► /readyz 503 store_unreachable,
 *                                                                     status connected: false,
 *                                                                     vcp_store_unreachable 1
 *
 * An error reply (OOM, READONLY, NOPERM, a script error) is Redis answering: counted, not
 * unreachability. The metrics live here, with what they count.
 */
import { Counter, Gauge, type Registry } from "prom-client";
import type { StoreFailure } from "./errors.js";

const FAILURES: readonly StoreFailure[] = ["timeout", "reply", "unreachable"];

export interface StoreHealthStatus {
  /** How long Redis has not answered this replica (ms; 0 while it answers). */
  unreachable_ms: number;
  /** Past this, the replica is not ready (store.unreachable_after_ms; 0: never). */
  unreachable_after_ms: number;
  /** Commands that failed since start, by kind (store/errors.ts): each was answered STORE_UNAVAILABLE. */
  command_errors: Record<StoreFailure, number>;
}

export interface StoreHealth {
  /** A command got its answer. */
  answered(): void;
  /** A command failed; `startedAt` is when it was sent (performance.now()). */
  failed(kind: StoreFailure, startedAt: number): void;
  /** The connection closed (Redis stopped, the network dropped it): trouble from now, until an answer. */
  lost(): void;
  /** Redis has not answered for store.unreachable_after_ms (never with 0). */
  unreachable(): boolean;
  status(): StoreHealthStatus;
  /** `vcp_store_command_errors_total{kind}` and `vcp_store_unreachable` in a runtime's metrics registry. */
  registerMetrics(registry: Registry): void;
}

/**
 * @example
 * ```ts
 * const health = createStoreHealth({ unreachableAfterMs: 5000 });
 * health.failed("timeout", performance.now() - 2000);
 * health.unreachable(); // false until 5 s have passed without an answer
 * ```
 */
export function createStoreHealth(options: { unreachableAfterMs: number; now?: () => number }): StoreHealth {
  const now = options.now ?? (() => performance.now());
  const errors: Record<StoreFailure, number> = { timeout: 0, reply: 0, unreachable: 0 };
  let lastAnswerAt = now();
  // Until the first answer (read at connection): a replica started with Redis down is not ready for long.
  let troubleSince: number | undefined = lastAnswerAt;

  const unreachableMs = (): number => (troubleSince === undefined ? 0 : Math.max(0, Math.round(now() - troubleSince)));
  const unreachable = (): boolean => options.unreachableAfterMs > 0 && unreachableMs() >= options.unreachableAfterMs;

  return {
    answered() {
      lastAnswerAt = now();
      troubleSince = undefined;
    },
    failed(kind, startedAt) {
      errors[kind]++;
      if (kind === "reply") return;
      // A command answered after this one was sent proves Redis answered then: trouble starts later.
      troubleSince ??= Math.max(startedAt, lastAnswerAt);
    },
    lost() {
      troubleSince ??= now();
    },
    unreachable,
    status: () => ({ unreachable_ms: unreachableMs(), unreachable_after_ms: options.unreachableAfterMs, command_errors: { ...errors } }),
    registerMetrics(registry) {
      let counted: Record<StoreFailure, number> = { timeout: 0, reply: 0, unreachable: 0 };
      new Counter({
        name: "vcp_store_command_errors_total",
        help: "Redis commands that failed, by kind: timeout (no answer within store.command_timeout_ms), reply (Redis answered an error: OOM, READONLY, NOPERM…), unreachable (no connection). Each was answered STORE_UNAVAILABLE.",
        labelNames: ["kind"],
        registers: [registry],
        collect() {
          // Every kind from the first scrape on (0 until it happens), so rate() has a series to alert on.
          for (const kind of FAILURES) this.inc({ kind }, Math.max(0, errors[kind] - counted[kind]));
          counted = { ...errors };
        },
      });
      new Gauge({
        name: "vcp_store_unreachable",
        help: "1 while Redis has not answered this replica for store.unreachable_after_ms (it is then not ready: /readyz 503 store_unreachable), else 0.",
        registers: [registry],
        collect() {
          this.set(unreachable() ? 1 : 0);
        },
      });
    },
  };
}
