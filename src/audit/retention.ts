/**
 * Audit retention (issue 27): deletes old rotated segments so the log's disk stays bounded, and never
 * deletes a record the decision-log sink (./sink.ts) has not shipped.
 *
 *   audit.jsonl.000001   seq    1 …  812   ┐ past a limit and shipped: deleted, once a `retention`
 *   audit.jsonl.000002   seq  813 … 1630   ┘ record naming each one's last seq and hash is durable
 *   audit.jsonl.000003   seq 1631 … 2440     past a limit, not shipped yet: held (status, metrics)
 *   audit.jsonl          seq 2441 …          the live file: never deleted
 *
 * - Limits, in any combination: `maxSegments` rotated segments, `maxBytes` of the whole log (rotated
 *   segments and the live file), `maxAgeMs` since a segment's newest record. A segment goes when any
 *   limit wants it gone, always oldest first, so what is kept is an unbroken tail of the chain.
 * - Shipped only: a segment is deleted only when its last seq is at or before the sink's cursor AND the
 *   cursor is this log's (the record at the cursor's seq carries the cursor's hash): a cursor left
 *   behind by a log moved aside and started again counts for nothing. `requireShipped: false` (no sink:
 *   the operator's explicit choice) deletes by the limits alone.
 * - Verifiable: before anything is deleted, a `retention` record naming each segment (file, last seq,
 *   last hash, newest `ts`, bytes) is appended to the chain and durable. `audit verify` (./verify.ts)
 *   then accepts a log starting at seq N only if a verified retention record names seq N−1 with the
 *   hash record N's `prev` carries: the kept chain is still checked end to end, and a segment deleted
 *   by hand (or one more than retention recorded) still fails. A crash between the record and the
 *   deletions leaves the files in place, and the next run deletes them (and records them again).
 * - Runs at start, after each rotation (AuditWriterOptions.onRotate) and every `intervalMs` (age limits
 *   and a sink catching up need no rotation); never two at once.
 */
import { stat, unlink } from "node:fs/promises";
import { basename, dirname } from "node:path";
import { VcpError } from "../errors.js";
import { silentLogger, type Logger } from "../observe/events.js";
import { listSegments, readLines, syncDir } from "./files.js";
import { recordHash, RETENTION_EVENT } from "./record.js";
import { readSinkCursorHead } from "./sink.js";
import { readTail, type AuditWriter } from "./writer.js";

/** Which limits apply; at least one of the three. */
export interface AuditRetentionPolicy {
  /** Keep at most this many rotated segments (the live file is not counted). */
  maxSegments?: number;
  /** Keep the log (rotated segments plus the live file) at most this many bytes, by deleting segments. */
  maxBytes?: number;
  /** Delete a rotated segment once its newest record is older than this. */
  maxAgeMs?: number;
  /**
   * Delete only what the sink has shipped (default true; then `sinkCursorFile` is required). `false`:
   * delete by the limits alone — the records of a deleted segment exist nowhere else.
   */
  requireShipped?: boolean;
}

export interface AuditRetentionOptions extends AuditRetentionPolicy {
  /** The audit log (`audit.path`). */
  path: string;
  /** The log's writer: the retention record goes into its chain before any file is deleted. */
  writer: Pick<AuditWriter, "append">;
  /** The sink's cursor file (./sink.ts sinkCursorPath): what was shipped. */
  sinkCursorFile?: string;
  /** How often retention runs besides at start and after each rotation. Default 60 s. */
  intervalMs?: number;
  /** Wall clock (tests); default Date.now. */
  now?: () => number;
  logger?: Logger;
}

/** `GET /v1/status` → `audit.retention`, and the `vcp_audit_retention_*` metrics. As of the last run. */
export interface AuditRetentionStats {
  max_segments: number | null;
  max_bytes: number | null;
  max_age_s: number | null;
  require_shipped: boolean;
  /** Rotated segments on disk. */
  segments: number;
  /** Bytes of the log on disk: rotated segments plus the live file. */
  bytes: number;
  /** Seconds since the newest record of the oldest rotated segment (what `max_age` compares); 0 without segments. */
  oldest_segment_age_seconds: number;
  /** A limit wants segments deleted that are not shipped yet: they are kept (`held_*`). */
  blocked: boolean;
  held_segments: number;
  held_bytes: number;
  /** Why segments are held, as a sentence; null when nothing is. */
  blocked_reason: string | null;
  /** Deleted since start. */
  deleted_segments: number;
  deleted_bytes: number;
  runs: number;
  last_run_at: string | null;
  /** Runs that failed (nothing is deleted by a failed run). */
  errors: number;
  last_error: string | null;
}

