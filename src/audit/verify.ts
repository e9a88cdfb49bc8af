import { stat } from "node:fs/promises";
import { isSegmentPath, listSegments, readLines } from "./files.js";
import { GENESIS_HASH, recordHash, REPLICA_SET_EVENT, RETENTION_EVENT } from "./record.js";
import type { AuditHead } from "./writer.js";

/**
 * `replicas`: the replica ids the verified records name, in order of first appearance (issue 18); left
 * out when no record names one (a log written before replicas had ids).
 *
 * `retained_from`: the log starts after seq 1 because audit retention deleted its oldest segments
 * (audit/retention.ts): `seq` is the first record kept, `recorded_at_seq` the verified retention
 * record that names seq − 1 and its hash. Left out for a log that starts at seq 1.
 *
 * `replica_set`: the replicas named by the verified `replica_set` records (the peers this replica saw
 * in its shared store), each with the seq of the first record naming it; left out when there is none.
 */
export type AuditVerdict =
  | { ok: true; records: number; head: AuditHead; torn_tail?: boolean; retained_from?: RetainedFrom; replicas?: string[]; replica_set?: ReplicaSetEntry[] }
  | { ok: false; records: number; first_bad_seq: number; reason: string; file?: string; line?: number; replicas?: string[]; replica_set?: ReplicaSetEntry[] };

export interface RetainedFrom {
  seq: number;
  recorded_at_seq: number;
}

export interface ReplicaSetEntry {
  replica: string;
  seq: number;
}

export interface VerifyAuditOptions {
  /**
   * A head recorded elsewhere earlier (writer.head(), `GET /v1/audit/head`). The log must still hold
   * that exact record; this is what catches records cut off the END of a log, which the chain alone
   * cannot show.
   */
  anchor?: AuditHead;
}

/**
 * Verify a hash-chained audit log (DESIGN §5): every record's hash, consecutive seqs from 1, and each
 * `prev` naming the hash of the record before it, across files in order.
 *
 * Paths: a base path (`audit.jsonl`) expands to its rotated segments `audit.jsonl.000001`, `.000002`, …
 * ascending, then the base file itself, which is how the writer rotates; a path that already names a
 * segment (`….NNNNNN`) is taken alone. Several paths are read in the order given.
 *
 * Detects an edited record (hash mismatch), a deleted one (seq gap), reordering (seq out of order), a
 * record rewritten with a recomputed hash (the next record's prev no longer matches), and garbage or
 * truncation in the middle. A log whose first record is not seq 1 verifies only when audit retention
 * deleted exactly what precedes it: a verified `retention` record later in the chain must name the
 * seq before the first one and the hash that record's `prev` carries (`retained_from`); otherwise its
 * first bad seq is 1. A final line without its newline — a write torn by a crash, never
 * acknowledged — is reported as `ok: true, torn_tail: true` and not counted. Any other defect is a
 * failure naming the first bad seq: the seq the first failing line should have had.
 *
 * @example
 * ```ts
 * const verdict = await verifyAuditLog([".vcp/audit/audit.jsonl"]);
 * if (!verdict.ok) console.error(`audit log broken at seq ${verdict.first_bad_seq}: ${verdict.reason}`);
 * ```
 */
