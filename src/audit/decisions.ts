/**
 * Reading decision records back from the audit log (`GET /v1/decisions`, docs/decisions.md): the chain
 * records that carry a `decision`, newest first, filtered, one page at a time.
 *
 *   live file ─► audit.jsonl.000042 ─► audit.jsonl.000041 ─► …      (newest first)
 *     each read backwards in 1 MiB chunks, complete lines only; a line is parsed only when its text
 *     says it is a chain record with a decision and its `seq` is below the cursor
 *   stop at: `limit` matches │ a record admitted before `since` │ `maxScanBytes` scanned │ the oldest segment
 *
 * A request scans at most `maxScanBytes` of records below its cursor (default 64 MiB): a page that stops
 * there has fewer than `limit` decisions and a `next_cursor` to go on from where it stopped, so one
 * request never reads a whole large log. The cursor is the `seq` below which the next page starts; a
 * rotated segment wholly above it is skipped after reading its first line, and in the one file that
 * holds the cursor the lines above it are read again but not counted.
 */
import { listSegments, openIfExists, readFully } from "./files.js";
import type { DecisionOutcome, DecisionRecord } from "../chain/decision.js";

/** Bytes of log one request reads at most, by default. */
export const DEFAULT_DECISION_SCAN_BYTES = 64 * 1024 * 1024;
/** Decisions per page: default and most. */
export const DEFAULT_DECISION_LIMIT = 100;
export const MAX_DECISION_LIMIT = 1000;

const CHUNK_BYTES = 1024 * 1024;

export interface DecisionQuery {
  /** Only chains started at or after this time (epoch ms). */
  since?: number;
  /** Only chains started at or before this time (epoch ms). */
  until?: number;
  outcome?: DecisionOutcome;
  /** A hook of this bundle ran in the chain (or decided it). */
  bundle?: string;
  profile?: string;
  event?: string;
  /** This hook ran in the chain (or decided it). */
  hook?: string;
  session?: string;
  /** Case-insensitive substring of `subject.summary`. */
  subject?: string;
  /** Tenant scope: only chains this principal fired. Absent: every chain (operators). */
  client?: string;
  /** Decisions on the page, 1…1000 (default 100). */
  limit?: number;
  /** Only records with a smaller `seq` (the cursor of the previous page). */
  beforeSeq?: number;
  /** Bytes of log read at most (default {@link DEFAULT_DECISION_SCAN_BYTES}). */
  maxScanBytes?: number;
}

export interface DecisionPage {
  decisions: DecisionRecord[];
  /** The `seq` the next page starts below; null when the log holds nothing older that could match. */
  nextBeforeSeq: number | null;
}

/** Whether `record` passes the query's filters (time, outcome, bundle, profile, event, hook, session, subject, client). */
export function decisionMatches(record: DecisionRecord, query: DecisionQuery): boolean {
  if (query.client !== undefined && record.client !== query.client) return false;
  if (query.outcome !== undefined && record.outcome !== query.outcome) return false;
  if (query.profile !== undefined && record.profile !== query.profile) return false;
  if (query.event !== undefined && record.event !== query.event) return false;
  if (query.session !== undefined && record.session !== query.session) return false;
  if (query.since !== undefined || query.until !== undefined) {
    const at = Date.parse(record.at);
    if (query.since !== undefined && !(at >= query.since)) return false;
    if (query.until !== undefined && !(at <= query.until)) return false;
  }
  if (query.bundle !== undefined && record.decided_by?.bundle !== query.bundle && !record.hooks.some((h) => h.bundle === query.bundle)) return false;
  if (query.hook !== undefined && record.decided_by?.hook !== query.hook && !record.hooks.some((h) => h.hook === query.hook)) return false;
  if (query.subject !== undefined && !record.subject.summary.toLowerCase().includes(query.subject.toLowerCase())) return false;
  return true;
}

/** `{"seq":N,"ts":"…"` at the start of every stored line (audit/record.ts sealPrepared). */
const LINE_HEAD = /^\{"seq":(\d+),"ts":"([^"]*)"/;

/**
 * One page of decisions from the log at `path` (and its rotated segments), newest first.
 *
 * @example
 * ```ts
 * const page = await queryDecisions(".vcp/audit/audit.jsonl", { outcome: "block", limit: 20 });
 * const next = await queryDecisions(".vcp/audit/audit.jsonl", { outcome: "block", limit: 20, beforeSeq: page.nextBeforeSeq! });
 * ```
 */
