/**
 * The decision-log sink: ships audit records to an HTTP receiver (an OpenTelemetry Collector's
 * `/v1/logs` with `format: otlp`, or anything that takes JSON lines), in order, in batches.
 *
 * Design (what OPA's decision-log plugin loses, this keeps):
 * - The spool is the audit log itself. The sink reads the durable, hash-chained file after the fact,
 *   so chains never wait for the receiver and a receiver outage loses nothing: the records stay in
 *   the log and the sink catches up when the receiver is back.
 * - A cursor file (`seq` of the last record the receiver acknowledged with a 2xx) is written
 *   atomically after each acknowledged batch, so a restart resumes where shipping stopped. Delivery is
 *   at least once: a crash between the 2xx and the cursor write resends that batch (records carry
 *   `seq` and `hash`, so a receiver can drop repeats).
 * - Any other answer (4xx, 5xx, a hang past `timeoutMs`, a refused connection) is retried with
 *   exponential backoff up to `maxBackoffMs`, and the cursor does not move.
 * - Memory is bounded: at most `4 × batchRecords` records are read ahead; beyond that the reader
 *   waits (logged once per stall) — nothing is dropped.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { silentLogger, type Logger } from "../observe/events.js";
import { formatRecords, type ExportFormat } from "./export.js";
import { abortableSleep, followAuditRecords } from "./reader.js";
import type { AuditRecord } from "./record.js";
import { DEFAULTS } from "../config/defaults.js";
import { messageWithCauses } from "../errors.js";

export interface AuditSinkOptions {
  /** The audit log (`audit.path`); rotations are followed. */
  path: string;
  /** Receiver URL (http or https). */
  url: string;
  /** `jsonl` (application/x-ndjson, one stored record per line) or `otlp` (OTLP/JSON logs). Default jsonl. */
  format?: ExportFormat;
  /** Where the acknowledged seq is kept. */
  cursorFile: string;
  batchRecords?: number;
  /** How often the log is polled, and the longest a partial batch waits. Default 1000 ms. */
  intervalMs?: number;
  /** A request without an answer within this is a failure. Default 10 s. */
  timeoutMs?: number;
  maxBackoffMs?: number;
  /** Extra request headers (e.g. the receiver's Authorization). Never logged. */
  headers?: Readonly<Record<string, string>>;
  logger?: Logger;
}

export interface AuditSinkStats {
  url: string;
  format: ExportFormat;
  /** seq of the last record the receiver acknowledged. */
  cursor_seq: number;
  /** Highest seq read from the log; `lag_records` = this − cursor. */
  read_seq: number;
  lag_records: number;
  /** Age in seconds of the oldest record read and not yet acknowledged (0 when caught up). */
  lag_seconds: number;
  shipped_records: number;
  batches: number;
  failures: number;
  consecutive_failures: number;
  last_error: string | null;
  last_success_at: string | null;
  /** The read-ahead window is full and the reader is waiting for the receiver. */
  stalled: boolean;
}

export interface AuditSink {
  stats(): AuditSinkStats;
  /** Stop shipping (an in-flight request is abandoned; its batch is resent next time). */
  close(): Promise<void>;
}

/** The acknowledged seq kept in `file`; 0 when there is none yet. A damaged cursor is an error, not a silent restart. */
export function readSinkCursor(file: string): number {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return 0;
    throw err;
  }
  let seq: unknown;
  try {
    seq = (JSON.parse(text) as { seq?: unknown }).seq;
  } catch {
    seq = undefined;
  }
  if (!Number.isSafeInteger(seq) || (seq as number) < 0) throw new Error(`${file}: not a sink cursor ({"seq": <n>}); fix or delete it to resend from the start`);
  return seq as number;
}

