/**
 * Audit log (DESIGN §5, spec §8.2.3): a hash-chained, append-only JSONL writer with group commit,
 * backpressure and rotation; retention of shipped segments; its verifier; RFC 6902 diffs and input hashes for records; and
 * redaction for audit payloads and log lines (the operational logger is src/observe/logger.ts).
 */
export { openAuditLog, type AuditWriter, type AuditWriterOptions, type AuditWriterStats, type AuditHead, type AuditBudget } from "./writer.js";
export { verifyAuditLog, type AuditVerdict, type VerifyAuditOptions, type RetainedFrom, type ReplicaSetEntry } from "./verify.js";
export { verifyAuditLogSet, type AuditSetVerdict, type ReplicaLogVerdict } from "./verify-set.js";
export { GENESIS_HASH, hashInput, recordHash, REPLICA_SET_EVENT, RETENTION_EVENT, type AuditRecord, type AuditRecordInput } from "./record.js";
export { diffForAudit } from "./diff.js";
export { capChainAudit, AUDIT_TRUNCATED } from "./chain-budget.js";
export { segmentPath, listSegments } from "./files.js";
export {
  createRedactor,
  redactString,
  REDACTED,
  type Redactor,
  type RedactorOptions,
} from "./redact.js";
export { readAuditRecords, followAuditRecords, type ReadOptions } from "./reader.js";
export { queryDecisions, decisionMatches, DEFAULT_DECISION_SCAN_BYTES, DEFAULT_DECISION_LIMIT, MAX_DECISION_LIMIT, type DecisionQuery, type DecisionPage } from "./decisions.js";
export { formatRecords, toJsonLines, toOtlpLogs, EXPORT_FORMATS, type ExportFormat } from "./export.js";
export { startAuditSink, readSinkCursor, sinkCursorPath, type AuditSink, type AuditSinkOptions, type AuditSinkStats } from "./sink.js";
export { startAuditRetention, type AuditRetention, type AuditRetentionOptions, type AuditRetentionPolicy, type AuditRetentionStats } from "./retention.js";