export async function queryDecisions(path: string, query: DecisionQuery): Promise<DecisionPage> {
  const limit = Math.min(Math.max(query.limit ?? DEFAULT_DECISION_LIMIT, 1), MAX_DECISION_LIMIT);
  const budget = { left: query.maxScanBytes ?? DEFAULT_DECISION_SCAN_BYTES };
  const decisions: DecisionRecord[] = [];
  // A record's admission time is never before its chain's start: older records cannot match `since`.
  const stopBefore = query.since;
  let lastSeq: number | null = null;
  const files = [path, ...(await listSegments(path)).map((s) => s.path).reverse()];
  for (const file of files) {
    // A rotated segment whose first record is at or above the cursor holds only newer records: skipped unread.
    if (query.beforeSeq !== undefined && file !== path && ((await firstSeqOf(file)) ?? 0) >= query.beforeSeq) continue;
    for await (const line of linesBackward(file)) {
      const head = LINE_HEAD.exec(line);
      if (head === null) continue;
      const seq = Number(head[1]);
      // Lines above the cursor (read again, within one file at most) are not charged to the bound.
      if (query.beforeSeq !== undefined && seq >= query.beforeSeq) continue;
      if (budget.left <= 0) return { decisions, nextBeforeSeq: lastSeq ?? query.beforeSeq ?? null };
      budget.left -= line.length + 1;
      lastSeq = seq;
      if (stopBefore !== undefined && Date.parse(head[2]!) < stopBefore) return { decisions, nextBeforeSeq: null };
      // Most lines are hook records: only a chain record with a decision is parsed.
      if (!line.includes('"kind":"chain"') || !line.includes('"decision":{')) continue;
      let record: { decision?: DecisionRecord };
      try {
        record = JSON.parse(line) as { decision?: DecisionRecord };
      } catch {
        continue; // `vcp-hooks audit verify` reports a damaged line; a query skips it
      }
      const decision = record.decision;
      if (decision === undefined || typeof decision !== "object" || !Array.isArray(decision.hooks)) continue;
      if (!decisionMatches(decision, query)) continue;
      decisions.push(decision);
      if (decisions.length >= limit) return { decisions, nextBeforeSeq: seq };
    }
  }
  return { decisions, nextBeforeSeq: null };
}

/** The `seq` of a log file's first record (one small read), or undefined for an empty or unreadable head. */
async function firstSeqOf(file: string): Promise<number | undefined> {
  const fh = await openIfExists(file);
  if (fh === null) return undefined;
  try {
    const head = Buffer.alloc(64);
    const got = await readFully(fh, head, 0);
    const match = LINE_HEAD.exec(head.subarray(0, got).toString("utf8"));
    return match === null ? undefined : Number(match[1]);
  } finally {
    await fh.close();
  }
}

/**
 * The complete lines of `file`, last first, read in chunks from the end (the caller stops when it has
 * enough; the file is closed then). A final line without its newline (being written) is left out. A
 * missing file has no lines.
 */
async function* linesBackward(file: string): AsyncGenerator<string> {
  const fh = await openIfExists(file);
  if (fh === null) return;
  try {
    const { size } = await fh.stat();
    let pos = size;
    // Bytes after the current chunk that belong to a line starting inside it (or before it).
    let tail: Buffer = Buffer.alloc(0);
    let trimmed = false;
    while (pos > 0) {
      const start = Math.max(0, pos - CHUNK_BYTES);
      const chunk = Buffer.alloc(pos - start);
      await readFully(fh, chunk, start);
      pos = start;
      let buf = tail.length > 0 ? Buffer.concat([chunk, tail]) : chunk;
      if (!trimmed) {
        // The live file's last line may be half written: everything after the last newline is left out.
        const nl = buf.lastIndexOf(10);
        if (nl < 0) {
          tail = buf;
          continue;
        }
        buf = buf.subarray(0, nl);
        trimmed = true;
      }
      let end = buf.length;
      for (let nl = buf.lastIndexOf(10, end - 1); nl >= 0; nl = end > 0 ? buf.lastIndexOf(10, end - 1) : -1) {
        if (nl + 1 < end) yield buf.subarray(nl + 1, end).toString("utf8");
        end = nl;
      }
      // What is left before the first newline: a whole line at the file's start, else the end of an earlier one.
      if (pos === 0) {
        if (end > 0) yield buf.subarray(0, end).toString("utf8");
        tail = Buffer.alloc(0);
      } else tail = Buffer.from(buf.subarray(0, end));
    }
  } finally {
    await fh.close();
  }
}
