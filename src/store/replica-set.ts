/**
 * The replica set, in each replica's own audit chain (issue 27): at start, and whenever its shared
 * store shows a replica it has not recorded yet, a replica appends a `replica_set` record naming every
 * replica it has seen under its store prefix (its heartbeat's peers: live or not, for a day). `audit
 * verify` over several logs then names a replica that a verified record names but whose log was not
 * given (audit/verify-set.ts) — a set verify can tell a log is missing, not only that the given ones
 * are intact.
 *
 * Read from the presence's last heartbeat (no round trip of its own), checked every heartbeat.
 */
import { REPLICA_SET_EVENT, type AuditRecordInput } from "../audit/index.js";
import type { Logger } from "../observe/events.js";

export interface ReplicaSetRecorderOptions {
  self: string;
  prefix: string;
  /** Replica ids seen in the shared store, as of the last heartbeat (empty before the first). */
  peers(): readonly string[];
  /** Appends to this replica's audit chain; resolves once durable. */
  append(record: AuditRecordInput): Promise<unknown>;
  intervalMs: number;
  logger: Logger;
}

export interface ReplicaSetRecorder {
  /** Record the set now if it holds a replica not recorded yet (also runs every `intervalMs`). */
  check(): Promise<void>;
  /** Stop, after a record being written is durable. */
  close(): Promise<void>;
}

/**
 * @example
 * ```ts
 * const recorder = startReplicaSetRecorder({ self: "web-1", prefix: "vcp", peers: () => presence.peers().map((p) => p.id),
 *   append: (r) => audit.writer.append(r), intervalMs: 1000, logger });
 * await recorder.close();
 * ```
 */
export function startReplicaSetRecorder(options: ReplicaSetRecorderOptions): ReplicaSetRecorder {
  const recorded = new Set<string>();
  let writing: Promise<void> | null = null;
  let closed = false;

  async function record(): Promise<void> {
    const seen = options.peers();
    // Before the first heartbeat nothing is known: recording only itself would say nothing.
    if (seen.length === 0 || seen.every((id) => recorded.has(id))) return;
    const replicas = [...new Set([options.self, ...recorded, ...seen])].sort();
    await options.append({ kind: "replica_set", event: REPLICA_SET_EVENT, details: { replicas, prefix: options.prefix } });
    for (const id of replicas) recorded.add(id);
  }

  function check(): Promise<void> {
    if (closed) return Promise.resolve();
    writing ??= record()
      .catch((err: unknown) => options.logger.error({ err: err instanceof Error ? err.message : String(err) }, "audit: the replica set could not be recorded; retrying at the next heartbeat"))
      .finally(() => (writing = null));
    return writing;
  }

  const timer = setInterval(() => void check(), options.intervalMs);
  timer.unref();
  void check();
  return {
    check,
    async close() {
      closed = true;
      clearInterval(timer);
      await writing;
    },
  };
}
