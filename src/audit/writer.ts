import { hash as sha256 } from "node:crypto";
import { constants as fsConstants } from "node:fs";
import { mkdir, open, rename, type FileHandle } from "node:fs/promises";
import { dirname, resolve as resolvePath } from "node:path";
import { VcpError } from "../errors.js";
import { REPLICA_ID } from "../model/names.js";
import { isoTime } from "../model/iso-time.js";
import type { Redactor } from "./redact.js";
import { STORED_OVERHEAD } from "./chain-budget.js";
import { listSegments, openIfExists, readFully, segmentPath, syncDir } from "./files.js";
import { GENESIS_HASH, hashInput, normalizeInput, prepareRecord, recordHash, sealPrepared, type AuditRecordInput, type PreparedRecord } from "./record.js";

/*
 * Group commit.
 *
 *   append() ──normalize, redact──▶ [waiters] ──admit (seq, prev, hash)──▶ [queue] ──┐
 *        ▲   (only when > maxPending       FIFO, so seq order = call order         │ flush loop:
 *        │    records are pending)                                                 │ one write +
 *        └──────────── resolve {seq, hash} after the batch's sync ◀────────────────┘ one sync
 *
 * While one batch is being written and synced, new records collect in the queue and go out together in
 * the next write: under load, many records share one fsync. An append resolves only after the fsync of
 * its batch (`fsync: "batch"` / `"always"`): an acknowledged record is durable. A record is complete
 * only with its trailing newline; a crash mid-write leaves at most a torn final line, which was never
 * acknowledged and is cut off when the log is reopened.
 *
 * On Linux the file is opened with O_DSYNC and the batch's write itself is the sync: the kernel
 * completes an O_DSYNC write only after syncing the written range the way fdatasync() does (same
 * data, same metadata, same cache flush), in one system call and one thread-pool job instead of two
 * (measured on this project's machine: ≈ 18% less wall time and ≈ 24 µs less CPU per batch).
 * Elsewhere, write() then fdatasync(): on macOS Node's fdatasync is a full F_FULLFSYNC, which an
 * O_DSYNC write does not do, so the flag would weaken durability there.
 *
 * A failed write or sync poisons the writer: every pending and later append rejects, because seqs were
 * already assigned and writing past a hole would break the chain. Reopen to resume from the file.
 *
 * Single writer: one writer per path. A second open in this process is refused; the runtime holds a
 * pid lock on the log (src/store/pid-lock.ts) so a second process is refused too. Opening checks
 * that the tail of the chain verifies (checkTail), so a log that two writers did break is refused
 * instead of extended.
 */

/** Options of {@link openAuditLog}; `audit:` in vcp.yaml (DESIGN §6.4). */
export interface AuditWriterOptions {
  /** The live file; rotations are `<path>.000001`, `<path>.000002`, … (oldest first). */
  path: string;
  /**
   * `batch`: group commit, one fdatasync per write (default in config). `always`: one write and one
   * fdatasync per record. `never`: acknowledged once handed to the OS (survives a process crash, not
   * a power loss).
   */
  fsync: "batch" | "always" | "never";
  /** Rotate before a write would take the live file past this many bytes. */
  rotateBytes: number;
  /** At most this many records are admitted but not yet durable; further appends wait (never drop). */
  maxPending: number;
  /**
   * Group-commit window, ms: batches start at least this far apart; records arriving meanwhile join
   * the next one. A writer idle for longer than the window writes at once (no added latency at low
   * load), and a sync slower than the window adds no wait. Under load this caps syncs at 1000 / window
   * per second: fewer, larger batches cost less CPU per record (each sync costs the process ≈ 150–250
   * µs of system time on this project's machine) and add at most the window to an append's wait.
   * Default 0: each batch at the next macrotask after the previous one is done.
   */
  flushIntervalMs?: number;
  /** Records per write at most; default 4096. */
  maxBatchRecords?: number;
  /**
   * Applied to `annotations`, `details` and `modification` before anything is hashed or written,
   * e.g. createRedactor(...). Redaction comes before the size cap, so a cut cannot expose half a secret.
   */
  redact?: Redactor | ((value: unknown) => unknown);
  /** `annotations`, `details` or `modification` whose JSON exceeds this is replaced by a stub; default 65536. */
  maxFieldBytes?: number;
  /**
   * The replica id stamped on every record as `replica` (issue 18), so the chains of several replicas
   * stay attributable when shipped or verified together. Omitted: records carry none (as before).
   */
  replica?: string;
  /** Wall clock for `ts` (tests); default Date.now. */
  now?: () => number;
  /**
   * Called with the seconds each batch took to become durable (the audit fsync latency metric): its
   * O_DSYNC write, or its write's fdatasync where the platform has no O_DSYNC.
   */
  onSync?: (seconds: number) => void;
  /** Called after each rotation, once the new live file exists (audit retention runs then). */
  onRotate?: () => void;
}