export interface AuditRetention {
  /** As of the last run. */
  stats(): AuditRetentionStats;
  /** Run now (after the run in progress, if any); resolves with the stats of that run. */
  run(): Promise<AuditRetentionStats>;
  /** Run soon (after a rotation); runs asked for meanwhile are one run. */
  kick(): void;
  /** Stop the timer and wait for the run in progress. */
  close(): Promise<void>;
}

/** What a `retention` record says of each deleted segment (audit verify reads `last_seq` and `last_hash`). */
export interface RetentionRecordSegment {
  file: string;
  last_seq: number;
  last_hash: string;
  last_ts: string;
  bytes: number;
}

/** Segments per retention record at most: its details stay far below the writer's 64 KiB field cap. */
const SEGMENTS_PER_RECORD = 100;
const DEFAULT_INTERVAL_MS = 60_000;

interface SegmentInfo {
  path: string;
  ino: number;
  bytes: number;
  lastSeq: number;
  lastHash: string;
  lastTs: string;
}

type Limit = "max_segments" | "max_bytes" | "max_age";

/**
 * Start applying `options`' limits to the log at `options.path` (first run at once).
 *
 * @example
 * ```ts
 * const retention = startAuditRetention({ path: ".vcp/audit/audit.jsonl", writer, maxBytes: 1 << 30,
 *   sinkCursorFile: sinkCursorPath(".vcp/audit/audit.jsonl") });
 * retention.stats().held_bytes; // bytes a limit wants gone that the sink has not shipped
 * await retention.close();
 * ```
 */
