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
 * An error reply (OOM, READONLY, NOPERM, a script error) is Redis answering, not unreachability (it
 * is counted with the others in `vcp_store_command_errors_total{reason}`, connection.ts and
 * observe/metrics.ts). The reachability gauge lives here, with what it reads.
 */
import { Gauge, type Registry } from "prom-client";
import type { StoreFailure } from "./errors.js";

export interface StoreHealthStatus {
  /** How long Redis has not answered this replica (ms; 0 while it answers). */
  unreachable_ms: number;
  /** Past this, the replica is not ready (store.unreachable_after_ms; 0: never). */
  unreachable_after_ms: number;
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
  /** `vcp_store_unreachable` in a runtime's metrics registry. */
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
      if (kind === "reply") return;
      // A command answered after this one was sent proves Redis answered then: trouble starts later.
      troubleSince ??= Math.max(startedAt, lastAnswerAt);
    },
    lost() {
      troubleSince ??= now();
    },
    unreachable,
    status: () => ({ unreachable_ms: unreachableMs(), unreachable_after_ms: options.unreachableAfterMs }),
    registerMetrics(registry) {
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