export async function verifyAuditLog(paths: string[], options: VerifyAuditOptions = {}): Promise<AuditVerdict> {
  const files: string[] = [];
  for (const path of paths) {
    if (isSegmentPath(path)) {
      files.push(path);
      continue;
    }
    const segments = await listSegments(path);
    files.push(...segments.map((s) => s.path));
    if (await isFile(path)) files.push(path);
    else if (segments.length === 0) return { ok: false, records: 0, first_bad_seq: 1, reason: `no audit log at ${path}`, file: path };
  }

  let records = 0;
  let head: AuditHead = { seq: 0, hash: GENESIS_HASH };
  let anchorSeen = false;
  const replicas: string[] = [];
  const replicaSet: ReplicaSetEntry[] = [];
  /** The log starts after seq 1: where, and where its first record was (for the verdict). */
  let startsAfter: { seq: number; hash: string; file: string } | null = null;
  /** Segment ends named by verified retention records: last seq → [last hash, seq of the record]. */
  const retainedEnds = new Map<number, [string, number]>();
  for (let f = 0; f < files.length; f++) {
    const file = files[f]!;
    let lineNo = 0;
    for await (const { text, terminated } of readLines(file)) {
      lineNo++;
      const expected = head.seq + 1;
      const bad = (reason: string): AuditVerdict => ({ ok: false, records, first_bad_seq: expected, reason, file, line: lineNo, ...named() });
      if (!terminated) {
        if (f === files.length - 1) return finish(true);
        return bad("rotated segment ends with an incomplete line (truncated)");
      }
      let record: Record<string, unknown>;
      try {
        const parsed: unknown = JSON.parse(text);
        if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return bad("record is not a JSON object");
        record = parsed as Record<string, unknown>;
      } catch {
        return bad("record is not valid JSON (edited or truncated)");
      }
      if (typeof record.hash !== "string" || recordHash(record) !== record.hash) {
        return bad(`hash mismatch: record ${String(record.seq)} was edited`);
      }
      // The first record of a log whose oldest segments retention deleted: the chain is checked from
      // here, and finish() requires a retention record accounting for what came before.
      if (records === 0 && head.seq === 0 && Number.isSafeInteger(record.seq) && (record.seq as number) > 1 && typeof record.prev === "string") {
        startsAfter = { seq: (record.seq as number) - 1, hash: record.prev, file };
        head = { seq: startsAfter.seq, hash: startsAfter.hash };
      }
      const failure = verifyRecord(record, lineNo, file);
      if (failure !== null) return failure;
    }
  }
  return finish(false);

  /** Checks seq and prev against the head, then takes the record in; a failure verdict, or null. */
  function verifyRecord(record: Record<string, unknown>, lineNo: number, file: string): AuditVerdict | null {
    const expected = head.seq + 1;
    const bad = (reason: string): AuditVerdict => ({ ok: false, records, first_bad_seq: expected, reason, file, line: lineNo, ...named() });
    if (record.seq !== expected) {
      const got = record.seq;
      return bad(
        typeof got === "number" && got > expected
          ? `seq jumps from ${head.seq} to ${got}: record(s) deleted or reordered`
          : `seq ${String(got)} follows ${head.seq}: records reordered or duplicated`,
      );
    }
    if (record.prev !== head.hash) {
      return bad(
        expected === 1
          ? "first record does not start from the genesis hash (records before it are missing)"
          : `prev does not match the hash of seq ${head.seq}: that record was altered or this one forged`,
      );
    }
    head = { seq: expected, hash: record.hash as string };
    records++;
    if (typeof record.replica === "string" && replicas.at(-1) !== record.replica && !replicas.includes(record.replica)) replicas.push(record.replica);
    if (record.kind === "retention" && record.event === RETENTION_EVENT) {
      const deleted = (record.details as { deleted?: unknown } | undefined)?.deleted;
      for (const segment of Array.isArray(deleted) ? deleted : []) {
        const { last_seq: lastSeq, last_hash: lastHash } = (segment ?? {}) as { last_seq?: unknown; last_hash?: unknown };
        if (Number.isSafeInteger(lastSeq) && typeof lastHash === "string") retainedEnds.set(lastSeq as number, [lastHash, expected]);
      }
    }
    if (record.kind === "replica_set" && record.event === REPLICA_SET_EVENT) {
      const ids = (record.details as { replicas?: unknown } | undefined)?.replicas;
      for (const id of Array.isArray(ids) ? ids : []) {
        if (typeof id === "string" && !replicaSet.some((e) => e.replica === id)) replicaSet.push({ replica: id, seq: expected });
      }
    }
    if (options.anchor && options.anchor.seq === expected) {
      if (options.anchor.hash !== record.hash) return bad(`record ${expected} differs from the anchored head`);
      anchorSeen = true;
    }
    return null;
  }

  function finish(torn: boolean): AuditVerdict {
    let retainedFrom: RetainedFrom | undefined;
    if (startsAfter !== null) {
      const retained = retainedEnds.get(startsAfter.seq);
      if (retained === undefined || retained[0] !== startsAfter.hash) {
        return {
          ok: false, records: 0, first_bad_seq: 1, file: startsAfter.file, line: 1, ...named(),
          reason: `the log starts at seq ${startsAfter.seq + 1}: records 1–${startsAfter.seq} are missing and no retention record in it ${retained === undefined ? "names them" : `names seq ${startsAfter.seq} with the hash record ${startsAfter.seq + 1} chains to`} (deleted by hand, or its start cut off)`,
        };
      }
      retainedFrom = { seq: startsAfter.seq + 1, recorded_at_seq: retained[1] };
      // An anchor in the deleted part is checkable only at the boundary retention recorded.
      if (options.anchor && options.anchor.seq > 0 && options.anchor.seq <= startsAfter.seq) {
        if (options.anchor.seq === startsAfter.seq && options.anchor.hash === startsAfter.hash) anchorSeen = true;
        else {
          return { ok: false, records, first_bad_seq: options.anchor.seq, reason: `the anchored head seq ${options.anchor.seq} was deleted by audit retention (the log starts at seq ${startsAfter.seq + 1}): it cannot be checked; anchor a newer head`, ...named() };
        }
      }
    }
    if (options.anchor && options.anchor.seq > 0 && !anchorSeen) {
      return { ok: false, records, first_bad_seq: head.seq + 1, reason: `log ends at seq ${head.seq}, before the anchored head seq ${options.anchor.seq} (truncated)`, ...named() };
    }
    return { ok: true, records, head, ...(torn ? { torn_tail: true } : {}), ...(retainedFrom !== undefined ? { retained_from: retainedFrom } : {}), ...named() };
  }

  function named(): { replicas?: string[]; replica_set?: ReplicaSetEntry[] } {
    return { ...(replicas.length > 0 ? { replicas: [...replicas] } : {}), ...(replicaSet.length > 0 ? { replica_set: [...replicaSet] } : {}) };
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
