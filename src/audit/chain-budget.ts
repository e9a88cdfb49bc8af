/**
 * The per-chain audit budget (`audit.max_chain_bytes`): the records of one chain — one per hook and
 * one for the chain — together take at most this many bytes of log. Each hook's diff and annotations
 * were capped on their own (64 KiB each), but nothing bounded their sum, so one request to a few
 * ordinary rewriting policies wrote over 100× the audit of a benign one (bench/audit-amplification.ts).
 *
 * Above the budget the largest payload fields of the chain's hook records (`modification`,
 * `annotations`, `details`) are replaced by a marker, largest first, until the records fit. Records
 * are never dropped and the fields every record carries (hook, status, outcome, input hash, …) are
 * never cut: a chain of very many hooks may stay above the budget by those alone. The marker says
 * what was cut and why, and is hashed into the record like any value, so `audit verify` holds:
 *
 * ```
 *  modification → [{ "_truncated": true, "code": "AUDIT_TRUNCATED", "cap": "audit_chain", "ops": 900, "bytes": 63610, "limit": 65536 }]
 *  annotations  →  { "_truncated": true, "code": "AUDIT_TRUNCATED", "cap": "audit_chain", "bytes": 18890, "limit": 65536 }
 *  details      →  { "_truncated": true, "code": "AUDIT_TRUNCATED", "cap": "audit_chain", "bytes": 9120, "limit": 65536,
 *                    "reason": "<first 256 chars>", "error_code": "…" }
 *  chain record details.audit_truncated = { "fields": 3, "bytes": 190110, "limit": 65536 }
 * ```
 */
import type { AuditRecordInput } from "./record.js";

/** The code every budget marker carries (docs/http-api.md, "Limits"). */
export const AUDIT_TRUNCATED = "AUDIT_TRUNCATED";

/**
 * Bytes a stored line adds to what the caller hands the writer: `seq`, `ts`, `prev`, `hash`, the
 * replica id and their keys (≈ 230 bytes with a 64-character replica id), rounded up.
 */
export const STORED_OVERHEAD = 320;
/** Characters of a hook's reason and error message kept in a `details` marker. */
const KEPT_TEXT = 256;

const CUTTABLE = ["modification", "annotations", "details"] as const;
type Cuttable = (typeof CUTTABLE)[number];

interface Field {
  record: number;
  field: Cuttable;
  bytes: number;
}

const byteLength = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");

function clipText(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  return value.length > KEPT_TEXT ? `${value.slice(0, KEPT_TEXT)}…` : value;
}

function marker(field: Cuttable, value: unknown, bytes: number, limit: number): unknown {
  const mark = { _truncated: true, code: AUDIT_TRUNCATED, cap: "audit_chain", bytes, limit };
  if (field === "modification") return [{ ...mark, ops: Array.isArray(value) ? value.length : 0 }];
  if (field === "details") {
    // Why the hook decided what it did stays readable, shortened.
    const d = (value ?? {}) as { reason?: unknown; error?: { code?: unknown; message?: unknown } | null };
    const reason = clipText(d.reason);
    const code = typeof d.error?.code === "string" ? d.error.code : undefined;
    const message = clipText(d.error?.message);
    return { ...mark, ...(reason !== undefined ? { reason } : {}), ...(code !== undefined ? { error_code: code } : {}), ...(message !== undefined ? { error_message: message } : {}) };
  }
  return mark;
}

/**
 * `records` (a chain's hook records, its chain record last) within `maxBytes`: the same array when
 * they fit, else copies with the largest payload fields replaced by markers and the chain record's
 * `details.audit_truncated` saying how many fields and bytes were cut.
 *
 * @example
 * ```ts
 * const fitted = capChainAudit(records, 65_536);
 * await writer.appendMany(fitted);
 * ```
 */
export function capChainAudit(records: AuditRecordInput[], maxBytes: number): AuditRecordInput[] {
  // One JSON text for all: its bytes less the brackets and commas are the records' own, summed.
  let total = byteLength(records) - 2 - Math.max(records.length - 1, 0) + STORED_OVERHEAD * records.length;
  if (total <= maxBytes) return records;
  // Over the budget (rare): the sizes of the fields that can be cut, measured only now.
  const fields: Field[] = [];
  records.forEach((record, i) => {
    // The chain record's own details (who aborted, the hook count) are small and always kept.
    if (record.kind !== "hook") return;
    for (const field of CUTTABLE) {
      if (record[field] !== undefined) fields.push({ record: i, field, bytes: byteLength(record[field]) });
    }
  });
  // Room for the note the chain record gets (`details.audit_truncated`).
  const target = maxBytes - 96;
  fields.sort((a, b) => b.bytes - a.bytes);
  const out = records.map((r) => ({ ...r }));
  let cutFields = 0;
  let cutBytes = 0;
  for (const f of fields) {
    if (total <= target) break;
    const record = out[f.record]!;
    const replacement = marker(f.field, record[f.field], f.bytes, maxBytes);
    const saved = f.bytes - byteLength(replacement);
    // A field no larger than its marker is left alone: cutting it would not help.
    if (saved <= 0) continue;
    (record as Record<Cuttable, unknown>)[f.field] = replacement;
    total -= saved;
    cutFields++;
    cutBytes += f.bytes;
  }
  const chain = out[out.length - 1];
  if (total > target && chain?.kind === "chain" && chain.decision !== undefined) {
    // The decision record is kept whole when it can be (GET /v1/decisions reads it): its per-hook
    // reasons go first, then the per-hook list and the changes (their counts stay), never its verdict.
    const before = byteLength(chain.decision);
    chain.decision = shrinkDecision(chain.decision as DecisionLike, total - target);
    const saved = before - byteLength(chain.decision);
    if (saved > 0) {
      total -= saved;
      cutFields++;
      cutBytes += saved;
    }
  }
  if (cutFields > 0 && chain?.kind === "chain") {
    chain.details = { ...(chain.details as Record<string, unknown> | undefined), audit_truncated: { fields: cutFields, bytes: cutBytes, limit: maxBytes } };
  }
  return out;
}

interface DecisionLike {
  hooks?: Array<Record<string, unknown>>;
  changes?: unknown[];
  [key: string]: unknown;
}

/** A decision record `excess` bytes smaller if it can be: hook reasons dropped, then hooks and changes (counted). */
function shrinkDecision(decision: DecisionLike, excess: number): DecisionLike {
  const hooks = Array.isArray(decision.hooks) ? decision.hooks : [];
  const withoutReasons: DecisionLike = { ...decision, hooks: hooks.map(({ reason: _reason, ...rest }) => rest) };
  if (byteLength(decision) - byteLength(withoutReasons) >= excess) return withoutReasons;
  const changes = Array.isArray(decision.changes) ? decision.changes : [];
  return { ...decision, hooks: [], hooks_omitted: hooks.length, changes: [], ...(changes.length > 0 ? { changes_omitted: changes.length + (typeof decision.changes_omitted === "number" ? decision.changes_omitted : 0) } : {}) };
}
