/**
 * CPU cost of the audit work of one HTTP chain request (issue 15), in process: the input hash of the
 * load bench's 2.6 KB input, and the six records of a 5-hook chain (five hook records with
 * annotations, one chain record) appended and made durable, 32 chains at a time, with the default
 * redactor and `fsync: never` (the fsync itself is the kernel's, not ours). CPU time
 * (process.cpuUsage, all threads), best of three, so it holds up on a busy machine.
 *
 *   node dist/bench/audit-cost.js
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRedactor, hashInput, openAuditLog, type AuditRecordInput } from "../src/audit/index.js";
import { DEFAULTS } from "../src/config/defaults.js";
import { canonicalJson } from "../src/integrity/canonical.js";
import { cpuPerCall } from "./lib/cpu.js";
import { constitution, makeContext, preInjectEvent } from "./lib/fixtures.js";

const input = { context: makeContext(42, 2048), constitution, event: preInjectEvent, session: { id: "load-session" } };

function report(label: string, n: number, fn: () => unknown): void {
  process.stdout.write(`${label.padEnd(52)} ${cpuPerCall(n, fn, 5000).toFixed(2).padStart(7)} µs CPU\n`);
}

report("canonicalJson(input)", 50_000, () => canonicalJson(input));
report("hashInput(input) (the chain's input_hash)", 50_000, () => hashInput(input));

const dir = mkdtempSync(join(tmpdir(), "vcp-audit-cost-"));
const writer = await openAuditLog({ path: join(dir, "audit.jsonl"), fsync: "never", rotateBytes: 1 << 30, maxPending: 1 << 20, redact: createRedactor({ keys: [...DEFAULTS.redact_keys] }) });
const common = { session: "load-session", owner: "bench", chain_id: "6f1c2f0e-8a0b-4c55-9d55-2f4b2d0a1c33", hook_type: "pre_inject", input_hash: `sha256:${"cd".repeat(32)}` };
const records: AuditRecordInput[] = [0, 1, 2, 3, 4].map((i) => ({
  kind: "hook", ...common, hook: `check_${i}`, scope: "deployment", bundle: `load-${i}`, bundle_digest: `sha256:${"ab".repeat(32)}`,
  status: "continue", outcome: "ok", duration_ms: 0.123456, annotations: { check: { sensitivity: 3, topics: 8, flagged: false } },
}));
records.push({ kind: "chain", ...common, status: "completed", duration_ms: 1.2345, details: { aborted_by: null, reason: null, cascade_failure: false, hooks: 5 } });
const rounds = async (n: number): Promise<void> => {
  for (let k = 0; k < n; k++) await Promise.all(Array.from({ length: 32 }, () => writer.appendMany(records)));
};
await rounds(100);
let best = Number.POSITIVE_INFINITY;
for (let r = 0; r < 3; r++) {
  const t = process.cpuUsage();
  await rounds(300);
  const d = process.cpuUsage(t);
  best = Math.min(best, (d.user + d.system) / (300 * 32));
}
process.stdout.write(`${"6 audit records of a 5-hook chain, durable".padEnd(52)} ${best.toFixed(2).padStart(7)} µs CPU\n`);
await writer.close();
rmSync(dir, { recursive: true, force: true });