export interface AuditHead {
  seq: number;
  hash: string;
}

export interface AuditWriterStats {
  /** Records admitted and not yet durable, plus records waiting for admission. */
  pending: number;
  /** Records durably written since open. */
  written: number;
  /** Age of the oldest record not yet durable, in ms (0 when idle). */
  lagMs: number;
  /** Writes (each followed by one fsync unless fsync is never). */
  batches: number;
  fsyncs: number;
  rotations: number;
  /** Bytes of durably written records since open. */
  bytes: number;
  /** Writes or syncs that failed (each poisons the writer until it is reopened): 0 or 1 per writer. */
  writeFailures: number;
}

export interface AuditWriter {
  /** Append one record; resolves with its seq and hash once it is durable. */
  append(record: AuditRecordInput): Promise<AuditHead>;
  /**
   * Append records with consecutive seqs; resolves once all are durable. With a `budget`, the records'
   * stored bytes are measured from the texts the writer makes for them anyway; only above
   * `budget.maxBytes` are they handed to `budget.fit` (audit/chain-budget.ts) and prepared again.
   */
  appendMany(records: readonly AuditRecordInput[], budget?: AuditBudget): Promise<AuditHead[]>;
  /** The last durable record (seq 0 and the genesis hash for an empty log), for anchoring. */
  head(): AuditHead;
  /** Resolves once every record appended before the call is durable. */
  flush(): Promise<void>;
  /** Flush, then close the file. Appends after close reject. */
  close(): Promise<void>;
  stats(): AuditWriterStats;
  /** What opening had to repair: bytes of a torn, never-acknowledged final line that were cut off. */
  readonly recovery: { truncated_bytes: number } | null;
}

/** A bound on the stored bytes of the records of one `appendMany` call (`audit.max_chain_bytes`). */
export interface AuditBudget {
  maxBytes: number;
  /** The records cut down to fit (called only when they do not): audit/chain-budget.ts `capChainAudit`. */
  fit(records: readonly AuditRecordInput[]): readonly AuditRecordInput[];
}

interface Entry {
  seq: number;
  hash: string;
  line: string;
  since: number;
  resolve: (head: AuditHead) => void;
  reject: (err: Error) => void;
}

interface Waiter {
  fields: PreparedRecord;
  since: number;
  resolve: (head: AuditHead) => void;
  reject: (err: Error) => void;
}

const openPaths = new Set<string>();
const PAYLOAD_FIELDS = ["annotations", "details", "modification", "decision"] as const;
/** normalizeInput leaves these to prepare (below), which normalizes and redacts them in one go. */
const RAW_FIELDS: ReadonlySet<string> = new Set(PAYLOAD_FIELDS);
/** Stands in for a payload value whose texts prepare made (prepareRecord then reads only the texts). */
const TEXTS_GIVEN = Object.freeze({});

/**
 * Bytes the prepared records take in the log: their fields' JSON as written, plus what sealing adds
 * to each line (seq, ts, prev, hash: chain-budget.ts STORED_OVERHEAD, the same measure `fit` uses).
 */
function storedBytes(prepared: ReadonlyArray<PreparedRecord | Error>): number {
  let bytes = 0;
  for (const p of prepared) if (!(p instanceof Error)) bytes += Buffer.byteLength(p.json, "utf8") + STORED_OVERHEAD;
  return bytes;
}

