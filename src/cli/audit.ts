/**
 * `vcp-hooks audit verify <file…>`: check a hash-chained audit log (DESIGN §5).
 *
 * `vcp-hooks audit tail|export <file>`: the decision log read back — records after a seq or since a
 * time, as stored JSON lines or OTLP/JSON logs; `tail --follow` keeps printing new records.
 */
import type { AuditHead, AuditRecord } from "../index.js";
import { EXPORT_FORMATS, followAuditRecords, formatRecords, readAuditRecords, verifyAuditLogSet, type AuditSetVerdict, type AuditVerdict, type ExportFormat, type ReplicaLogVerdict } from "../tooling.js";
import { CheckFailed, escapeControl, EXIT_FAILED, EXIT_OK, EXIT_USAGE, parseCommand, printJson, stringOption, UsageError, type Command, type Io } from "./common.js";

const USAGE = `usage: vcp-hooks audit verify <log|dir…> [--anchor <seq>:<hash>] [--json]
       vcp-hooks audit tail <file> [-n N] [--after-seq N] [--follow]
       vcp-hooks audit export <file> [--after-seq N | --since <ISO time>] [--format jsonl|otlp] [--batch N]

tail: the last N records (default 10; with --after-seq, every record after it) as stored JSON lines;
--follow keeps printing records as they are appended, across rotations, until interrupted.
export: every selected record, as stored JSON lines (default; a receiver can re-verify each hash) or
OTLP/JSON logs (one ExportLogsServiceRequest per --batch records, default 1000, one per line).

Verify an audit log: every record's hash, consecutive seqs, each prev naming the previous record's
hash, across rotated segments (a base path audit.jsonl expands to audit.jsonl.000001, … then itself).
Detects edited, deleted, reordered and truncated records; --anchor (a head recorded earlier, from
GET /v1/audit/head) also catches records cut off the end. A log whose oldest segments audit retention
deleted verifies from its first kept record, if a retention record in it names what was deleted.

Several replicas: give each replica's log, audit directory or data directory (a directory holding
neither stands for each subdirectory that does). Each replica's chain is verified on its own and
reported on its own line with the replica id its records carry; the set fails if any chain is broken,
one replica id appears in two logs, or a replica in the replica set the logs record (the peers each
replica saw in the shared store) has no log among them (MISSING, named).

Options:
  --anchor <seq>:<hash>  a head that must still be in the log
  --json                 print the verdict as JSON
Exit: 0 intact, 1 broken (names the first bad seq), 2 usage error.`;

export const auditCommand: Command = {
  name: "audit",
  summary: "audit verify|tail|export <file>: check the hash chain, read or export the decision log",
  usage: USAGE,
  async run(args, io) {
    const [sub, ...rest] = args;
    if (sub === undefined || sub === "--help" || sub === "-h") {
      io.out(USAGE);
      return sub === undefined ? EXIT_USAGE : EXIT_OK;
    }
    if (sub === "tail") return tail(rest, io);
    if (sub === "export") return exportRecords(rest, io);
    if (sub !== "verify") throw new UsageError(`audit: unknown subcommand '${escapeControl(sub)}' (expected: verify, tail, export)`);
    const { values, positionals, help } = parseCommand("audit verify", rest, { anchor: { type: "string" } }, { min: 1, max: Infinity, names: "<file…>" });
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const anchorText = stringOption("audit verify", values, "anchor");
    let anchor: AuditHead | undefined;
    if (anchorText !== undefined) {
      const m = /^(\d+):(.+)$/.exec(anchorText);
      if (!m) throw new UsageError(`audit verify: --anchor must be <seq>:<hash>, not '${escapeControl(anchorText)}'`);
      anchor = { seq: Number(m[1]), hash: m[2]! };
    }
    const set = await verifyAuditLogSet(positionals, anchor === undefined ? {} : { anchor });
    if (anchor !== undefined && set.logs.length > 1) {
      throw new UsageError(`audit verify: --anchor names one chain's head, but the paths hold ${set.logs.length} logs; verify the anchored log on its own`);
    }
    // One log: the verdict as it always was (plus `log` and `replica`); several: one line per replica.
    if (set.logs.length === 1) return reportOne(set.logs[0]!, set.missing, io);
    return reportSet(set, io);
  },
};

/** A replica's name in a report line: its id, or what a log without ids is. */
function replicaLabel(entry: ReplicaLogVerdict): string {
  const ids = entry.verdict.replicas ?? [];
  if (ids.length === 0) return entry.replica !== null ? `replica ${escapeControl(entry.replica)} (as its first record claims)` : "replica (none recorded)";
  return ids.length === 1 ? `replica ${escapeControl(ids[0]!)}` : `replica ${escapeControl(ids.at(-1)!)} (earlier ${ids.slice(0, -1).map(escapeControl).join(", ")})`;
}

function okLine(verdict: AuditVerdict & { ok: true }): string {
  const retained = verdict.retained_from;
  return `${verdict.records} record(s); head seq ${verdict.head.seq} ${verdict.head.hash}${verdict.torn_tail ? " (a torn final line, never acknowledged, was ignored)" : ""}${
    retained !== undefined ? `; starts at seq ${retained.seq}: records 1–${retained.seq - 1} were deleted by audit retention (retention record seq ${retained.recorded_at_seq}), the rest verified from there` : ""
  }`;
}

function brokenLine(verdict: AuditVerdict & { ok: false }): string {
  return `audit log broken at seq ${verdict.first_bad_seq}: ${escapeControl(verdict.reason)}${verdict.file && !verdict.reason.includes(verdict.file) ? ` (${escapeControl(verdict.file)}${verdict.line !== undefined ? `:${verdict.line}` : ""})` : ""}; ${verdict.records} record(s) verified before it`;
}

