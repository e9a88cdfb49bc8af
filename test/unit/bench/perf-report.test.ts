import { expect, test } from "vitest";
import { PERF_REPORT_SCHEMA, PERF_REPORT_VERSION, renderPerfMarkdown, type PerfReport } from "../../../bench/lib/perf-report.js";

function report(targets: PerfReport["targets"]): PerfReport {
  const latency = { samples: 10, p50_us: 250, p99_us: 900, mean_us: 300, min_us: 200, max_us: 1000 };
  const throughput = { completed: 100, concurrency: 64, elapsed_ms: 10, chains_per_s: 10_000 };
  return {
    schema: PERF_REPORT_SCHEMA,
    version: PERF_REPORT_VERSION,
    bench: "perf",
    started_at: "2026-01-01T00:00:00.000Z",
    duration_s: 60,
    quick: false,
    environment: { node: "v24.21.0" },
    config: {},
    chains: [
      { variant: "continue", n: 5, impl: "sandbox", latency, throughput },
      { variant: "continue", n: 5, impl: "floor", latency: { ...latency, p50_us: 25 }, throughput },
    ],
    empty_chain: { calls: 1, batch: 1, median_ns: 1500, p99_batch_ns: 2000, mean_ns: 1600 },
    oom_recreation: { reps: 1, valid_reps: 1, memory_mb: 16, normal_median_us: 100, after_oom_median_us: 5000, recreate_median_ms: 4.9, oom_chain_median_ms: 50, oom_error: "memory limit", host_restarts: 0 },
    memory: { host_pid: 1, bundles: 20, threads: 2, rss_before_mb: 100, rss_after_mb: 200, per_bundle_worker_mb: 2.5, isolates_observed: 40 },
    targets,
    notes: [],
  };
}

test("perf report.md: a missed target is in the headline and listed before the met ones", () => {
  const md = renderPerfMarkdown(
    report([
      { name: "N=5 p50", target: "≤ 300 µs", value: 250, unit: "µs", pass: true },
      { name: "N=5 chains/s", target: "≥ 6,000 chains/s", value: 4000, unit: "chains/s", pass: false },
    ]),
  );
  expect(md.split("\n")[0]).toBe("# Performance bench — 1 of 2 targets MISSED");
  expect(md.indexOf("| N=5 chains/s | 4,000 chains/s | ≥ 6,000 chains/s | **MISS** |")).toBeGreaterThan(0);
  expect(md.indexOf("N=5 chains/s")).toBeLessThan(md.indexOf("| N=5 p50 |"));
  // The floor row's ratio is against the sandbox row of the same N.
  expect(md).toContain("| 5 | floor | 10 | 25.0 µs | 900.0 µs | 10,000 | 0.10× | – |");
});

test("perf report.md: all targets met", () => {
  expect(renderPerfMarkdown(report([{ name: "x", target: "≤ 1 ms", value: 0.5, unit: "ms", pass: true }])).split("\n")[0]).toBe("# Performance bench — all targets met");
});

test("perf report.md: a sandbox row shows how long its threads waited for a core, and at what load", () => {
  const r = report([]);
  r.chains[0] = { ...r.chains[0]!, latency_context: { run_queue_wait_us_per_chain: 412.6, load_average: 11.84 } };
  const md = renderPerfMarkdown(r);
  expect(md).toContain("| 5 | sandbox | 10 | 250.0 µs | 900.0 µs | 10,000 | 1.00× | – | 413 (11.8) |");
  // Rows measured without it (the floor, the spawn baselines) say so instead of showing a zero.
  expect(md).toContain("| 5 | floor | 10 | 25.0 µs | 900.0 µs | 10,000 | 0.10× | – | – |");
});