/**
 * Open (or create) a hash-chained, append-only JSONL audit log (DESIGN §5, spec §8.2.3) and resume
 * its chain from the last complete record of the live file or, if it has none, of the newest rotated
 * segment. A torn final line (crash mid-write) is cut off; the repair is reported in `recovery`.
 *
 * @example
 * ```ts
 * const audit = await openAuditLog({ path: ".vcp/audit/audit.jsonl", fsync: "batch", rotateBytes: 100 << 20, maxPending: 10_000 });
 * const { seq, hash } = await audit.append({ kind: "hook", hook: "strip_pii", hook_type: "pre_inject",
 *   input_hash: hashInput(input), status: "modify", outcome: "ok", duration_ms: 0.4, modification: diffForAudit(before, after) });
 * await audit.close();
 * ```
 */
export async function openAuditLog(options: AuditWriterOptions): Promise<AuditWriter> {
  const opts = validateOptions(options);
  const path = resolvePath(opts.path);
  if (openPaths.has(path)) throw new VcpError("INVALID_CONFIG", `audit log ${path} is already open in this process`, { field: "audit.path" });
  openPaths.add(path);
  try {
    await mkdir(dirname(path), { recursive: true });
    const segments = await listSegments(path);
    await checkTail(path, segments.map((s) => s.path));
    const { head, truncated } = await resume(path, segments.map((s) => s.path));
    const fd = await open(path, appendFlags(opts.fsync), 0o600);
    const size = (await fd.stat()).size;
    if (truncated > 0 || size === 0) await syncDir(dirname(path));
    const nextSegment = (segments.at(-1)?.n ?? 0) + 1;
    return new Writer(path, opts, fd, size, head, nextSegment, truncated > 0 ? { truncated_bytes: truncated } : null);
  } catch (err) {
    openPaths.delete(path);
    throw err;
  }
}

type ResolvedOptions = Required<Omit<AuditWriterOptions, "redact" | "onSync" | "onRotate" | "replica">> & Pick<AuditWriterOptions, "redact" | "onSync" | "onRotate" | "replica">;

function validateOptions(o: AuditWriterOptions): ResolvedOptions {
  const bad = (field: string, rule: string) => new VcpError("INVALID_CONFIG", `audit.${field} ${rule}`, { field: `audit.${field}` });
  if (typeof o?.path !== "string" || o.path.length === 0) throw bad("path", "must be a non-empty path");
  if (!["batch", "always", "never"].includes(o.fsync)) throw bad("fsync", "must be batch, always or never");
  if (!Number.isSafeInteger(o.rotateBytes) || o.rotateBytes < 1) throw bad("rotate_bytes", "must be a positive integer");
  if (!Number.isSafeInteger(o.maxPending) || o.maxPending < 1) throw bad("max_pending", "must be a positive integer");
  const flushIntervalMs = o.flushIntervalMs ?? 0;
  if (!Number.isFinite(flushIntervalMs) || flushIntervalMs < 0) throw bad("flush_interval_ms", "must be a non-negative number");
  const maxBatchRecords = o.maxBatchRecords ?? 4096;
  if (!Number.isSafeInteger(maxBatchRecords) || maxBatchRecords < 1) throw bad("max_batch_records", "must be a positive integer");
  if (o.replica !== undefined && !REPLICA_ID.regex.test(o.replica)) throw new VcpError("INVALID_CONFIG", `replica id ${JSON.stringify(o.replica)} ${REPLICA_ID.rule}`, { field: "replica_id" });
  const maxFieldBytes = o.maxFieldBytes ?? 65_536;
  if (!Number.isSafeInteger(maxFieldBytes) || maxFieldBytes < 64) throw bad("max_field_bytes", "must be an integer ≥ 64");
  return { ...o, flushIntervalMs, maxBatchRecords, maxFieldBytes, now: o.now ?? Date.now };
}

