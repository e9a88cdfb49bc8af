/**
 * vcp-hooks sandbox bench (`vcp-hooks bench sandbox`, `npm run bench:sandbox`): every case of
 * sandbox/corpus/ through the real runtime (real bundles, the real sandbox process) while
 * well-behaved chains of other bundles run concurrently, plus integrity attacks on the constitution
 * checker, plus the scenario attacks (bench/sandbox/scenario.ts: several tenants at once, for the
 * tenant-isolation and attribution categories). Writes report.json (versioned schema, bench/sandbox/report.ts), report.md and
 * report.html (self-contained, bench/sandbox/report-html.ts: what the operator console shows); with
 * --compare, also compare.json and compare.md against an earlier report.json.
 *
 *   node --no-node-snapshot dist/bench/sandbox.js [--out dir] [--compare report.json] [--quick] [--filter regex]
 *
 * Exit status 1 if any case is not contained (a failed run of the bench itself exits 2).
 *
 * Per case:
 * ```
 *   background load ──────────────────────────────────────────────────────────────▶ (4 in flight)
 *   attack:  install ─ fire() ……… resolved ─ [restart?] ─ well-behaved chain served ─ remove
 *            │         ├─ regained_ms ─────┤                                    │
 *            │         ├─ recovered_ms ─────────────────────────────────────────┤
 *            ├─ background window (≥ minWindowMs) ──────────────────────────────┤
 * ```
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRuntime, type Runtime, type RuntimeOptions } from "../src/index.js";
import { environment, repoRoot, writeReport } from "./lib/report-io.js";
import { nowNs } from "./lib/stats.js";
import { assertComparable, compareReports, renderComparison, type Comparison } from "./sandbox/compare.js";
import { loadCorpus, type CorpusCase } from "./sandbox/corpus.js";
import { BUNDLE_MEMORY_MB, RUNTIME_OPTIONS, WELL_BEHAVED_BUNDLES, checkWellBehaved, installWellBehaved, wellBehavedInput } from "./sandbox/fixtures.js";
import { runIntegrityCases } from "./sandbox/integrity.js";
import { renderHtml } from "./sandbox/report-html.js";
import { BackgroundLoad } from "./sandbox/load.js";
import { runScenarios } from "./sandbox/scenarios-run.js";
import {
  exitCodeOf,
  fmtMs,
  fmtRatio,
  REPORT_CATEGORIES,
  renderMarkdown,
  SANDBOX_REPORT_SCHEMA,
  SANDBOX_REPORT_VERSION,
  summarize,
  THREAT_MODEL,
  type CaseReport,
  type CategoryStatus,
  type SandboxReport,
} from "./sandbox/report.js";
import { runCorpusCase, withDeadline } from "./sandbox/run-case.js";

export interface SandboxBenchOptions {
  /** Where report.json and report.md go. Default bench/reports/sandbox/ of the repository. */
  outDir?: string;
  /** An earlier report.json: also write compare.json / compare.md with what changed. */
  compare?: string;
  /** A subset of the corpus (two cases per category) and shorter windows. */
  quick?: boolean;
  /** Only cases whose `category/id` matches this regular expression. */
  filter?: string;
  onProgress?(line: string): void;
}

export interface SandboxBenchResult {
  report: SandboxReport;
  exitCode: 0 | 1;
  comparison?: Comparison;
  files: { json: string; md: string; html: string; compareJson?: string; compareMd?: string };
}

const BACKGROUND_IN_FLIGHT = 4;
const BACKGROUND_THINK_MS = 1;