export function startAuditRetention(options: AuditRetentionOptions): AuditRetention {
  const policy = checkPolicy(options);
  const { path, writer } = options;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? silentLogger;
  const intervalMs = options.intervalMs ?? DEFAULT_INTERVAL_MS;
  /** Rotated segments never change: their last record is read once (keyed by path, checked by inode and size). */
  const infoCache = new Map<string, SegmentInfo>();
  /** The last sink cursor found to be this log's: not searched for again until it moves. */
  let boundCursor: { seq: number; hash: string } | null = null;
  let stats: AuditRetentionStats = {
    max_segments: policy.maxSegments ?? null,
    max_bytes: policy.maxBytes ?? null,
    max_age_s: policy.maxAgeMs !== undefined ? policy.maxAgeMs / 1000 : null,
    require_shipped: policy.requireShipped,
    segments: 0, bytes: 0, oldest_segment_age_seconds: 0,
    blocked: false, held_segments: 0, held_bytes: 0, blocked_reason: null,
    deleted_segments: 0, deleted_bytes: 0, runs: 0, last_run_at: null, errors: 0, last_error: null,
  };
  let running: Promise<void> | null = null;
  let again = false;
  let closed = false;

  async function segmentInfo(file: string): Promise<SegmentInfo> {
    const { ino, size } = await stat(file);
    const cached = infoCache.get(file);
    if (cached !== undefined && cached.ino === ino && cached.bytes === size) return cached;
    const tail = await readTail(file);
    if (tail?.lastLine === undefined || tail.completeEnd !== tail.size) throw new Error(`${file}: a rotated segment without a complete last record; retention stops (run 'vcp-hooks audit verify ${path}')`);
    let record: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(tail.lastLine);
      record = parsed !== null && typeof parsed === "object" ? (parsed as Record<string, unknown>) : {};
    } catch {
      record = {};
    }
    if (!Number.isSafeInteger(record.seq) || typeof record.hash !== "string" || typeof record.ts !== "string" || recordHash(record) !== record.hash) {
      throw new Error(`${file}: its last record fails its hash; retention stops (run 'vcp-hooks audit verify ${path}')`);
    }
    const info: SegmentInfo = { path: file, ino, bytes: size, lastSeq: record.seq as number, lastHash: record.hash, lastTs: record.ts };
    infoCache.set(file, info);
    return info;
  }

  /**
   * Through which seq the sink has shipped this log, with why nothing more counts; only called when a
   * limit wants segments gone. `first` is the oldest segment a limit wants deleted.
   */
  async function shippedThrough(segments: readonly SegmentInfo[], first: SegmentInfo): Promise<{ seq: number; reason?: string }> {
    const file = options.sinkCursorFile!;
    let cursor;
    try {
      cursor = readSinkCursorHead(file);
    } catch (err) {
      return { seq: 0, reason: `the sink cursor cannot be read (${err instanceof Error ? err.message : String(err)}): nothing counts as shipped` };
    }
    if (cursor.seq === 0) return { seq: 0, reason: "the sink has not acknowledged any record yet" };
    // Nothing wanted is at or before the cursor: whose cursor it is does not matter yet.
    if (first.lastSeq > cursor.seq) return { seq: cursor.seq };
    if (cursor.hash === undefined) return { seq: 0, reason: `the sink cursor ${file} has no hash (written by an older version): retention waits for the sink's next acknowledgement` };
    if (boundCursor !== null && boundCursor.seq === cursor.seq && boundCursor.hash === cursor.hash) return { seq: cursor.seq };
    // The record at the cursor is in the first file that reaches its seq: a kept segment or the live file.
    const holder = segments.find((s) => s.lastSeq >= cursor.seq);
    const found = holder?.lastSeq === cursor.seq ? holder.lastHash : await hashAt(holder?.path ?? path, cursor.seq);
    if (found === cursor.hash) {
      boundCursor = { seq: cursor.seq, hash: cursor.hash };
      return { seq: cursor.seq };
    }
    return {
      seq: 0,
      reason: `the sink cursor (seq ${cursor.seq}) is not this log's: ${found === undefined ? `the log has no record ${cursor.seq}` : `its record ${cursor.seq} has another hash`} (moved aside and started again?); nothing counts as shipped until the sink acknowledges a record of this log`,
    };
  }

  async function runOnce(): Promise<void> {
    const at = now();
    const segments: SegmentInfo[] = [];
    for (const s of await listSegments(path)) segments.push(await segmentInfo(s.path));
    for (const cached of infoCache.keys()) if (!segments.some((s) => s.path === cached)) infoCache.delete(cached);
    const liveBytes = await stat(path).then((s) => s.size, () => 0);
    let total = liveBytes;
    for (const s of segments) total += s.bytes;

    // How many of the oldest segments each limit wants gone; the longest such prefix goes.
    const wantedBy = new Map<Limit, number>();
    if (policy.maxSegments !== undefined) wantedBy.set("max_segments", Math.max(0, segments.length - policy.maxSegments));
    if (policy.maxBytes !== undefined) {
      let n = 0;
      for (let left = total; n < segments.length && left > policy.maxBytes; n++) left -= segments[n]!.bytes;
      wantedBy.set("max_bytes", n);
    }
    if (policy.maxAgeMs !== undefined) {
      let n = 0;
      while (n < segments.length && at - Date.parse(segments[n]!.lastTs) > policy.maxAgeMs) n++;
      wantedBy.set("max_age", n);
    }
    const wanted = Math.max(0, ...wantedBy.values());

    let deletable = wanted;
    let shipped: { seq: number; reason?: string } | null = null;
    if (policy.requireShipped && wanted > 0) {
      shipped = await shippedThrough(segments, segments[0]!);
      deletable = 0;
      while (deletable < wanted && segments[deletable]!.lastSeq <= shipped.seq) deletable++;
    }
    const held = segments.slice(deletable, wanted);
    const blockedReason = held.length === 0 ? null
      : (shipped?.reason ?? `not shipped yet: the sink has acknowledged records through seq ${shipped!.seq}, ${basename(held[0]!.path)} ends at seq ${held[0]!.lastSeq}`);

    const batch = segments.slice(0, Math.min(deletable, SEGMENTS_PER_RECORD));
    let deletedBytes = 0;
    if (batch.length > 0) {
      const reasons = [...wantedBy].filter(([, n]) => n > 0).map(([limit]) => limit);
      const described: RetentionRecordSegment[] = batch.map((s) => ({ file: basename(s.path), last_seq: s.lastSeq, last_hash: s.lastHash, last_ts: s.lastTs, bytes: s.bytes }));
      // The record first, durable: a log whose start is gone always says where it went and what it ended with.
      await writer.append({
        kind: "retention",
        event: RETENTION_EVENT,
        details: { deleted: described, reasons, shipped_through_seq: shipped?.seq ?? null, require_shipped: policy.requireShipped },
      });
      for (const s of batch) {
        try {
          await unlink(s.path);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
        }
        infoCache.delete(s.path);
        deletedBytes += s.bytes;
        stats.deleted_segments++;
        stats.deleted_bytes += s.bytes;
      }
      await syncDir(dirname(path));
      logger.info({ audit: path, deleted: described.map((d) => d.file), bytes: deletedBytes, through_seq: batch.at(-1)!.lastSeq, reasons }, "audit retention: deleted shipped rotated segments");
      if (deletable > batch.length) again = true;
    }

    const oldest = segments[batch.length];
    // Logged when holding starts and ends, not at every run while it lasts (status and metrics have the rest).
    if (blockedReason !== null && !stats.blocked) logger.warn({ audit: path, held_segments: held.length, held_bytes: held.reduce((n, s) => n + s.bytes, 0), reason: blockedReason }, "audit retention: keeping segments past the limits until they are shipped");
    else if (blockedReason === null && stats.blocked) logger.info({ audit: path }, "audit retention: no longer holding unshipped segments");
    // The retention record grew the live file: what the log takes now.
    const liveNow = batch.length > 0 ? await stat(path).then((s) => s.size, () => 0) : liveBytes;
    stats = {
      ...stats,
      segments: segments.length - batch.length,
      bytes: total - deletedBytes - liveBytes + liveNow,
      oldest_segment_age_seconds: oldest === undefined ? 0 : Math.max(0, (at - Date.parse(oldest.lastTs)) / 1000),
      blocked: held.length > 0,
      held_segments: held.length,
      held_bytes: held.reduce((n, s) => n + s.bytes, 0),
      blocked_reason: blockedReason,
      runs: stats.runs + 1,
      last_run_at: new Date(at).toISOString(),
      last_error: null,
    };
  }

  function start(): Promise<void> {
    running ??= (async () => {
      do {
        again = false;
        try {
          await runOnce();
        } catch (err) {
          const message = err instanceof Error ? err.message : String(err);
          if (message !== stats.last_error) logger.error({ audit: path, err: message }, "audit retention: run failed; nothing more was deleted");
          stats = { ...stats, runs: stats.runs + 1, errors: stats.errors + 1, last_error: message, last_run_at: new Date(now()).toISOString() };
        }
      } while (again && !closed);
    })().finally(() => {
      running = null;
    });
    return running;
  }

  const kick = (): void => {
    if (closed) return;
    if (running !== null) again = true;
    else void start();
  };
  const timer = setInterval(kick, intervalMs);
  timer.unref();
  kick();

  return {
    stats: () => ({ ...stats }),
    async run() {
      if (running !== null) await running;
      if (!closed) await start();
      return { ...stats };
    },
    kick,
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
    },
  };
}