class Writer implements AuditWriter {
  private admitted: AuditHead;
  private durable: AuditHead;
  private readonly queue: Entry[] = [];
  private inflight: Entry[] = [];
  private readonly waiters: Waiter[] = [];
  private readonly flushWaiters: Array<{ seq: number; resolve: () => void; reject: (err: Error) => void }> = [];
  private flushing = false;
  private scheduled = false;
  private closed = false;
  private failure: Error | undefined;
  private written = 0;
  private batches = 0;
  private fsyncs = 0;
  private rotations = 0;
  private bytes = 0;
  private writeFailures = 0;
  /** performance.now() when the last batch was taken: the next waits out flushIntervalMs from it. */
  private lastBatchAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly path: string,
    private readonly opts: ResolvedOptions,
    private fd: FileHandle,
    private size: number,
    head: AuditHead,
    private nextSegment: number,
    readonly recovery: { truncated_bytes: number } | null,
  ) {
    this.admitted = head;
    this.durable = head;
  }

  append(input: AuditRecordInput): Promise<AuditHead> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error(`audit log ${this.path} is closed`));
    let fields: PreparedRecord;
    try {
      fields = this.prepare(input);
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    return new Promise<AuditHead>((resolve, reject) => this.enqueue(fields, resolve, reject));
  }

  appendMany(records: readonly AuditRecordInput[], budget?: AuditBudget): Promise<AuditHead[]> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new Error(`audit log ${this.path} is closed`));
    // One promise for the records (a chain's are written together): each is admitted as `append`
    // would, in order and synchronously, so nothing can take a seq between them. A record that cannot
    // be prepared rejects the whole call; the others are written all the same, as with one append each.
    let prepared = this.prepareAll(records);
    if (budget !== undefined && storedBytes(prepared) > budget.maxBytes) {
      // Over the budget (rare): cut, then prepare what is left. The common chain is measured from the
      // texts it is written with, not serialized a second time to be measured.
      const fitted = budget.fit(records);
      if (fitted !== records) prepared = this.prepareAll(fitted);
    }
    return new Promise<AuditHead[]>((resolve, reject) => {
      const heads: AuditHead[] = new Array<AuditHead>(prepared.length);
      let left = prepared.length;
      let failed = false;
      const fail = (err: Error): void => {
        if (failed) return;
        failed = true;
        reject(err);
      };
      if (left === 0) resolve(heads);
      prepared.forEach((fields, i) => {
        if (fields instanceof Error) {
          fail(fields);
          return;
        }
        this.enqueue(
          fields,
          (head) => {
            heads[i] = head;
            if (--left === 0 && !failed) resolve(heads);
          },
          fail,
        );
      });
    });
  }

  /** Each record prepared (`prepare`), or the error that refused it. */
  private prepareAll(records: readonly AuditRecordInput[]): Array<PreparedRecord | Error> {
    return records.map((input) => {
      try {
        return this.prepare(input);
      } catch (err) {
        return err instanceof Error ? err : new Error(String(err));
      }
    });
  }

  /** Admit a prepared record now, or queue it behind the waiting ones (FIFO: seq order is call order). */
  private enqueue(fields: PreparedRecord, resolve: (head: AuditHead) => void, reject: (err: Error) => void): void {
    if (this.waiters.length > 0 || this.pendingCount() >= this.opts.maxPending) {
      this.waiters.push({ fields, since: performance.now(), resolve, reject });
    } else {
      this.admit(fields, resolve, reject);
    }
  }

  head(): AuditHead {
    return { ...this.durable };
  }

  flush(): Promise<void> {
    const target = this.admitted.seq + this.waiters.length;
    if (this.durable.seq >= target) return this.failure ? Promise.reject(this.failure) : Promise.resolve();
    return new Promise((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      this.flushWaiters.push({ seq: target, resolve, reject });
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      if (!this.failure) await this.flush();
      if (!this.failure && this.opts.fsync === "never") await this.fd.datasync();
    } finally {
      await this.fd.close().catch(() => {});
      openPaths.delete(this.path);
    }
  }

  stats(): AuditWriterStats {
    const oldest = this.inflight[0]?.since ?? this.queue[0]?.since ?? this.waiters[0]?.since;
    return {
      pending: this.pendingCount() + this.waiters.length,
      written: this.written,
      lagMs: oldest === undefined ? 0 : performance.now() - oldest,
      batches: this.batches,
      fsyncs: this.fsyncs,
      rotations: this.rotations,
      bytes: this.bytes,
      writeFailures: this.writeFailures,
    };
  }

  private pendingCount(): number {
    return this.queue.length + this.inflight.length;
  }

  /**
   * Normalize to JSON, redact, then cap payload sizes (in that order), and turn the result into the
   * text sealing needs (record.ts prepareRecord): all of it before admission, none of it per seq.
   */
  private prepare(input: AuditRecordInput): PreparedRecord {
    // The writer's replica id first (readability of the line; the hash is over RFC 8785 order).
    const fields = normalizeInput(input, this.opts.replica !== undefined ? { replica: this.opts.replica } : {}, RAW_FIELDS);
    // JSON texts of the payload values as written, handed to prepareRecord so it does not write them again.
    let texts: Partial<Record<(typeof PAYLOAD_FIELDS)[number], string>> | undefined;
    let canonical: Partial<Record<(typeof PAYLOAD_FIELDS)[number], string>> | undefined;
    const redact = this.opts.redact;
    for (const key of PAYLOAD_FIELDS) {
      if (!(key in fields)) continue;
      let value = fields[key];
      // SECURITY: redaction precedes the size cap, so a secret cannot survive by being cut in half.
      // Plain JSON data (a chain's records, its decision record): the audit redactor writes the
      // redacted value's JSON and RFC 8785 texts in one walk, building no copy (redact.ts jsonTexts).
      const direct = typeof value === "object" && value !== null && redact !== undefined && "jsonTexts" in redact ? redact.jsonTexts?.(value) : undefined;
      if (direct !== undefined) {
        const bytes = Buffer.byteLength(direct.json);
        if (bytes > this.opts.maxFieldBytes) fields[key] = { truncated: true, bytes, hash: `sha256:${sha256("sha256", direct.canonical, "hex")}` };
        else {
          (texts ??= {})[key] = direct.json;
          (canonical ??= {})[key] = direct.canonical;
          // prepareRecord reads the texts; the unredacted value must not stay in the fields.
          fields[key] = TEXTS_GIVEN;
        }
        continue;
      }
      if (typeof value === "object" && value !== null) {
        // The general path: what normalizeInput does to any other object field, the JSON round trip.
        const text = JSON.stringify(value); // undefined when a toJSON answers undefined: left out, as JSON does
        if (text === undefined) {
          delete fields[key];
          continue;
        }
        value = JSON.parse(text);
      }
      // One JSON text of the redacted value serves the cap, the round trip that makes what is hashed
      // exactly what a reader parses back (the redactor is any function), and the stored line.
      const text = JSON.stringify(redact ? (redact(value) ?? null) : value);
      if (redact) value = JSON.parse(text);
      const bytes = Buffer.byteLength(text);
      if (bytes > this.opts.maxFieldBytes) value = { truncated: true, bytes, hash: hashInput(value) };
      else (texts ??= {})[key] = text;
      fields[key] = value;
    }
    return prepareRecord(fields, texts, canonical);
  }

  private admit(fields: PreparedRecord, resolve: (h: AuditHead) => void, reject: (e: Error) => void): void {
    const seq = this.admitted.seq + 1;
    const { hash, line } = sealPrepared(fields, seq, this.admitted.hash, this.timestamp());
    this.admitted = { seq, hash };
    this.queue.push({ seq, hash, line, since: performance.now(), resolve, reject });
    this.schedule();
  }

  /** ISO-8601 `ts` of a record admitted now. */
  private timestamp(): string {
    return isoTime(this.opts.now());
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    const start = () => {
      this.scheduled = false;
      void this.flushLoop();
    };
    const wait = this.windowLeft();
    if (wait > 0) setTimeout(start, wait);
    else setImmediate(start);
  }

  private async flushLoop(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.queue.length > 0 && !this.failure) {
        // The group-commit window: records appended while it runs join this batch.
        const wait = this.windowLeft();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        this.lastBatchAt = performance.now();
        const take = this.opts.fsync === "always" ? 1 : this.opts.maxBatchRecords;
        this.inflight = this.queue.splice(0, take);
        const buf = Buffer.from(this.inflight.map((e) => e.line).join(""), "utf8");
        if (this.size > 0 && this.size + buf.length > this.opts.rotateBytes) await this.rotate();
        const writeStart = performance.now();
        // With O_DSYNC (see appendFlags) each write returns once its bytes are durable; the batch is
        // acknowledged below only after its last write returned, as after an fdatasync.
        await writeAll(this.fd, buf);
        this.size += buf.length;
        if (this.opts.fsync !== "never") {
          if (!SYNC_ON_WRITE) await this.fd.datasync();
          this.fsyncs++;
          this.opts.onSync?.((performance.now() - writeStart) / 1000);
        }
        this.bytes += buf.length;
        this.batches++;
        const done = this.inflight;
        this.inflight = [];
        const last = done[done.length - 1]!;
        this.durable = { seq: last.seq, hash: last.hash };
        this.written += done.length;
        for (const e of done) e.resolve({ seq: e.seq, hash: e.hash });
        this.settleFlushes();
        this.admitWaiters();
      }
    } catch (err) {
      this.fail(err);
    } finally {
      this.flushing = false;
    }
    if (this.queue.length > 0 && !this.failure) this.schedule();
  }

  /** Milliseconds until the group-commit window since the last batch started is over (≤ 0: now). */
  private windowLeft(): number {
    return this.opts.flushIntervalMs > 0 ? this.lastBatchAt + this.opts.flushIntervalMs - performance.now() : 0;
  }

  private admitWaiters(): void {
    while (this.waiters.length > 0 && this.pendingCount() < this.opts.maxPending) {
      const w = this.waiters.shift()!;
      this.admit(w.fields, w.resolve, w.reject);
    }
  }

  private settleFlushes(): void {
    for (let i = this.flushWaiters.length - 1; i >= 0; i--) {
      const f = this.flushWaiters[i]!;
      if (this.durable.seq >= f.seq) {
        this.flushWaiters.splice(i, 1);
        f.resolve();
      }
    }
  }

  /**
   * Rename the live file to the next segment and start a new one. The chain simply continues: the
   * next record's prev is the last hash of the renamed file. rename() is atomic, so after a crash the
   * records are in exactly one of the two names.
   */
  private async rotate(): Promise<void> {
    if (this.opts.fsync === "never") await this.fd.datasync();
    await this.fd.close();
    await rename(this.path, segmentPath(this.path, this.nextSegment));
    this.nextSegment++;
    this.fd = await open(this.path, appendFlags(this.opts.fsync), 0o600);
    this.size = 0;
    await syncDir(dirname(this.path));
    this.rotations++;
    this.opts.onRotate?.();
  }

  private fail(cause: unknown): void {
    const first = this.inflight[0]?.seq ?? this.queue[0]?.seq ?? this.admitted.seq + 1;
    const err = new Error(
      `audit log ${this.path}: write failed; records from seq ${first} were not acknowledged and the writer is closed (reopen to resume): ${cause instanceof Error ? cause.message : String(cause)}`,
      { cause },
    );
    this.failure = err;
    this.writeFailures++;
    for (const e of [...this.inflight, ...this.queue.splice(0)]) e.reject(err);
    this.inflight = [];
    for (const w of this.waiters.splice(0)) w.reject(err);
    for (const f of this.flushWaiters.splice(0)) f.reject(err);
  }
}

