/**
 * The decision-log sink: ships audit records to an HTTP receiver (an OpenTelemetry Collector's
 * `/v1/logs` with `format: otlp`, or anything that takes JSON lines), in order, in batches.
 *
 * Design (what OPA's decision-log plugin loses, this keeps):
 * - The spool is the audit log itself. The sink reads the durable, hash-chained file after the fact,
 *   so chains never wait for the receiver and a receiver outage loses nothing: the records stay in
 *   the log and the sink catches up when the receiver is back.
 * - A cursor file (`seq` and `hash` of the last record the receiver acknowledged with a 2xx) is
 *   written atomically after each acknowledged batch, so a restart resumes where shipping stopped.
 *   Delivery is at least once: a crash between the 2xx and the cursor write resends that batch
 *   (records carry `seq` and `hash`, so a receiver can drop repeats).
 * - The cursor is bound to the log it was written for: at start the record at the cursor's `seq`
 *   must carry the cursor's `hash` (a record's hash commits to every record before it through
 *   `prev`). A log moved aside and started afresh (the recovery from AUDIT_LOG_CORRUPT in docs/errors.md)
 *   has other records at those seqs, or none: shipping restarts at the new log's first record,
 *   with a warning, instead of silently skipping every new record up to the old seq.
 * - Any other answer (3xx, 4xx, 5xx, a hang past `timeoutMs`, a refused connection) is retried with
 *   exponential backoff up to `maxBackoffMs`, and the cursor does not move. Redirects are never
 *   followed: the batch and the configured headers (a receiver's API key) would go to whatever
 *   origin the `Location` names, and the batch would count as delivered.
 * - Memory is bounded: at most `4 × batchRecords` records are read ahead; beyond that the reader
 *   waits (logged once per stall) — nothing is dropped.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { open, rename } from "node:fs/promises";
import { dirname, join } from "node:path";
import { silentLogger, type Logger } from "../observe/events.js";
import { formatRecords, type ExportFormat } from "./export.js";
import { abortableSleep, followAuditRecords, readAuditRecords } from "./reader.js";
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

/** What a cursor file holds: the last acknowledged record's seq and hash (`hash` absent in cursors written before it was kept). */
export interface SinkCursor {
  seq: number;
  hash?: string;
}

/** The acknowledged seq kept in `file`; 0 when there is none yet. A damaged cursor is an error, not a silent restart. */
export function readSinkCursor(file: string): number {
  return readSinkCursorHead(file).seq;
}

/**
 * Where `vcp-hooks serve` keeps the sink's cursor: `sink.cursor` next to the audit log (the sink
 * writes it; audit retention reads it to know what was shipped).
 */
export function sinkCursorPath(auditPath: string): string {
  return join(dirname(auditPath), "sink.cursor");
}

/** The cursor kept in `file` (seq 0 when there is none yet); a damaged cursor is an error. */
export function readSinkCursorHead(file: string): SinkCursor {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { seq: 0 };
    throw err;
  }
  let parsed: { seq?: unknown; hash?: unknown } | undefined;
  try {
    parsed = JSON.parse(text) as { seq?: unknown; hash?: unknown };
  } catch {
    parsed = undefined;
  }
  const seq = parsed?.seq;
  const hash = parsed?.hash;
  if (!Number.isSafeInteger(seq) || (seq as number) < 0 || (hash !== undefined && typeof hash !== "string")) {
    throw new Error(`${file}: not a sink cursor ({"seq": <n>, "hash": "sha256:…"}); fix or delete it to resend from the start`);
  }
  return { seq: seq as number, ...(typeof hash === "string" ? { hash } : {}) };
}

/**
 * Where shipping resumes: the cursor's seq when the log at `path` still holds the record it was
 * written for, else 0 (the log's first record) with a warning. A log never shrinks and a record's
 * hash covers every record before it (`prev`), so a missing seq or another hash at that seq means
 * the log was replaced (moved aside and started again), not that records were shipped.
 */
async function resumeSeq(path: string, cursorFile: string, cursor: SinkCursor, logger: Logger): Promise<number> {
  if (cursor.seq === 0) return 0;
  let found: AuditRecord | undefined;
  let last = 0;
  for await (const record of readAuditRecords(path, { afterSeq: cursor.seq - 1 })) {
    if (record.seq === cursor.seq) found = record;
    last = record.seq;
    break;
  }
  if (found !== undefined && (cursor.hash === undefined || found.hash === cursor.hash)) return cursor.seq;
  // Rotated segments deleted by retention: the cursor's record is gone but the log goes on past it.
  if (found === undefined && last > cursor.seq) {
    logger.warn({ cursor_file: cursorFile, cursor_seq: cursor.seq, next_seq: last }, "audit sink: the record at the cursor is no longer in the log (rotations removed?); shipping resumes at the next record there is");
    return cursor.seq;
  }
  logger.warn(
    { cursor_file: cursorFile, cursor_seq: cursor.seq, cursor_hash: cursor.hash ?? null, log_hash: found?.hash ?? null },
    `audit sink: ${path} is not the log the cursor was written for (${found === undefined ? `it has no record ${cursor.seq}` : `its record ${cursor.seq} has another hash`}: moved aside and started again?); shipping restarts at its first record`,
  );
  return 0;
}

async function writeSinkCursor(file: string, seq: number, hash: string): Promise<void> {
  const tmp = `${file}.tmp`;
  const fh = await open(tmp, "w", 0o600);
  try {
    await fh.writeFile(`${JSON.stringify({ seq, hash, at: new Date().toISOString() })}\n`);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, file);
}

/** A 3xx from the receiver: not delivered (the redirect is not followed); the Location goes to the log. */
class RedirectRefused extends Error {
  constructor(readonly status: number, readonly location: string | null) {
    super(`receiver answered ${status} (a redirect${location !== null ? ` to ${location}` : ""}); redirects are not followed, so the records and headers never leave for another URL: set audit.sink.url to the final URL`);
  }
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
  // Read (and a damaged file refused) at once; checked against the log before the first read.
  const stored = readSinkCursorHead(options.cursorFile);
  let cursor = stored.seq;

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
    cursor = await resumeSeq(options.path, options.cursorFile, stored, logger);
    stats.cursor_seq = stats.read_seq = cursor;
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
      // SECURITY: never follow a redirect: it would carry the records and the headers (the
      // receiver's credentials) to whatever origin the Location names, and count as delivered.
      redirect: "manual",
    });
    // Drain the body so the connection can be reused; its content does not matter.
    await response.arrayBuffer().catch(() => undefined);
    if (response.status >= 300 && response.status < 400) {
      throw new RedirectRefused(response.status, response.headers.get("location"));
    }
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
        logger.warn({ sink: options.url, error: stats.last_error, retry_in_ms: backoff, cursor_seq: cursor, ...(err instanceof RedirectRefused ? { location: err.location } : {}) }, "audit sink: batch not delivered; will retry (cursor unchanged)");
        await sleep(backoff * (0.75 + Math.random() / 2));
        continue;
      }
      queue.splice(0, batch.length);
      const acknowledged = batch[batch.length - 1]!;
      cursor = acknowledged.seq;
      await writeSinkCursor(options.cursorFile, cursor, acknowledged.hash);
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