type CheckedPolicy = Omit<AuditRetentionPolicy, "requireShipped"> & { requireShipped: boolean };

function checkPolicy(o: AuditRetentionOptions): CheckedPolicy {
  const bad = (field: string, rule: string): VcpError => new VcpError("INVALID_CONFIG", `audit.retention.${field} ${rule}`, { field: `audit.retention.${field}` });
  for (const [field, value] of [["max_segments", o.maxSegments], ["max_bytes", o.maxBytes], ["max_age", o.maxAgeMs]] as const) {
    const least = field === "max_segments" ? 0 : 1;
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= least)) throw bad(field, `must be an integer of at least ${least}`);
  }
  if (o.maxSegments === undefined && o.maxBytes === undefined && o.maxAgeMs === undefined) throw bad("max_segments", "or max_bytes or max_age_s must be set: retention without a limit deletes nothing");
  const requireShipped = o.requireShipped ?? true;
  if (requireShipped && o.sinkCursorFile === undefined) {
    throw bad("require_shipped", "is true (the default), but no audit.sink ships the log: configure audit.sink, or set audit.retention.require_shipped: false to delete rotated segments nobody has shipped (their records are then gone)");
  }
  return { ...(o.maxSegments !== undefined ? { maxSegments: o.maxSegments } : {}), ...(o.maxBytes !== undefined ? { maxBytes: o.maxBytes } : {}), ...(o.maxAgeMs !== undefined ? { maxAgeMs: o.maxAgeMs } : {}), requireShipped };
}

/** The hash of record `seq` in `file` (verified), or undefined when the file holds no such record. */
async function hashAt(file: string, seq: number): Promise<string | undefined> {
  // The writer starts every line with its seq (record.ts sealPrepared): only that line is parsed.
  const prefix = `{"seq":${seq},`;
  try {
    for await (const { text, terminated } of readLines(file)) {
      if (!terminated || !text.startsWith(prefix)) continue;
      const record = JSON.parse(text) as Record<string, unknown>;
      return typeof record.hash === "string" && recordHash(record) === record.hash ? record.hash : undefined;
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  return undefined;
}