/**
 * O_DSYNC on Linux, where an O_DSYNC write syncs exactly as fdatasync() would; undefined elsewhere
 * (macOS: Node's fdatasync flushes the drive's cache with F_FULLFSYNC, an O_DSYNC write does not).
 */
const O_DSYNC: number | undefined = process.platform === "linux" ? (fsConstants as { O_DSYNC?: number }).O_DSYNC : undefined;
/** Whether writes of `fsync: batch | always` are durable when they return (the file has O_DSYNC). */
const SYNC_ON_WRITE = O_DSYNC !== undefined;

/**
 * Flags of the live file: append, create, and — unless `fsync: never` — O_DSYNC where it exists, so
 * the write of a batch is also its sync (one system call).
 */
function appendFlags(fsync: AuditWriterOptions["fsync"]): number {
  const append = fsConstants.O_WRONLY | fsConstants.O_APPEND | fsConstants.O_CREAT;
  return fsync !== "never" && O_DSYNC !== undefined ? append | O_DSYNC : append;
}

async function writeAll(fd: FileHandle, buf: Buffer): Promise<void> {
  let offset = 0;
  while (offset < buf.length) {
    const { bytesWritten } = await fd.write(buf, offset, buf.length - offset);
    offset += bytesWritten;
  }
}

/** How much of the end of the log is checked at open: bounded, so a start never reads a whole log. */
const TAIL_CHECK_BYTES = 1 << 20;

