/**
 * Audit log throughput (DESIGN §5): 10,000 hook records appended at concurrency 64, with
 * fsync "batch" (group commit) against "always" (one fdatasync per record) and "never" (no fsync,
 * the ceiling), in the same process on the same disk so the ratios mean something on a noisy machine.
 * Each append is timed until it resolves, i.e. until the record is durable.
 *
 * Usage: npx tsc -p tsconfig.json && node_modules/.bin/node dist/bench/audit.js [--records N] [--concurrency C]
 * Prints a table; writes bench/reports/audit-latest.json and an audit-<timestamp>.json copy.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { hashInput, openAuditLog, verifyAuditLog, type AuditRecordInput } from "../src/audit/index.js";
import { latencyStats, nowNs } from "./lib/stats.js";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
const argv = process.argv.slice(2);
const arg = (name: string, fallback: number) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? Number(argv[i + 1]) : fallback;
};
const RECORDS = arg("--records", 10_000);
const CONCURRENCY = arg("--concurrency", 64);
const MODES = ["batch", "always", "never"] as const;

/** A fixed, realistic hook record (~450 bytes as JSONL) with a small modification diff. */
function record(i: number): AuditRecordInput {
  return {
    kind: "hook", session: `sess-${i % 97}`, chain_id: `chain-${Math.floor(i / 5)}`, hook: "strip_pii_before_inject",
    hook_type: "pre_inject", scope: "deployment", bundle: "strip-pii", bundle_digest: `sha256:${"ab".repeat(32)}`,
    input_hash: hashInput({ i, context: { user: "u", locale: "en" } }), status: i % 10 === 0 ? "modify" : "continue",
    outcome: "ok", duration_ms: 0.04 + (i % 13) / 100,
    ...(i % 10 === 0 ? { modification: [{ op: "replace" as const, path: "/context/email", value: "[removed]" }] } : {}),
  };
}

interface Row {
  fsync: (typeof MODES)[number];
  records: number;
  concurrency: number;
  elapsed_ms: number;
  records_per_s: number;
  batches: number;
  fsyncs: number;
  records_per_batch: number;
  p50_us: number;
  p99_us: number;
  max_us: number;
  verified: boolean;
}

async function runMode(fsync: Row["fsync"]): Promise<Row> {
  const dir = await mkdtemp(join(tmpdir(), `vcp-audit-bench-${fsync}-`));
  const path = join(dir, "audit.jsonl");
  try {
    const log = await openAuditLog({ path, fsync, rotateBytes: 1 << 30, maxPending: 10_000 });
    const latencies: number[] = [];
    let next = 0;
    const t0 = nowNs();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < RECORDS) {
          const i = next++;
          const start = nowNs();
          await log.append(record(i));
          latencies.push(Number(nowNs() - start));
        }
      }),
    );
    const elapsedMs = Number(nowNs() - t0) / 1e6;
    const stats = log.stats();
    await log.close();
    const verdict = await verifyAuditLog([path]);
    const lat = latencyStats(latencies);
    return {
      fsync, records: RECORDS, concurrency: CONCURRENCY, elapsed_ms: round(elapsedMs), records_per_s: Math.round(RECORDS / (elapsedMs / 1000)),
      batches: stats.batches, fsyncs: stats.fsyncs, records_per_batch: round(RECORDS / stats.batches),
      p50_us: round(lat.p50_us), p99_us: round(lat.p99_us), max_us: round(lat.max_us), verified: verdict.ok && verdict.records === RECORDS,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const round = (n: number) => Math.round(n * 10) / 10;

const rows: Row[] = [];
for (const mode of MODES) rows.push(await runMode(mode));
const batch = rows.find((r) => r.fsync === "batch")!;
const always = rows.find((r) => r.fsync === "always")!;

const columns: Array<[keyof Row, string]> = [
  ["fsync", "fsync"], ["records_per_s", "records/s"], ["elapsed_ms", "elapsed ms"], ["batches", "writes"], ["fsyncs", "fsyncs"],
  ["records_per_batch", "rec/write"], ["p50_us", "p50 µs"], ["p99_us", "p99 µs"], ["max_us", "max µs"], ["verified", "verified"],
];
const widths = columns.map(([key, title]) => Math.max(title.length, ...rows.map((r) => String(r[key]).length)));
const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
console.log(`audit append: ${RECORDS} records, concurrency ${CONCURRENCY}, node ${process.version}, tmp ${tmpdir()}`);
console.log(line(columns.map(([, t]) => t)));
for (const r of rows) console.log(line(columns.map(([k]) => String(r[k]))));
const ratio = round(batch.records_per_s / always.records_per_s);
console.log(`group commit (batch) vs fsync always: ${ratio}x throughput`);

const report = {
  bench: "audit",
  created_at: new Date().toISOString(),
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  tmpdir: tmpdir(),
  records: RECORDS,
  concurrency: CONCURRENCY,
  results: rows,
  batch_vs_always_throughput_ratio: ratio,
};
const outDir = join(REPO_ROOT, "bench", "reports");
mkdirSync(outDir, { recursive: true });
const text = JSON.stringify(report, null, 2) + "\n";
writeFileSync(join(outDir, "audit-latest.json"), text);
writeFileSync(join(outDir, `audit-${report.created_at.replace(/[:.]/g, "-")}.json`), text);
if (rows.some((r) => !r.verified)) {
  console.error("audit bench: a log did not verify");
  process.exitCode = 1;
}
