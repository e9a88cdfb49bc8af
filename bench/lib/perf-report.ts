/**
 * The perf bench's report (`vcp-hooks bench perf`): the JSON shape bench/perf.ts writes as
 * report.json, and its markdown form, report.md. Pure: data in, text out.
 */
import type { LatencyStats, ThroughputStats } from "./stats.js";

/** Bump on any incompatible change of {@link PerfReport}. */
export const PERF_REPORT_SCHEMA = "vcp-hooks/bench-perf";
export const PERF_REPORT_VERSION = 1;

export interface PerfChainRow {
  variant: string;
  n: number;
  impl: string;
  latency: LatencyStats;
  throughput: ThroughputStats;
  cpu_us_per_chain?: { main: number; host_main_thread: number; host_workers: number; host_other: number; total: number };
  /**
   * Sandbox rows: during the sequential latency run (warm-up included), the mean time per chain the
   * threads that carry a chain (the bench's main thread, the sandbox host's main and worker threads) sat
   * runnable waiting for a core (Linux schedstat), and the 1-minute load average at its start. A p99
   * with a large wait is the machine's, not the runtime's.
   */
  latency_context?: { run_queue_wait_us_per_chain: number; load_average: number };
}

export interface PerfTarget {
  name: string;
  target: string;
  value: number;
  unit: string;
  pass: boolean;
}

export interface PerfReport {
  schema: typeof PERF_REPORT_SCHEMA;
  version: number;
  bench: "perf";
  started_at: string;
  duration_s: number;
  quick: boolean;
  environment: Record<string, string | number>;
  config: Record<string, unknown>;
  chains: PerfChainRow[];
  empty_chain: { calls: number; batch: number; median_ns: number; p99_batch_ns: number; mean_ns: number };
  oom_recreation: {
    reps: number;
    valid_reps: number;
    memory_mb: number;
    normal_median_us: number;
    after_oom_median_us: number;
    recreate_median_ms: number;
    oom_chain_median_ms: number;
    oom_error: string;
    host_restarts: number;
  };
  memory: { host_pid: number; bundles: number; threads: number; rss_before_mb: number; rss_after_mb: number; per_bundle_worker_mb: number; isolates_observed: number };
  targets: PerfTarget[];
  notes: string[];
}

function num(x: number, digits = 0): string {
  return Number.isFinite(x) ? x.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }) : "n/a";
}

function us(x: number): string {
  if (!Number.isFinite(x)) return "n/a";
  return x < 1000 ? `${x.toFixed(1)} µs` : `${(x / 1000).toFixed(2)} ms`;
}

function ratio(x: number): string {
  if (!Number.isFinite(x)) return "n/a";
  return x >= 100 ? `${num(x)}×` : x >= 10 ? `${x.toFixed(1)}×` : `${x.toFixed(2)}×`;
}

function targetValue(t: PerfTarget): string {
  if (t.unit === "×") return ratio(t.value);
  if (t.unit === "µs") return us(t.value);
  return `${num(t.value, t.unit === "ms" || t.unit === "MB" ? 2 : 0)} ${t.unit}`;
}

/** report.md of the perf bench: verdict on the targets first, then the measurements behind them. */
export function renderPerfMarkdown(r: PerfReport): string {
  const out: string[] = [];
  const line = (text = ""): void => void out.push(text);
  const misses = r.targets.filter((t) => !t.pass);
  line(`# Performance bench — ${misses.length === 0 ? "all targets met" : `${misses.length} of ${r.targets.length} targets MISSED`}`);
  line();
  line(`${r.started_at} · ${r.duration_s.toFixed(0)} s${r.quick ? " · --quick (smaller samples)" : ""}`);
  line();
  line("## Targets");
  line();
  line("| target | value | goal | result |");
  line("| --- | ---: | --- | --- |");
  for (const t of [...misses, ...r.targets.filter((x) => x.pass)]) line(`| ${t.name} | ${targetValue(t)} | ${t.target} | ${t.pass ? "PASS" : "**MISS**"} |`);
  line();

  for (const variant of [...new Set(r.chains.map((c) => c.variant))]) {
    line(`## Chains, variant "${variant}"`);
    line();
    line("p50/p99 sequential; chains/s at the configured concurrency. Ratios are against the sandbox row of the same N, measured in the same process and run.");
    line();
    line("| N | impl | samples | p50 | p99 | chains/s | p50 ÷ sandbox | CPU µs/chain (total) | waited for a core µs/chain (load) |");
    line("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (const row of r.chains.filter((c) => c.variant === variant)) {
      const sandbox = r.chains.find((c) => c.variant === variant && c.n === row.n && c.impl === "sandbox");
      line(
        `| ${row.n} | ${row.impl} | ${row.latency.samples} | ${us(row.latency.p50_us)} | ${us(row.latency.p99_us)} | ${num(row.throughput.chains_per_s)} | ` +
          `${sandbox ? ratio(row.latency.p50_us / sandbox.latency.p50_us) : "–"} | ${row.cpu_us_per_chain ? num(row.cpu_us_per_chain.total) : "–"} | ` +
          `${row.latency_context ? `${num(row.latency_context.run_queue_wait_us_per_chain)} (${row.latency_context.load_average.toFixed(1)})` : "–"} |`,
      );
    }
    line();
  }

  const e = r.empty_chain;
  line("## Empty chain");
  line();
  line(`median ${num(e.median_ns)} ns per call over ${num(e.calls)} calls (batches of ${e.batch}; p99 batch ${num(e.p99_batch_ns)} ns, mean ${num(e.mean_ns)} ns).`);
  line();
  const o = r.oom_recreation;
  line("## Isolate recreation after OOM");
  line();
  line(
    `${o.memory_mb} MiB heap, ${o.valid_reps}/${o.reps} valid reps: normal call ${us(o.normal_median_us)}, first call after the OOM ${us(o.after_oom_median_us)} ⇒ ` +
      `recreate ${o.recreate_median_ms.toFixed(2)} ms. The OOM chain itself: ${o.oom_chain_median_ms.toFixed(1)} ms (two concurrent); host restarts ${o.host_restarts}.`,
  );
  line();
  const m = r.memory;
  line("## Memory per (bundle, worker)");
  line();
  line(`${m.bundles} bundles × ${m.threads} workers (${m.isolates_observed} isolates observed): sandbox host VmRSS ${m.rss_before_mb.toFixed(1)} → ${m.rss_after_mb.toFixed(1)} MB ⇒ ${m.per_bundle_worker_mb.toFixed(2)} MB each.`);
  line();
  line("## Environment");
  line();
  for (const [k, v] of Object.entries(r.environment)) line(`- ${k}: ${v}`);
  line();
  line("```json");
  line(JSON.stringify(r.config, null, 2));
  line("```");
  if (r.notes.length) {
    line();
    line("## Notes");
    line();
    for (const n of r.notes) line(`- ${n}`);
  }
  line();
  return out.join("\n");
}