/**
 * Refuse to extend a log whose tail does not verify (AUDIT_LOG_CORRUPT, naming the file and seq):
 * the complete records of the last TAIL_CHECK_BYTES of the live file (or, if it has none, of the
 * newest segment) must each hash correctly and form a chain (consecutive seqs, `prev` = the hash of
 * the record before); when that window starts at the beginning of the live file, its first record
 * must continue the newest segment. Two processes appending to one log fail this at once (two
 * records with one seq). A final line without its newline is not checked here: it is a write torn by
 * a crash, never acknowledged, and `resume` cuts it off. The whole log is `vcp-hooks audit verify`'s job.
 */
async function checkTail(path: string, segments: readonly string[]): Promise<void> {
  const newestSegment = segments.at(-1);
  const live = await readWindow(path);
  if (live !== null && live.records.length > 0) {
    const first = verifyRun(path, live.records);
    if (live.fromStart && newestSegment !== undefined) {
      const tail = await readTail(newestSegment);
      if (tail?.lastLine !== undefined) {
        const before = parseRecord(newestSegment, tail.lastLine);
        if (first.seq !== (before.seq as number) + 1 || first.prev !== before.hash) {
          throw corrupt(path, first.seq as number, `its first record (seq ${String(first.seq)}) does not continue ${newestSegment}, which ends at seq ${String(before.seq)}`);
        }
      }
    }
    return;
  }
  if (newestSegment !== undefined) {
    const window = await readWindow(newestSegment);
    if (window !== null && window.records.length > 0) verifyRun(newestSegment, window.records);
  }
}

