/**
 * Reading an audit log back in order (rotated segments oldest first, then the live file), for
 * `vcp-hooks audit tail|export` and the decision-log sink. Only complete lines are read: a line being
 * written (no newline yet) is left for the next read, so a reader never sees half a record.
 *
 * A follower keeps its place in the live file by byte offset and file identity; when the writer
 * rotates (the live file is renamed to a segment and a new one started), the follower notices the new
 * identity and finds its place again by `seq` — records are never skipped or repeated.
 */
import { stat } from "node:fs/promises";
import { listSegments, openIfExists, readFully } from "./files.js";
import type { AuditRecord } from "./record.js";

export interface ReadOptions {
  /** Only records with a larger seq (a cursor). Default 0: from the start. */
  afterSeq?: number;
  /** Only records with `ts` at or after this time. */
  since?: Date;
}

interface FileRead {
  records: AuditRecord[];
  /** Offset just past the last complete line read. */
  end: number;
}

/** Complete lines of `file` from byte `from`, parsed; a file that is missing reads as empty. */
async function readFrom(file: string, from: number): Promise<FileRead> {
  const fh = await openIfExists(file);
  if (fh === null) return { records: [], end: from };
  try {
    const { size } = await fh.stat();
    if (size <= from) return { records: [], end: from };
    const buf = Buffer.alloc(size - from);
    const got = await readFully(fh, buf, from);
    const lastNl = buf.subarray(0, got).lastIndexOf(10);
    if (lastNl < 0) return { records: [], end: from };
    const records: AuditRecord[] = [];
    for (const line of buf.subarray(0, lastNl).toString("utf8").split("\n")) {
      if (line === "") continue;
      try {
        records.push(JSON.parse(line) as AuditRecord);
      } catch {
        throw new Error(`${file}: a line near byte ${from} is not JSON (run 'vcp-hooks audit verify ${file}')`);
      }
    }
    return { records, end: from + lastNl + 1 };
  } finally {
    await fh.close();
  }
}

function wanted(record: AuditRecord, options: ReadOptions): boolean {
  if (record.seq <= (options.afterSeq ?? 0)) return false;
  if (options.since !== undefined && !(Date.parse(record.ts) >= options.since.getTime())) return false;
  return true;
}

/**
 * Every record of the log at `path` (and its rotations) that `options` selects, oldest first.
 *
 * @example
 * ```ts
 * for await (const r of readAuditRecords(".vcp/audit/audit.jsonl", { afterSeq: 1200 })) ship(r);
 * ```
 */
export async function* readAuditRecords(path: string, options: ReadOptions = {}): AsyncGenerator<AuditRecord> {
  for (const file of [...(await listSegments(path)).map((s) => s.path), path]) {
    const { records } = await readFrom(file, 0);
    // A segment whose last record is at or before the cursor holds nothing new.
    const last = records[records.length - 1];
    if (last !== undefined && last.seq <= (options.afterSeq ?? 0)) continue;
    for (const r of records) if (wanted(r, options)) yield r;
  }
}

/** Where a follower is in the live file. */
interface LivePosition {
  ino: number;
  offset: number;
}

/**
 * Records appended after the cursor, as they come: first what is already there, then new records
 * every `pollMs`, across rotations, until `signal` aborts.
 */
export async function* followAuditRecords(
  path: string,
  options: ReadOptions & { pollMs?: number; signal?: AbortSignal } = {},
): AsyncGenerator<AuditRecord> {
  const pollMs = options.pollMs ?? 250;
  let afterSeq = options.afterSeq ?? 0;
  let live: LivePosition | null = null;
  while (!options.signal?.aborted) {
    let info;
    try {
      info = await stat(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      info = null;
    }
    let fresh: AuditRecord[] = [];
    if (info !== null && live !== null && info.ino === live.ino && info.size >= live.offset) {
      // Same live file: read only what was appended.
      const read = await readFrom(path, live.offset);
      fresh = read.records.filter((r) => r.seq > afterSeq);
      live = { ino: info.ino, offset: read.end };
    } else {
      // First read, or the writer rotated: find our place again by seq across every file.
      for await (const r of readAuditRecords(path, { afterSeq })) fresh.push(r);
      live = null;
      if (info !== null) {
        // The offset to follow from must come from a read whose records are all taken: a record
        // appended between the scan above and this read would otherwise lie before the offset and
        // never be yielded (the sink then stalls below the head for good).
        const tail = await readFrom(path, 0);
        const seen = fresh.length > 0 ? fresh[fresh.length - 1]!.seq : afterSeq;
        const later = tail.records.filter((r) => r.seq > seen);
        // A gap means the writer rotated in between: leave `live` unset and scan by seq next poll.
        if (later.length === 0 || later[0]!.seq === seen + 1) {
          fresh.push(...later);
          live = { ino: info.ino, offset: tail.end };
        }
      }
    }
    for (const r of fresh) {
      afterSeq = r.seq;
      if (wanted(r, { ...options, afterSeq: 0 })) yield r;
    }
    if (options.signal?.aborted) return;
    await abortableSleep(pollMs, options.signal);
  }
}

/**
 * Wait `ms`, or less if `signal` aborts. The abort listener is removed when the timer fires, so a
 * long-running follower does not pile up one listener per poll.
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