function settings(quick: boolean): { baselineMs: number; warmupMs: number; minWindowMs: number; perCategory: number } {
  return quick ? { baselineMs: 1000, warmupMs: 300, minWindowMs: 100, perCategory: 2 } : { baselineMs: 3000, warmupMs: 1000, minWindowMs: 300, perCategory: Infinity };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** A loopback listener the network probes may aim at; any connection to it fails the case. */
async function startProbeListener(): Promise<{ server: Server; url: string; hits: () => number }> {
  let hits = 0;
  const server = createServer((_req, res) => {
    hits++;
    res.end("exfil received");
  });
  server.on("connection", () => hits++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/exfil`, hits: () => hits };
}

async function freshRuntime(): Promise<Runtime> {
  const runtime = await createRuntime(RUNTIME_OPTIONS as unknown as RuntimeOptions);
  await installWellBehaved(runtime);
  const text = "first";
  const bad = checkWellBehaved(await runtime.fire("on_transition", wellBehavedInput("s-start", text)), text);
  if (bad) throw new Error(`a fresh runtime does not serve the well-behaved chain: ${bad.detail}`);
  return runtime;
}

function retire(runtime: Runtime): void {
  // A wedged runtime may never finish closing; do not let it hold up the bench.
  void withDeadline(runtime.close(), 10_000, "close").catch(() => undefined);
}

function selectCases(all: CorpusCase[], quick: boolean, filter: string | undefined): CorpusCase[] {
  const re = filter ? new RegExp(filter) : null;
  const perCategory = settings(quick).perCategory;
  const taken = new Map<string, number>();
  return all.filter((c) => {
    if (re && !re.test(`${c.category}/${c.id}`)) return false;
    const n = taken.get(c.category) ?? 0;
    if (n >= perCategory) return false;
    taken.set(c.category, n + 1);
    return true;
  });
}

function benchFailure(c: CorpusCase, err: unknown): CaseReport {
  const message = err instanceof Error ? err.message : String(err);
  return {
    id: c.id,
    category: c.category,
    title: c.title,
    source: "corpus",
    contained: false,
    reasons: [`the bench could not run the case: ${message.slice(0, 300)}`],
    expected: {
      outcome: c.expect.kind === "outcome" ? c.expect.outcome : null,
      status: c.expect.kind === "outcome" ? c.expect.status : null,
      install_error: c.expect.kind === "install_error" ? c.expect.code : null,
      error_matches: c.expect.kind === "outcome" && c.expect.errorMatches ? c.expect.errorMatches.source : null,
      annotations: c.expect.kind === "outcome" ? c.expect.annotations : null,
      recycled: c.expect.recycled,
    },
    observed: { outcome: null, status: null, install_error: null, error_class: null, error: null, annotations: null, duration_ms: null, chain_status: null },
    control: { regained_ms: null, recovered_ms: null, wedged: false },
    recycled: { expected: c.expect.recycled, observed: "none", basis: "inferred", process_restarts: 0 },
    served_after: null,
    background: null,
    notes: [],
  };
}

function progressLine(i: number, n: number, c: CaseReport): string {
  const idx = `[${String(i).padStart(String(n).length)}/${n}]`;
  const what = `${c.category}/${c.id}`.padEnd(48);
  const verdict = c.contained ? "contained    " : "NOT CONTAINED";
  const observed = c.observed.install_error ? `refused ${c.observed.install_error}` : `${c.observed.outcome ?? "–"}${c.observed.status ? `/${c.observed.status}` : ""}`;
  const bg = c.background === null && c.source === "corpus" && c.notes.length ? "bg paused" : c.background && c.background.samples > 0 ? `bg p99 ${fmtMs(c.background.p99_ms)} (${fmtRatio(c.background.p99_ratio)})${c.background.errors ? ` ${c.background.errors} err` : ""}` : "";
  const why = c.contained ? "" : `  — ${c.reasons.join("; ")}`;
  return `${idx} ${what} ${verdict} ${observed.padEnd(28)} regained ${fmtMs(c.control.regained_ms).padStart(9)}  ${bg}${why}`;
}

/** The table printed at the end of a run (the markdown summary, as plain text). */
export function summaryTable(report: SandboxReport): string {
  const rows: string[][] = [["category", "cases", "contained", "NOT contained", "max regained", "worst bg p99", "restarts", "bg errors"]];
  for (const k of report.categories) {
    const cases = report.cases.filter((c) => c.category === k.id);
    if (cases.length === 0) {
      rows.push([k.title, "0", "–", "–", "–", "–", "–", k.covered ? "–" : "not yet covered"]);
      continue;
    }
    const bad = cases.filter((c) => !c.contained).length;
    const ratios = cases.map((c) => c.background?.p99_ratio).filter((x): x is number => typeof x === "number");
    rows.push([
      k.title,
      String(cases.length),
      String(cases.length - bad),
      String(bad),
      fmtMs(Math.max(...cases.map((c) => c.control.regained_ms ?? 0))),
      ratios.length ? fmtRatio(Math.max(...ratios)) : "–",
      String(cases.reduce((n, c) => n + c.recycled.process_restarts, 0)),
      String(cases.reduce((n, c) => n + (c.background?.errors ?? 0), 0)),
    ]);
  }
  const s = report.summary;
  rows.push(["total", String(s.total), String(s.contained), String(s.not_contained), "", "", String(s.process_restarts), String(s.background_errors)]);
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  const lines = rows.map((r) => r.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join("  "));
  lines.splice(1, 0, widths.map((w) => "-".repeat(w)).join("  "));
  lines.splice(lines.length - 1, 0, widths.map((w) => "-".repeat(w)).join("  "));
  const b = report.baseline;
  lines.push("");
  lines.push(`baseline (quiet): p50 ${fmtMs(b.p50_ms)}, p99 ${fmtMs(b.p99_ms)} over ${b.samples} chains; verdict ${s.verdict}`);
  for (const c of report.cases.filter((x) => !x.contained)) lines.push(`NOT CONTAINED ${c.category}/${c.id}: ${c.reasons.join("; ")}`);
  return lines.join("\n");
}

/**
 * Run the sandbox bench and write its report.
 *
 * @example
 * ```ts
 * const { report, exitCode } = await runSandboxBench({ outDir: "bench/reports/sandbox", onProgress: console.error });
 * ```
 */
export async function runSandboxBench(options: SandboxBenchOptions = {}): Promise<SandboxBenchResult> {
  const quick = options.quick === true;
  const cfg = settings(quick);
  const progress = options.onProgress ?? ((): void => undefined);
  const outDir = options.outDir ? resolve(options.outDir) : join(repoRoot(), "bench", "reports", "sandbox");
  // Read the earlier report first: a bad --compare file should fail before minutes of work.
  let base: SandboxReport | undefined;
  if (options.compare !== undefined) {
    const parsed: unknown = JSON.parse(readFileSync(options.compare, "utf8"));
    assertComparable(parsed, options.compare);
    base = parsed;
  }

  const startedAt = new Date();
  const t0 = nowNs();
  const all = loadCorpus();
  const cases = selectCases(all, quick, options.filter);
  const subset = cases.length === all.length ? null : `${cases.length} of ${all.length} corpus cases${quick ? " (--quick)" : ""}${options.filter ? ` matching /${options.filter}/` : ""}`;
  progress(`sandbox bench${quick ? " (quick)" : ""}: ${cases.length} corpus cases, node ${process.version}, isolated-vm ${environment()["isolated-vm"]}`);

  const probe = await startProbeListener();
  let runtime = await freshRuntime();
  const load = new BackgroundLoad(runtime, BACKGROUND_IN_FLIGHT, BACKGROUND_THINK_MS);
  const reports: CaseReport[] = [];
  let runtimesReplaced = 0;
  let baseline;
  try {
    load.start(runtime);
    progress(`quiet baseline: ${BACKGROUND_IN_FLIGHT} well-behaved chains in flight for ${cfg.baselineMs} ms…`);
    await sleep(cfg.warmupMs);
    load.reset();
    const b0 = nowNs();
    await sleep(cfg.baselineMs);
    const b1 = nowNs();
    await load.settle(b1, 5_000);
    baseline = load.window(b0, b1);
    progress(`quiet baseline: p50 ${fmtMs(baseline.p50_ms)}, p99 ${fmtMs(baseline.p99_ms)}, ${baseline.samples} chains, ${baseline.errors} errors`);
    if (baseline.samples === 0) throw new Error(`the baseline served no well-behaved chain (${load.lastError() ?? "no error recorded"})`);

    for (const [i, c] of cases.entries()) {
      let outcome: { report: CaseReport; wedged: boolean };
      try {
        outcome = await runCorpusCase({ runtime, load, baseline, probe, minWindowMs: cfg.minWindowMs }, c);
      } catch (err) {
        // The bench itself failed on this case: it cannot be signed off, and the runtime is suspect.
        outcome = { report: benchFailure(c, err), wedged: true };
      }
      const { report, wedged } = outcome;
      reports.push(report);
      progress(progressLine(i + 1, cases.length, report));
      if (wedged || report.served_after === false) {
        // Later cases must not inherit a broken runtime: measure each against a working one.
        progress(`  ${wedged ? "runtime wedged (or the bench failed on the case)" : "runtime no longer serves"}: replacing it`);
        await load.stop(2_000);
        retire(runtime);
        runtime = await freshRuntime();
        runtimesReplaced++;
        load.start(runtime);
      }
    }
  } finally {
    await load.stop(5_000);
    retire(runtime);
    await new Promise<void>((r) => probe.server.close(() => r()));
  }

  progress("integrity: attack constitutions against the checker…");
  const integrity = await runIntegrityCases();
  if (integrity.covered) {
    for (const [i, c] of integrity.cases.entries()) {
      reports.push(c);
      progress(progressLine(i + 1, integrity.cases.length, c));
    }
  } else {
    progress(`integrity: ${integrity.note}`);
  }

  progress("scenarios: tenant isolation and attribution, several tenants at once…");
  const scenarioRows = await runScenarios(options.filter ? new RegExp(options.filter) : null, (r) => progress(progressLine(reports.length + 1, reports.length + 1, r)));
  reports.push(...scenarioRows);

  const categories: CategoryStatus[] = REPORT_CATEGORIES.map((k) => {
    const n = reports.filter((c) => c.category === k.id).length;
    if (k.id === "integrity" && !integrity.covered) return { id: k.id, title: k.title, covered: false, note: integrity.note };
    if (n === 0) return { id: k.id, title: k.title, covered: false, note: subset ? "not run in this subset" : "not yet covered: the corpus has no case" };
    return { id: k.id, title: k.title, covered: true, note: k.id === "integrity" ? "run in-process against createIntegrityChecker (the runtime does not yet wire it into fire())" : null };
  });

  const report: SandboxReport = {
    schema: SANDBOX_REPORT_SCHEMA,
    version: SANDBOX_REPORT_VERSION,
    started_at: startedAt.toISOString(),
    duration_s: Number(nowNs() - t0) / 1e9,
    quick,
    subset,
    environment: environment(),
    config: {
      runtime: RUNTIME_OPTIONS,
      bundle_memory_mb: BUNDLE_MEMORY_MB,
      other_limits: "runtime defaults (DEFAULT_SANDBOX_LIMITS)",
      background: { bundles: WELL_BEHAVED_BUNDLES, hook_type: "on_transition", in_flight: BACKGROUND_IN_FLIGHT, think_ms: BACKGROUND_THINK_MS, baseline_ms: cfg.baselineMs, min_window_ms: cfg.minWindowMs },
      case_deadline: "each runtime call: max_fire_ms + 10 s (fire), 30 s (install), 15 s (remove); recovery 20 s",
      runtimes_replaced: runtimesReplaced,
    },
    threat_model: THREAT_MODEL,
    baseline,
    categories,
    cases: reports,
    summary: summarize(reports),
  };
  const written = writeReport(outDir, report, renderMarkdown(report));
  // report.html: the self-contained page the operator console offers (GET /v1/console/security-report.html).
  const html = join(outDir, "report.html");
  writeFileSync(html, renderHtml(report));
  const files: SandboxBenchResult["files"] = { ...written, html };
  let comparison: Comparison | undefined;
  if (base !== undefined) {
    comparison = compareReports(base, report);
    const compared = writeReport(outDir, comparison, renderComparison(comparison), "compare");
    files.compareJson = compared.json;
    files.compareMd = compared.md;
  }
  return { report, exitCode: exitCodeOf(report), ...(comparison ? { comparison } : {}), files };
}

// ── entry ──────────────────────────────────────────────────────────────────────────────────────

function parseArgs(argv: string[]): SandboxBenchOptions {
  const opts: SandboxBenchOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${arg} needs a value`);
      return v;
    };
    if (arg === "--out") opts.outDir = value();
    else if (arg === "--compare") opts.compare = value();
    else if (arg === "--filter") opts.filter = value();
    else if (arg === "--quick") opts.quick = true;
    else throw new Error(`unknown argument ${arg}; usage: sandbox.js [--out dir] [--compare report.json] [--quick] [--filter regex]`);
  }
  return opts;
}

const isMain = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  const run = async (): Promise<number> => {
    const options = parseArgs(process.argv.slice(2));
    const { report, exitCode, comparison, files } = await runSandboxBench({ ...options, onProgress: (line) => process.stderr.write(line + "\n") });
    process.stdout.write("\n" + summaryTable(report) + "\n\n");
    if (comparison) {
      process.stdout.write(
        `compared with ${comparison.base.started_at}: ${comparison.regressions.length} newly not contained, ${comparison.fixed.length} newly contained, ` +
          `${comparison.new_cases.length} new, ${comparison.removed_cases.length} removed, ${comparison.changed.length} changed, ${comparison.latency.length} latency deltas → ${files.compareMd}\n`,
      );
    }
    process.stdout.write(`report: ${files.json}, ${files.md}, ${files.html} (${report.duration_s.toFixed(0)} s)\n`);
    return exitCode;
  };
  run().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`sandbox bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(2);
    },
  );
}