/** Checks one run of consecutive lines; returns the first record. */
function verifyRun(file: string, lines: readonly string[]): Record<string, unknown> {
  let previous: Record<string, unknown> | undefined;
  let first: Record<string, unknown> | undefined;
  for (const line of lines) {
    const record = parseRecord(file, line, previous);
    first ??= record;
    if (previous !== undefined) {
      const expected = (previous.seq as number) + 1;
      if (record.seq !== expected) {
        throw corrupt(file, expected, `seq ${String(record.seq)} follows seq ${String(previous.seq)} (two processes wrote this log, or records were removed or reordered)`);
      }
      if (record.prev !== previous.hash) throw corrupt(file, expected, `record ${expected} does not chain to record ${String(previous.seq)} (its prev is not that record's hash)`);
    }
    previous = record;
  }
  return first!;
}

function parseRecord(file: string, line: string, previous?: Record<string, unknown>): Record<string, unknown> {
  const at = previous === undefined ? undefined : (previous.seq as number) + 1;
  let record: unknown;
  try {
    record = JSON.parse(line);
  } catch {
    throw corrupt(file, at, "a record is not JSON");
  }
  if (record === null || typeof record !== "object" || Array.isArray(record)) throw corrupt(file, at, "a record is not a JSON object");
  const r = record as Record<string, unknown>;
  if (!Number.isSafeInteger(r.seq) || (r.seq as number) < 1) throw corrupt(file, at, "a record has no valid seq");
  if (typeof r.hash !== "string" || recordHash(r) !== r.hash) throw corrupt(file, r.seq as number, `record ${String(r.seq)} fails its hash (edited)`);
  return r;
}

function corrupt(file: string, seq: number | undefined, why: string): VcpError {
  return new VcpError(
    "AUDIT_LOG_CORRUPT",
    `audit log ${file}${seq !== undefined ? ` at seq ${seq}` : ""}: ${why}; refusing to append to a broken chain. Run 'vcp-hooks audit verify ${file}' and move the log aside to start a new one`,
    { file, ...(seq !== undefined ? { seq } : {}), reason: why },
  );
}

/**
 * The complete lines of the last TAIL_CHECK_BYTES of a file (a partial first line, and a final line
 * without its newline, are left out). Missing file ⇒ null.
 */
