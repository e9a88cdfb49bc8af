/**
 * `vcp-hooks audit verify <file…>`: check a hash-chained audit log (DESIGN §5). The verifier is
 * looked up on the public API at run time, so this command degrades to "not available" in a build
 * that does not export it yet, rather than failing to load the whole CLI.
 */
import * as api from "../index.js";
import { CheckFailed, escapeControl, EXIT_FAILED, EXIT_OK, EXIT_USAGE, parseCommand, printJson, stringOption, UsageError, type Command } from "./common.js";

const USAGE = `usage: vcp-hooks audit verify <file…> [--anchor <seq>:<hash>] [--json]

Verify an audit log: every record's hash, consecutive seqs, each prev naming the previous record's
hash, across rotated segments (a base path audit.jsonl expands to audit.jsonl.000001, … then itself).
Detects edited, deleted, reordered and truncated records; --anchor (a head recorded earlier, from
GET /v1/audit/head) also catches records cut off the end.

Options:
  --anchor <seq>:<hash>  a head that must still be in the log
  --json                 print the verdict as JSON
Exit: 0 intact, 1 broken (names the first bad seq), 2 usage error or not available in this build.`;

interface AuditHead {
  seq: number;
  hash: string;
}
type Verdict =
  | { ok: true; records: number; head: AuditHead; torn_tail?: boolean }
  | { ok: false; records: number; first_bad_seq: number; reason: string; file?: string; line?: number };
type VerifyAuditLog = (paths: string[], options?: { anchor?: AuditHead }) => Promise<Verdict>;

export const auditCommand: Command = {
  name: "audit",
  summary: "audit verify <file…>: check the audit log's hash chain",
  usage: USAGE,
  async run(args, io) {
    const [sub, ...rest] = args;
    if (sub === undefined || sub === "--help" || sub === "-h") {
      io.out(USAGE);
      return sub === undefined ? EXIT_USAGE : EXIT_OK;
    }
    if (sub !== "verify") throw new UsageError(`audit: unknown subcommand '${sub}' (expected: verify)`);
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
    const verify = (api as unknown as Record<string, unknown>)["verifyAuditLog"];
    if (typeof verify !== "function") {
      io.err("vcp-hooks audit verify: not available in this build (verifyAuditLog is not exported by the library yet)");
      return EXIT_USAGE;
    }
    const verdict = await (verify as VerifyAuditLog)(positionals, anchor === undefined ? {} : { anchor });
    if (io.json) printJson(io, verdict);
    else if (verdict.ok) {
      io.out(`OK ${verdict.records} record(s); head seq ${verdict.head.seq} ${verdict.head.hash}${verdict.torn_tail ? " (a torn final line, never acknowledged, was ignored)" : ""}`);
    } else {
      throw new CheckFailed(
        `audit log broken at seq ${verdict.first_bad_seq}: ${escapeControl(verdict.reason)}${verdict.file && !verdict.reason.includes(verdict.file) ? ` (${escapeControl(verdict.file)}${verdict.line !== undefined ? `:${verdict.line}` : ""})` : ""}; ${verdict.records} record(s) verified before it`,
        "AUDIT_BROKEN",
      );
    }
    return verdict.ok ? EXIT_OK : EXIT_FAILED;
  },
};