function reportOne(entry: ReplicaLogVerdict, missing: AuditSetVerdict["missing"], io: Io): number {
  const { verdict } = entry;
  // One log is one chain's verify; the peers its replica set names are a hint, not a failure.
  const peers = missing.length > 0 ? `; its replica set also names ${missing.map((m) => escapeControl(m.replica)).join(", ")} (verify their logs with it to check the set)` : "";
  if (io.json) printJson(io, { ...verdict, log: entry.log, replica: entry.replica, missing });
  else if (verdict.ok) io.out(`OK ${okLine(verdict)}${entry.replica !== null ? `; ${replicaLabel(entry)}` : ""}${peers}`);
  else throw new CheckFailed(brokenLine(verdict), "AUDIT_BROKEN");
  return verdict.ok ? EXIT_OK : EXIT_FAILED;
}

function reportSet(set: AuditSetVerdict, io: Io): number {
  if (io.json) {
    printJson(io, set);
    return set.ok ? EXIT_OK : EXIT_FAILED;
  }
  for (const entry of set.logs) {
    const { verdict } = entry;
    io.out(verdict.ok ? `OK     ${replicaLabel(entry)} ${escapeControl(entry.log)}: ${okLine(verdict)}` : `BROKEN ${replicaLabel(entry)} ${escapeControl(entry.log)}: ${brokenLine(verdict)}`);
  }
  for (const problem of set.problems) io.out(`BROKEN ${escapeControl(problem)}`);
  for (const m of set.missing) {
    io.out(`MISSING replica ${escapeControl(m.replica)}: in the replica set recorded in ${escapeControl(m.named_by.log)} (seq ${m.named_by.seq}), but its log was not given (add its log, audit directory or data directory)`);
  }
  const broken = set.logs.filter((l) => !l.verdict.ok).length;
  if (!set.ok) {
    throw new CheckFailed(
      `${broken} of ${set.logs.length} replica log(s) broken${set.problems.length > 0 ? `; ${set.problems.length} problem(s) across logs` : ""}${set.missing.length > 0 ? `; ${set.missing.length} replica log(s) missing (${set.missing.map((m) => escapeControl(m.replica)).join(", ")})` : ""}`,
      "AUDIT_BROKEN",
    );
  }
  io.out(`OK ${set.logs.length} replica log(s) verified`);
  return EXIT_OK;
}

function nonNegativeInt(command: string, values: Record<string, unknown>, name: string): number | undefined {
  const text = stringOption(command, values, name);
  if (text === undefined) return undefined;
  if (!/^\d{1,15}$/.test(text)) throw new UsageError(`${command}: --${name} must be a whole number, not '${escapeControl(text)}'`);
  return Number(text);
}

async function tail(args: string[], io: Io): Promise<number> {
  const { values, positionals, help } = parseCommand(
    "audit tail",
    args,
    { n: { type: "string", short: "n" }, "after-seq": { type: "string" }, follow: { type: "boolean", short: "f" } },
    { min: 1, max: 1, names: "<file>" },
  );
  if (help) {
    io.out(USAGE);
    return EXIT_OK;
  }
  const file = positionals[0]!;
  const afterSeqOption = nonNegativeInt("audit tail", values, "after-seq");
  const n = nonNegativeInt("audit tail", values, "n") ?? 10;
  let afterSeq = afterSeqOption ?? 0;
  if (afterSeqOption === undefined) {
    // The last n records: find the head, then start n before it.
    let head = 0;
    for await (const r of readAuditRecords(file)) head = r.seq;
    afterSeq = Math.max(0, head - n);
  }
  if (values["follow"] !== true) {
    for await (const r of readAuditRecords(file, { afterSeq })) io.out(JSON.stringify(r));
    return EXIT_OK;
  }
  const stop = new AbortController();
  const onSignal = (): void => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    for await (const r of followAuditRecords(file, { afterSeq, signal: stop.signal })) io.out(JSON.stringify(r));
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  return EXIT_OK;
}

async function exportRecords(args: string[], io: Io): Promise<number> {
  const { values, positionals, help } = parseCommand(
    "audit export",
    args,
    { "after-seq": { type: "string" }, since: { type: "string" }, format: { type: "string" }, batch: { type: "string" } },
    { min: 1, max: 1, names: "<file>" },
  );
  if (help) {
    io.out(USAGE);
    return EXIT_OK;
  }
  const format = (stringOption("audit export", values, "format") ?? "jsonl") as ExportFormat;
  if (!EXPORT_FORMATS.includes(format)) throw new UsageError(`audit export: --format must be ${EXPORT_FORMATS.join(" or ")}, not '${escapeControl(format)}'`);
  const sinceText = stringOption("audit export", values, "since");
  let since: Date | undefined;
  if (sinceText !== undefined) {
    since = new Date(sinceText);
    if (Number.isNaN(since.getTime())) throw new UsageError(`audit export: --since must be an ISO-8601 time (e.g. 2026-11-26T00:00:00Z), not '${escapeControl(sinceText)}'`);
  }
  const batchSize = nonNegativeInt("audit export", values, "batch") ?? 1000;
  if (batchSize < 1) throw new UsageError("audit export: --batch must be at least 1");
  const afterSeq = nonNegativeInt("audit export", values, "after-seq") ?? 0;
  let batch: AuditRecord[] = [];
  const flush = (): void => {
    if (batch.length > 0) io.out(formatRecords(batch, format).replace(/\n$/, ""));
    batch = [];
  };
  for await (const r of readAuditRecords(positionals[0]!, { afterSeq, ...(since ? { since } : {}) })) {
    batch.push(r);
    if (batch.length >= batchSize) flush();
  }
  flush();
  return EXIT_OK;
}
