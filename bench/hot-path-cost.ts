/**
 * CPU cost of the main process's per-chain bookkeeping (issue 15), in process, each against a
 * baseline run in the same process: the runtime metrics of one 5-hook chain through the tallies
 * (src/observe/tally.ts) vs the same 22 labelled updates through prom-client's Counter/Histogram;
 * bearer authentication (src/server/auth.ts); the RFC 8785 text of the load bench's 2.6 KB input
 * (the audit input hash) vs `JSON.stringify` of it, the floor of any JSON writer. CPU time
 * (process.cpuUsage), best of three, so it holds up on a busy machine; the ratios are what to compare
 * across runs.
 *
 *   node dist/bench/hot-path-cost.js
 */
import { Counter, Histogram, Registry } from "prom-client";
import type { ChainResult } from "../src/model/chain.js";
import { canonicalJson } from "../src/integrity/canonical.js";
import { SKIPPED_OUTCOMES } from "../src/model/result.js";
import { createMetrics, type MetricsSnapshot } from "../src/observe/metrics.js";
import { createAuthenticator, hashToken } from "../src/server/auth.js";
import { assertInputBounds, CHAIN_INPUT_ENVELOPES } from "../src/model/json-bounds.js";
import { cpuPerCall } from "./lib/cpu.js";
import { constitution, makeContext, preInjectEvent } from "./lib/fixtures.js";

function row(label: string, us: number, baseline?: { label: string; us: number }): void {
  const ratio = baseline === undefined ? "" : `   baseline ${baseline.label}: ${baseline.us.toFixed(2)} µs (${(baseline.us / us).toFixed(1)}×)`;
  process.stdout.write(`${label.padEnd(44)} ${us.toFixed(2).padStart(7)} µs CPU${ratio}\n`);
}

// ── metrics of one 5-hook chain ─────────────────────────────────────────────────────────────────
const result = {
  chain_id: "c", type: "pre_inject", status: "completed", reason: null, aborted_by: null, context: {}, constitution: { id: "k", rules: [] },
  cascade_failure: false, duration_ms: 0.31,
  hook_results: [0, 1, 2, 3, 4].map((i) => ({ hook: `check_${i}`, bundle: `load-${i}`, scope: "deployment", trust: "deployment", status: "continue", outcome: "ok", duration_ms: 0.04 + i / 100 })),
} as unknown as ChainResult;
const metrics = createMetrics(() => ({}) as MetricsSnapshot);
const tallies = cpuPerCall(200_000, () => metrics.recordChain(result));

// The updates recordChain made before the tallies: prom-client's labelled inc/observe.
const registry = new Registry();
const buckets = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];
const chains = new Counter({ name: "c_total", help: "c", labelNames: ["type", "status"], registers: [registry] });
const chainSeconds = new Histogram({ name: "c_seconds", help: "c", labelNames: ["type"], buckets, registers: [registry] });
const hooks = new Counter({ name: "h_total", help: "h", labelNames: ["type", "outcome"], registers: [registry] });
const hookSeconds = new Histogram({ name: "h_seconds", help: "h", labelNames: ["type"], buckets, registers: [registry] });
const bundleHooks = new Counter({ name: "b_total", help: "b", labelNames: ["bundle", "hook", "outcome"], registers: [registry] });
const bundleHookSeconds = new Histogram({ name: "b_seconds", help: "b", labelNames: ["bundle", "hook"], buckets, registers: [registry] });
const promClient = cpuPerCall(200_000, () => {
  chains.inc({ type: result.type, status: result.status });
  chainSeconds.observe({ type: result.type }, result.duration_ms / 1000);
  for (const hook of result.hook_results) {
    hooks.inc({ type: result.type, outcome: hook.outcome });
    bundleHooks.inc({ bundle: hook.bundle, hook: hook.hook, outcome: hook.outcome });
    if (SKIPPED_OUTCOMES.has(hook.outcome)) continue;
    hookSeconds.observe({ type: result.type }, hook.duration_ms / 1000);
    bundleHookSeconds.observe({ bundle: hook.bundle, hook: hook.hook }, hook.duration_ms / 1000);
  }
});
row("metrics of a 5-hook chain (tallies)", tallies, { label: "prom-client labelled updates", us: promClient });

// ── bearer authentication (two configured principals) ──────────────────────────────────────────
const tokens = ["vcp_op_0123456789abcdef0123456789abcdef01234567", "vcp_cl_abcdef0123456789abcdef0123456789abcdef01"];
const authenticator = createAuthenticator([
  { id: "ops", role: "operator", token_sha256: hashToken(tokens[0]!) },
  { id: "bench", role: "client", token_sha256: hashToken(tokens[1]!) },
]);
const header = `Bearer ${tokens[1]}`;
row("authenticate(a valid bearer header)", cpuPerCall(500_000, () => authenticator.authenticate(header)));

// ── RFC 8785 text of the chain input (the audit input hash) ────────────────────────────────────
const input = { context: makeContext(42, 2048), constitution, event: preInjectEvent, session: { id: "load-session" } };
const canonical = cpuPerCall(50_000, () => canonicalJson(input));
process.stdout.write(`${"canonicalJson(2.6 KB chain input)".padEnd(44)} ${canonical.toFixed(2).padStart(7)} µs CPU   ${(canonical / cpuPerCall(50_000, () => JSON.stringify(input))).toFixed(2)}× JSON.stringify of the same input\n`);

// ── input bounds of the chain input (fire/vcp.ts, every fire) ──────────────────────────────
const bounds = { maxDepth: 64, maxBytes: 1 << 20 };
const boundsCost = cpuPerCall(50_000, () => assertInputBounds(input, bounds, CHAIN_INPUT_ENVELOPES));
row("assertInputBounds(2.6 KB chain input)", boundsCost, { label: "JSON.stringify of each field", us: cpuPerCall(50_000, () => {
  for (const value of Object.values(input)) JSON.stringify(value);
}) });
