/*
 * The audit trail as the runtime's facade shows it: which log a runtime writes, the read API
 * (`runtime.audit`, `runtime.decisions`), its part of `status()` and of the metrics, and the records
 * of refused installs. Each works with the log off too: reads are AUDIT_DISABLED, status says so.
 */
import { VcpError } from "../errors.js";
import type { AuditRecord, AuditRetentionStats, DecisionPage, DecisionQuery } from "../audit/index.js";
import type { MetricsSnapshot } from "../observe/metrics.js";
import { defaultAuditPath, type AuditOptions, type AuditQuery, type AuditTrail } from "./audit-trail.js";

/** `runtime.status().audit`. */
export interface AuditStatus {
  enabled: boolean;
  /** The id stamped on every record of this replica's chain (null when the log is off). */
  replica: string | null;
  head: { seq: number; hash: string } | null;
  pending: number;
  lag_ms: number;
  /**
   * `audit.retention` as of its last run (null without it): what the log takes on disk, what was
   * deleted, and whether segments past a limit are held because the sink has not shipped them.
   */
  retention: AuditRetentionStats | null;
}

/** The audit log (DESIGN §6.2 `GET /v1/audit`, `GET /v1/audit/head`); AUDIT_DISABLED when off. */
export interface AuditApi {
  query(query?: AuditQuery): Promise<AuditRecord[]>;
  head(): { seq: number; hash: string };
}

/**
 * Decision records read back from the audit log (`GET /v1/decisions`, docs/decisions.md): one page,
 * newest first; `query.client` scopes it to the chains one principal fired. AUDIT_DISABLED when off.
 */
export interface DecisionsApi {
  query(query: DecisionQuery): Promise<DecisionPage>;
}

/**
 * The audit log a runtime writes: `audit`, else `<dataDir>/audit/audit.jsonl`, else none.
 *
 * @example
 * ```ts
 * auditOptionsOf({ dataDir: ".vcp" }); // → { path: ".vcp/audit/audit.jsonl" }
 * ```
 */
export function auditOptionsOf(options: { audit?: AuditOptions | false | undefined; dataDir?: string | undefined; redactKeys?: readonly string[] | undefined }): AuditOptions | undefined {
  if (options.audit === false) return undefined;
  return options.audit ?? (options.dataDir !== undefined ? { path: defaultAuditPath(options.dataDir), ...(options.redactKeys ? { redactKeys: options.redactKeys } : {}) } : undefined);
}

/** `runtime.audit` and `runtime.decisions` over the trail, or AUDIT_DISABLED without one. */
export function auditApi(trail: AuditTrail | undefined): { audit: AuditApi; decisions: DecisionsApi } {
  return {
    audit: {
      query: (query) => (trail === undefined ? Promise.reject(auditDisabled()) : trail.query(query)),
      head: () => {
        if (trail === undefined) throw auditDisabled();
        return trail.head();
      },
    },
    decisions: {
      query: (query) => (trail === undefined ? Promise.reject(auditDisabled()) : trail.decisions(query)),
    },
  };
}

/** `runtime.status().audit`. */
export function auditStatus(trail: AuditTrail | undefined, replica: string): AuditStatus {
  if (trail === undefined) return { enabled: false, replica: null, head: null, pending: 0, lag_ms: 0, retention: null };
  const stats = trail.stats();
  return { enabled: true, replica, head: trail.head(), pending: stats.pending, lag_ms: stats.lagMs, retention: trail.retention() };
}

/** The audit log's gauges of a metrics scrape (zeros without a log). */
export function auditGauges(trail: AuditTrail | undefined): Pick<MetricsSnapshot, "auditLagMs" | "auditPending" | "auditWritten" | "auditBytes" | "auditWriteFailures" | "auditRetention"> {
  const stats = trail?.stats();
  return {
    auditLagMs: stats?.lagMs ?? 0,
    auditPending: stats?.pending ?? 0,
    auditWritten: stats?.written ?? 0,
    auditBytes: stats?.bytes ?? 0,
    auditWriteFailures: stats?.writeFailures ?? 0,
    auditRetention: trail?.retention() ?? null,
  };
}

/**
 * Every refused install in the audit log with its code (EXEC_DISABLED, EXEC_NOT_ALLOWED, …): the
 * bundle manager's `onRefused` (install/bundles.ts). Nothing without a log.
 */
export function recordRefusedInstall(trail: AuditTrail | undefined) {
  return async ({ bundle, digest, error, principal }: { bundle: string | undefined; digest: string | undefined; error: unknown; principal: { id: string } }): Promise<void> => {
    if (trail === undefined) return;
    const coded = error instanceof VcpError ? error : undefined;
    await trail.recordBundleRefusal({
      bundle, digest, principal: principal.id,
      code: coded?.code ?? "INTERNAL",
      message: error instanceof Error ? error.message : String(error),
      ...(coded?.details !== undefined ? { details: coded.details } : {}),
      // The change is live in the shared store, only this replica's data directory refused it (install/bundles.ts).
      ...(coded?.code === "PUBLISHED_NOT_PERSISTED" ? { published: true } : {}),
    });
  };
}

function auditDisabled(): VcpError {
  return new VcpError("AUDIT_DISABLED", "the audit log is not enabled for this runtime (set dataDir or audit)");
}