async function readWindow(file: string): Promise<{ records: string[]; fromStart: boolean } | null> {
  const fh = await openIfExists(file);
  if (fh === null) return null;
  try {
    const { size } = await fh.stat();
    const start = Math.max(0, size - TAIL_CHECK_BYTES);
    const buf = Buffer.alloc(size - start);
    const got = await readFully(fh, buf, start);
    // Cut on byte 10 before decoding: a window may start inside a multi-byte character.
    const from = start === 0 ? 0 : buf.indexOf(10) + 1;
    const end = buf.lastIndexOf(10, got - 1);
    if (from === 0 && start > 0) return { records: [], fromStart: false }; // one line longer than the window
    if (end < from) return { records: [], fromStart: start === 0 };
    const records = buf.subarray(from, end).toString("utf8").split("\n");
    return { records, fromStart: start === 0 };
  } finally {
    await fh.close();
  }
}

/**
 * Find the head to resume from: the last complete record of the live file (cutting off a torn final
 * line) or else of the newest segment that has one. Files: rotated segments oldest first; the live
 * file is `path`.
 */
async function resume(path: string, segments: readonly string[]): Promise<{ head: AuditHead; truncated: number }> {
  let truncated = 0;
  const live = await readTail(path);
  if (live !== null && live.completeEnd < live.size) {
    // SECURITY: only bytes after the last newline go: a record without its newline was never
    // acknowledged (append resolves after the whole line is synced).
    const fh = await open(path, "r+");
    try {
      await fh.truncate(live.completeEnd);
      await fh.sync();
    } finally {
      await fh.close();
    }
    truncated = live.size - live.completeEnd;
  }
  if (live?.lastLine !== undefined) return { head: parseHead(path, live.lastLine), truncated };
  for (let i = segments.length - 1; i >= 0; i--) {
    const file = segments[i]!;
    const tail = await readTail(file);
    if (tail === null || tail.size === 0) continue;
    if (tail.completeEnd < tail.size) throw corrupt(file, undefined, "a rotated segment ends with an incomplete line (truncated)");
    if (tail.lastLine !== undefined) return { head: parseHead(file, tail.lastLine), truncated };
  }
  return { head: { seq: 0, hash: GENESIS_HASH }, truncated };
}

function parseHead(file: string, line: string): AuditHead {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    throw corrupt(file, undefined, "its last record is not JSON");
  }
  const { seq, hash } = record;
  if (!Number.isSafeInteger(seq) || (seq as number) < 1 || typeof hash !== "string" || recordHash(record) !== hash) {
    throw corrupt(file, Number.isSafeInteger(seq) ? (seq as number) : undefined, "its last record fails its hash");
  }
  return { seq: seq as number, hash };
}

/**
 * The end of a file: its size, the offset just past its last newline, and the last complete line
 * (without newline). Reads backwards in chunks, so resuming a large log reads only its tail.
 * Missing file ⇒ null.
 */
export async function readTail(file: string): Promise<{ size: number; completeEnd: number; lastLine?: string } | null> {
  const fh = await openIfExists(file);
  if (fh === null) return null;
  try {
    const { size } = await fh.stat();
    const CHUNK = 65_536;
    let tail = Buffer.alloc(0);
    let start = size; // tail holds bytes [start, size)
    let lastNl = -1; // absolute offset of the last newline
    for (;;) {
      if (lastNl < 0) {
        const i = tail.lastIndexOf(10);
        if (i >= 0) lastNl = start + i;
      }
      if (lastNl >= 0) {
        const rel = lastNl - start;
        const j = rel > 0 ? tail.lastIndexOf(10, rel - 1) : -1;
        if (j >= 0) return { size, completeEnd: lastNl + 1, lastLine: tail.subarray(j + 1, rel).toString("utf8") };
        if (start === 0) return { size, completeEnd: lastNl + 1, lastLine: tail.subarray(0, rel).toString("utf8") };
      } else if (start === 0) {
        return { size, completeEnd: 0 };
      }
      const n = Math.min(CHUNK, start);
      start -= n;
      const chunk = Buffer.alloc(n);
      await readFully(fh, chunk, start);
      tail = Buffer.concat([chunk, tail]);
    }
  } finally {
    await fh.close();
  }
}
