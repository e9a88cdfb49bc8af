/*
 * Noticing that Redis lost data. Redis without persistence (or with its files lost) restarts empty;
 * one restored from an older copy (a backup, a failover to a Redis replica that was behind) goes
 * back in time. Either way every session, approval and session hook written since is gone, and the
 * shared bundle revision counter would start over or go back — so "revision 32" would name another
 * bundle than before, and the replicas would reconcile to older bundles. Two signs:
 *
 *   emptied   <prefix>:epoch — a random id written at the first start (the heartbeat writes it when
 *             absent) — is gone or another: the replica knew a different one.
 *   rewound   the shared bundle revision is below the highest this replica has read (bundle-sync.ts).
 *
 * A replica that sees either says so (an error log, `store.data_loss` in status,
 * vcp_store_data_loss_total{kind}); bundle-sync.ts then keeps the revisions it runs and writes them
 * back above the highest revision it has seen. What was only in Redis (sessions, approvals) cannot be
 * brought back: the alarm is what tells an operator why sessions answer 404.
 */
import { Counter, type Registry } from "prom-client";
import type { Logger } from "../observe/events.js";

export type DataLossKind = "emptied" | "rewound";

/** The last loss this replica noticed (`store.data_loss` in status). */
export interface DataLossEvent {
  kind: DataLossKind;
  detected_at: string;
  message: string;
}

export interface DataLossWatch {
  /**
   * The store's epoch as just read (null: the key is absent). True when it shows a loss: this replica
   * knew another epoch. The first epoch read is simply learnt.
   */
  epochSeen(epoch: string | null): boolean;
  /** The shared revision read (`found`) was below the highest read (`highest`): Redis went back (`by`: the replica that saw it, when another). */
  rewound(highest: number, found: number, by?: string): void;
  /** The last loss noticed since this process started, or null. */
  last(): DataLossEvent | null;
  registerMetrics(registry: Registry): void;
}

/** The epoch is gone: a later read adopts the new one without a second alarm for the same loss. */
const GONE = Symbol("gone");

/**
 * @example
 * ```ts
 * const watch = createDataLossWatch({ logger, epochKey: keys.epoch });
 * watch.epochSeen("3f0c…");   // false: learnt
 * watch.epochSeen(null);      // true: logged, counted, in status
 * ```
 */
export function createDataLossWatch(options: { logger: Logger; epochKey: string }): DataLossWatch {
  const counts: Record<DataLossKind, number> = { emptied: 0, rewound: 0 };
  let known: string | typeof GONE | undefined;
  let last: DataLossEvent | null = null;

  function alarm(kind: DataLossKind, message: string, fields: Record<string, unknown>): void {
    counts[kind]++;
    last = { kind, detected_at: new Date().toISOString(), message };
    options.logger.error({ ...fields, data_loss: kind }, `store: Redis lost data: ${message}`);
  }

  return {
    epochSeen(epoch) {
      if (known === undefined) {
        if (epoch !== null) known = epoch;
        return false;
      }
      if (epoch === known) return false;
      if (known === GONE) {
        if (epoch !== null) known = epoch;
        return false;
      }
      const previous = known;
      known = epoch ?? GONE;
      alarm(
        "emptied",
        `its epoch key ${options.epochKey} (written at the first start) ${epoch === null ? "is gone" : `changed from ${previous} to ${epoch}`}: Redis restarted without its data. Sessions, approvals and session hooks opened before are gone (their calls answer 404); bundles are shared again from what the replicas run, above the highest revision seen`,
        { previous_epoch: previous, epoch },
      );
      return true;
    },
    rewound(highest, found, by) {
      alarm(
        "rewound",
        `the shared bundle revision went back from ${highest} to ${found}${by === undefined ? "" : ` (seen by replica '${by}')`} (Redis restored from an older copy, or a failover to a Redis replica that was behind). The replicas keep the revisions they run and write them back above revision ${highest}; sessions and approvals changed since that copy are lost`,
        { highest_revision: highest, found_revision: found, ...(by !== undefined ? { seen_by: by } : {}) },
      );
    },
    last: () => last,
    registerMetrics(registry) {
      let counted: Record<DataLossKind, number> = { emptied: 0, rewound: 0 };
      new Counter({
        name: "vcp_store_data_loss_total",
        help: "Times this replica noticed Redis lost data: emptied (the store's epoch key gone: a restart without persistence) or rewound (the shared bundle revision went back: an older copy restored). Sessions and approvals written before are gone; bundles are re-shared.",
        labelNames: ["kind"],
        registers: [registry],
        collect() {
          for (const kind of ["emptied", "rewound"] as const) this.inc({ kind }, Math.max(0, counts[kind] - counted[kind]));
          counted = { ...counts };
        },
      });
    },
  };
}