async function writeSinkCursor(file: string, seq: number): Promise<void> {
  const tmp = `${file}.tmp`;
  const fh = await open(tmp, "w", 0o600);
  try {
    await fh.writeFile(`${JSON.stringify({ seq, at: new Date().toISOString() })}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
}

/**
 * Start shipping the audit log at `options.path` to `options.url`.
 *
 * @example
 * ```ts
 * const sink = startAuditSink({ path: ".vcp/audit/audit.jsonl", url: "http://otel:4318/v1/logs", format: "otlp", cursorFile: ".vcp/audit/sink.cursor" });
 * // … sink.stats().lag_records …
 * await sink.close();
 * ```
 */
export function startAuditSink(options: AuditSinkOptions): AuditSink {
  const format = options.format ?? "jsonl";
  const batchRecords = options.batchRecords ?? DEFAULTS.audit.sink.batch_records;
  const intervalMs = options.intervalMs ?? DEFAULTS.audit.sink.interval_ms;
  const timeoutMs = options.timeoutMs ?? DEFAULTS.audit.sink.timeout_ms;
  const maxBackoffMs = options.maxBackoffMs ?? DEFAULTS.audit.sink.max_backoff_ms;
  const logger = options.logger ?? silentLogger;
  const readAhead = batchRecords * 4;
  mkdirSync(dirname(options.cursorFile), { recursive: true });
  let cursor = readSinkCursor(options.cursorFile);

  const stop = new AbortController();
  const queue: AuditRecord[] = [];
  let wakeConsumer: (() => void) | null = null;
  let wakeProducer: (() => void) | null = null;
  const stats: AuditSinkStats = {
    url: options.url, format, cursor_seq: cursor, read_seq: cursor, lag_records: 0, lag_seconds: 0, shipped_records: 0, batches: 0,
    failures: 0, consecutive_failures: 0, last_error: null, last_success_at: null, stalled: false,
  };
  const sleep = (ms: number): Promise<void> => abortableSleep(ms, stop.signal);

  async function produce(): Promise<void> {
    for await (const record of followAuditRecords(options.path, { afterSeq: cursor, pollMs: intervalMs, signal: stop.signal })) {
      while (queue.length >= readAhead && !stop.signal.aborted) {
        if (!stats.stalled) logger.warn({ sink: options.url, queued: queue.length, cursor_seq: cursor }, "audit sink: the receiver is behind; reading paused (nothing is dropped: records stay in the audit log)");
        stats.stalled = true;
        await new Promise<void>((resolve) => (wakeProducer = resolve));
      }
      stats.stalled = false;
      queue.push(record);
      stats.read_seq = record.seq;
      stats.lag_records = stats.read_seq - cursor;
      wakeConsumer?.();
    }
  }

  async function ship(batch: AuditRecord[]): Promise<void> {
    const response = await fetch(options.url, {
      method: "POST",
      headers: { "content-type": format === "otlp" ? "application/json" : "application/x-ndjson", ...(options.headers ?? {}) },
      body: formatRecords(batch, format),
      signal: AbortSignal.any([stop.signal, AbortSignal.timeout(timeoutMs)]),
    });
    // Drain the body so the connection can be reused; its content does not matter.
    await response.arrayBuffer().catch(() => undefined);
    if (!response.ok) throw new Error(`receiver answered ${response.status}`);
  }

  async function consume(): Promise<void> {
    while (!stop.signal.aborted) {
      if (queue.length === 0) {
        // close() wakes this through wakeConsumer (no listener per wait on the long-lived signal).
        await new Promise<void>((resolve) => (wakeConsumer = resolve));
        wakeConsumer = null;
        continue;
      }
      // A partial batch waits one interval for company, unless it is already full.
      if (queue.length < batchRecords) await sleep(intervalMs);
      const batch = queue.slice(0, batchRecords);
      try {
        await ship(batch);
      } catch (err) {
        if (stop.signal.aborted) return;
        stats.failures++;
        stats.consecutive_failures++;
        stats.last_error = err instanceof Error && err.name === "TimeoutError" ? `no answer within ${timeoutMs} ms` : messageWithCauses(err); // undici: "fetch failed: getaddrinfo ENOTFOUND …"
        const backoff = Math.min(maxBackoffMs, 250 * 2 ** Math.min(stats.consecutive_failures, 20));
        logger.warn({ sink: options.url, error: stats.last_error, retry_in_ms: backoff, cursor_seq: cursor }, "audit sink: batch not delivered; will retry (cursor unchanged)");
        await sleep(backoff * (0.75 + Math.random() / 2));
        continue;
      }
      queue.splice(0, batch.length);
      cursor = batch[batch.length - 1]!.seq;
      await writeSinkCursor(options.cursorFile, cursor);
      stats.cursor_seq = cursor;
      stats.lag_records = stats.read_seq - cursor;
      stats.shipped_records += batch.length;
      stats.batches++;
      stats.consecutive_failures = 0;
      stats.last_success_at = new Date().toISOString();
      wakeProducer?.();
      wakeProducer = null;
    }
  }

  const running = Promise.all([
    produce().catch((err: unknown) => logger.error({ err, sink: options.url }, "audit sink: cannot read the audit log; shipping stopped")),
    consume().catch((err: unknown) => logger.error({ err, sink: options.url }, "audit sink: shipping stopped")),
  ]);

  return {
    stats: () => {
      // The queue starts at the record after the cursor: its timestamp is how far the receiver is behind.
      const oldest = queue[0] === undefined ? Number.NaN : Date.parse(queue[0].ts);
      return { ...stats, lag_seconds: Number.isFinite(oldest) ? Math.max(0, (Date.now() - oldest) / 1000) : 0 };
    },
    async close() {
      stop.abort();
      wakeProducer?.();
      wakeConsumer?.();
      await running;
    },
  };
}
