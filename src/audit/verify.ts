import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { isSegmentPath, listSegments } from "./files.js";
import { GENESIS_HASH, recordHash } from "./record.js";
import type { AuditHead } from "./writer.js";

/**
 * `replicas`: the replica ids the verified records name, in order of first appearance (issue 18); left
 * out when no record names one (a log written before replicas had ids).
 */
export type AuditVerdict =
  | { ok: true; records: number; head: AuditHead; torn_tail?: boolean; replicas?: string[] }
  | { ok: false; records: number; first_bad_seq: number; reason: string; file?: string; line?: number; replicas?: string[] };

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
 * truncation in the middle. A final line without its newline — a write torn by a crash, never
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
      head = { seq: expected, hash: record.hash };
      records++;
      if (typeof record.replica === "string" && replicas.at(-1) !== record.replica && !replicas.includes(record.replica)) replicas.push(record.replica);
      if (options.anchor && options.anchor.seq === expected) {
        if (options.anchor.hash !== record.hash) return bad(`record ${expected} differs from the anchored head`);
        anchorSeen = true;
      }
    }
  }
  return finish(false);

  function finish(torn: boolean): AuditVerdict {
    if (options.anchor && options.anchor.seq > 0 && !anchorSeen) {
      return { ok: false, records, first_bad_seq: head.seq + 1, reason: `log ends at seq ${head.seq}, before the anchored head seq ${options.anchor.seq} (truncated)`, ...named() };
    }
    return torn ? { ok: true, records, head, torn_tail: true, ...named() } : { ok: true, records, head, ...named() };
  }

  function named(): { replicas?: string[] } {
    return replicas.length > 0 ? { replicas: [...replicas] } : {};
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Lines of a file, each with whether its newline was there (a streaming split on byte 10). */
async function* readLines(file: string): AsyncGenerator<{ text: string; terminated: boolean }> {
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of createReadStream(file, { highWaterMark: 1 << 20 })) {
    let buf: Buffer = rest.length > 0 ? Buffer.concat([rest, chunk as Buffer]) : (chunk as Buffer);
    let nl: number;
    while ((nl = buf.indexOf(10)) >= 0) {
      yield { text: buf.subarray(0, nl).toString("utf8"), terminated: true };
      buf = buf.subarray(nl + 1);
    }
    rest = Buffer.from(buf);
  }
  if (rest.length > 0) yield { text: rest.toString("utf8"), terminated: false };
}
