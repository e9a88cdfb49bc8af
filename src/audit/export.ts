/**
 * Audit records in the two shapes a decision-log consumer takes: JSON lines (each record exactly as
 * stored, so a receiver can re-verify its hash) and OTLP/JSON logs (OpenTelemetry's `ExportLogsServiceRequest`,
 * what an OpenTelemetry Collector's otlphttp receiver accepts at `/v1/logs`).
 */
import type { AuditRecord } from "./record.js";

export type ExportFormat = "jsonl" | "otlp";
export const EXPORT_FORMATS: readonly ExportFormat[] = ["jsonl", "otlp"];

/** One JSON line per record, each ending in a newline. */
export function toJsonLines(records: readonly AuditRecord[]): string {
  return records.map((r) => `${JSON.stringify(r)}\n`).join("");
}

type OtlpValue = { stringValue: string } | { intValue: string } | { doubleValue: number } | { boolValue: boolean };

function otlpValue(value: unknown): OtlpValue {
  if (typeof value === "boolean") return { boolValue: value };
  if (typeof value === "number") return Number.isSafeInteger(value) ? { intValue: String(value) } : { doubleValue: value };
  if (typeof value === "string") return { stringValue: value };
  return { stringValue: JSON.stringify(value) };
}

function severityOf(r: AuditRecord): { severityNumber: number; severityText: string } {
  const failed = r.outcome !== undefined && r.outcome !== "ok" && !r.outcome.startsWith("skipped_");
  return failed || r.status === "aborted" ? { severityNumber: 13, severityText: "WARN" } : { severityNumber: 9, severityText: "INFO" };
}

/**
 * An OTLP/JSON logs request body holding `records` (one log record each, every field an attribute).
 * Records are grouped by the replica that wrote them (issue 18): one `resourceLogs` entry per replica,
 * its resource naming it as `service.instance.id` (OpenTelemetry's attribute for one instance of a
 * service), so a collector receiving several replicas' logs keeps each replica's chain apart. Records
 * without a replica id (logs written before replicas had ids) share one resource without it.
 */
export function toOtlpLogs(records: readonly AuditRecord[], service = "vcp-hooks"): string {
  const byReplica = new Map<string | undefined, AuditRecord[]>();
  for (const r of records) {
    const group = byReplica.get(r.replica);
    if (group === undefined) byReplica.set(r.replica, [r]);
    else group.push(r);
  }
  const resourceLogs = [...byReplica].map(([replica, group]) => ({
    resource: {
      attributes: [
        { key: "service.name", value: { stringValue: service } },
        ...(replica !== undefined ? [{ key: "service.instance.id", value: { stringValue: replica } }] : []),
      ],
    },
    scopeLogs: [{ scope: { name: "vcp-hooks.audit" }, logRecords: group.map(otlpLogRecord) }],
  }));
  return JSON.stringify({ resourceLogs });
}

function otlpLogRecord(r: AuditRecord) {
  const nanos = `${BigInt(Date.parse(r.ts)) * 1_000_000n}`;
  const attributes = Object.entries(r)
    .filter(([, v]) => v !== undefined)
    .map(([key, v]) => ({ key: `vcp.${key}`, value: otlpValue(v) }));
  const what =
    r.kind === "registry" || r.kind === "bundle" || r.kind === "retention" || r.kind === "replica_set" ? (r.event ?? r.kind)
    : r.kind === "chain" ? chainBody(r)
    : r.kind === "approval_request" || r.kind === "approval_decision" ? `${r.kind} ${r.hook ?? ""} ${r.status ?? ""}`
    : `hook ${r.hook ?? ""} ${r.outcome ?? ""}`;
  return { timeUnixNano: nanos, observedTimeUnixNano: nanos, ...severityOf(r), body: { stringValue: what.trim() }, attributes };
}

/** A chain record's one-line body: with its decision record, what was decided about what (docs/decisions.md). */
function chainBody(r: AuditRecord): string {
  const d = r.decision as { profile?: unknown; event?: unknown; outcome?: unknown; subject?: { summary?: unknown } } | undefined;
  if (d === undefined || typeof d !== "object" || d === null) return `chain ${r.hook_type ?? ""} ${r.status ?? ""}`;
  return `chain ${String(d.profile)} ${String(d.event)} ${String(d.outcome)}: ${String(d.subject?.summary ?? "")}`;
}

export function formatRecords(records: readonly AuditRecord[], format: ExportFormat): string {
  return format === "jsonl" ? toJsonLines(records) : `${toOtlpLogs(records)}\n`;
}
