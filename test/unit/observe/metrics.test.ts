import { expect, test } from "vitest";
import { createMetrics, type MetricsSnapshot } from "../../../src/observe/metrics.js";
import type { ChainResult } from "../../../src/model/chain.js";

const snapshot = (over: Partial<MetricsSnapshot> = {}): MetricsSnapshot => ({
  restarts: 0, queued: 0, inFlight: 0, auditLagMs: 0, auditPending: 0, auditWritten: 0, quarantined: 0, slowBundles: 0,
  demotedBundles: 0, watchdogKills: 0, openSessions: 0, bundles: [], auditBytes: 0, auditWriteFailures: 0, host: undefined, ...over,
});

test("chain results become Prometheus counters and histograms; gauges are read at scrape time", async () => {
  let restarts = 0;
  const metrics = createMetrics(() => snapshot({ restarts, queued: 3, inFlight: 1, auditLagMs: 250, auditPending: 2 }));
  const result: ChainResult = {
    chain_id: "c", type: "pre_inject", status: "completed", reason: null, aborted_by: null, context: {}, constitution: { id: "k", rules: [] },
    cascade_failure: true, duration_ms: 0.4,
    hook_results: [
      { hook: "a", bundle: "b", scope: "deployment", trust: "deployment", status: "continue", outcome: "timeout", duration_ms: 50 },
      { hook: "b", bundle: "b", scope: "deployment", trust: "deployment", status: "continue", outcome: "error", duration_ms: 1 },
      { hook: "c", bundle: "b", scope: "deployment", trust: "deployment", status: "continue", outcome: "skipped_predicate", duration_ms: 0 },
    ],
  };
  metrics.recordChain(result);
  restarts = 2;
  const text = await metrics.text();
  expect(text).toContain('vcp_chains_total{type="pre_inject",status="completed"} 1');
  expect(text).toContain('vcp_hooks_total{type="pre_inject",outcome="timeout"} 1');
  expect(text).toContain('vcp_hooks_total{type="pre_inject",outcome="skipped_predicate"} 1');
  expect(text).toContain('vcp_hook_timeouts_total{type="pre_inject"} 1');
  expect(text).toContain('vcp_hook_errors_total{type="pre_inject",outcome="error"} 1');
  expect(text).toContain('vcp_cascade_failures_total{type="pre_inject"} 1');
  expect(text).toContain('vcp_hook_duration_seconds_count{type="pre_inject"} 2');
  expect(text).toContain("vcp_sandbox_restarts 2");
  expect(text).toContain("vcp_sandbox_queue_depth 3");
  expect(text).toContain("vcp_audit_lag_seconds 0.25");
});

test("chain deadline outcomes are counted by outcome, never as timeouts or errors; a skipped hook has no duration sample", async () => {
  const metrics = createMetrics(() => snapshot());
  metrics.recordChain({
    chain_id: "c", type: "pre_inject", status: "completed", reason: null, aborted_by: null, context: {}, constitution: { id: "k", rules: [] },
    cascade_failure: false, duration_ms: 3,
    hook_results: [
      { hook: "obs", bundle: "o", scope: "session", trust: "session", status: "continue", outcome: "deadline_exceeded", duration_ms: 2 },
      { hook: "pii", bundle: "p", scope: "deployment", trust: "deployment", status: "continue", outcome: "skipped_deadline", duration_ms: 0 },
    ],
  });
  const text = await metrics.text();
  expect(text).toContain('vcp_hooks_total{type="pre_inject",outcome="deadline_exceeded"} 1');
  expect(text).toContain('vcp_hooks_total{type="pre_inject",outcome="skipped_deadline"} 1');
  expect(text).not.toContain("vcp_hook_timeouts_total{");
  expect(text).not.toContain("vcp_hook_errors_total{");
  expect(text).toContain('vcp_hook_duration_seconds_count{type="pre_inject"} 1');
});

test("per bundle and hook: executions by outcome, latency, bundle_info for installed bundles only, install/remove results", async () => {
  let bundles: MetricsSnapshot["bundles"] = [{ bundle: "strip-pii", version: "1.2.0", digest: "sha256:ab", trust: "deployment", signed_by: "ops" }];
  const metrics = createMetrics(() => snapshot({ bundles, quarantined: 1, openSessions: 4 }));
  metrics.recordChain({
    chain_id: "c", type: "pre_inject", status: "completed", reason: null, aborted_by: null, context: {}, constitution: { id: "k", rules: [] },
    cascade_failure: false, duration_ms: 1,
    hook_results: [
      { hook: "redact", bundle: "strip-pii", scope: "deployment", trust: "deployment", status: "modify", outcome: "ok", duration_ms: 0.5 },
      { hook: "slow", bundle: "other", scope: "deployment", trust: "deployment", status: "continue", outcome: "timeout", duration_ms: 100 },
    ],
  });
  metrics.recordBundleChange("installed");
  metrics.recordBundleChange("failed");
  let text = await metrics.text();
  expect(text).toContain('vcp_bundle_hook_executions_total{bundle="strip-pii",hook="redact",outcome="ok"} 1');
  expect(text).toContain('vcp_bundle_hook_executions_total{bundle="other",hook="slow",outcome="timeout"} 1');
  expect(text).toContain('vcp_bundle_hook_duration_seconds_count{bundle="other",hook="slow"} 1');
  expect(text).toContain('vcp_bundle_info{bundle="strip-pii",version="1.2.0",digest="sha256:ab",trust="deployment",signed_by="ops"} 1');
  expect(text).toContain('vcp_bundle_changes_total{result="failed"} 1');
  expect(text).toContain("vcp_sandbox_quarantined_bundles 1");
  expect(text).toContain("vcp_sessions_open 4");
  bundles = [];
  await new Promise((r) => setTimeout(r, 60)); // past the per-scrape snapshot
  text = await metrics.text();
  expect(text).not.toContain('vcp_bundle_info{bundle="strip-pii"');
});

test("counters mirrored from the sandbox and the audit log only ever grow, by what the source grew", async () => {
  let restarts = 1;
  let written = 10;
  const metrics = createMetrics(() => snapshot({ restarts, auditWritten: written }));
  expect(await metrics.text()).toContain("vcp_sandbox_restarts_total 1");
  restarts = 3;
  written = 25;
  await new Promise((r) => setTimeout(r, 60));
  const text = await metrics.text();
  expect(text).toContain("vcp_sandbox_restarts_total 3");
  expect(text).toContain("vcp_audit_records_total 25");
  expect(text).toMatch(/# TYPE vcp_sandbox_restarts_total counter/);
});

test("sandbox host RSS and CPU from /proc; CPU never goes down across a host restart; audit bytes, fsync latency, write failures", async () => {
  let host: MetricsSnapshot["host"] = { pid: 100, usage: { rssBytes: 50_000_000, cpuSeconds: 3 } };
  const metrics = createMetrics(() => snapshot({ host, auditBytes: 4096, auditWriteFailures: 1 }));
  metrics.observeAuditSync(0.002);
  let text = await metrics.text();
  expect(text).toMatch(/^vcp_sandbox_host_resident_memory_bytes 50000000$/m);
  expect(text).toMatch(/^vcp_sandbox_host_cpu_seconds_total 3$/m);
  expect(text).toMatch(/^vcp_audit_bytes_total 4096$/m);
  expect(text).toMatch(/^vcp_audit_write_failures_total 1$/m);
  expect(text).toMatch(/^vcp_audit_fsync_duration_seconds_bucket\{le="0.0025"\} 1$/m);
  // A new host process starts its CPU time at 0: the counter keeps its total and adds the new host's.
  host = { pid: 200, usage: { rssBytes: 40_000_000, cpuSeconds: 0.5 } };
  await new Promise((r) => setTimeout(r, 60));
  text = await metrics.text();
  expect(text).toMatch(/^vcp_sandbox_host_cpu_seconds_total 3.5$/m);
  // No host running: 0, never the dead host's last value.
  host = undefined;
  await new Promise((r) => setTimeout(r, 60));
  text = await metrics.text();
  expect(text).toMatch(/^vcp_sandbox_host_resident_memory_bytes 0$/m);
});

test("readProcessUsage reads this very process from /proc (Linux)", async () => {
  const { readProcessUsage } = await import("../../../src/observe/proc-usage.js");
  const usage = readProcessUsage(process.pid);
  expect(usage?.rssBytes).toBeGreaterThan(1_000_000);
  expect(usage?.cpuSeconds).toBeGreaterThan(0);
  expect(readProcessUsage(undefined)).toBeUndefined();
  expect(readProcessUsage(2 ** 30)).toBeUndefined(); // no such process
});

test("vcp_bundle_chains_total: once per chain for each bundle whose hooks ran, by profile (vcp for native chains)", async () => {
  const metrics = createMetrics(() => snapshot());
  const hook = (bundle: string, outcome: string) => ({ hook: `h-${bundle}-${outcome}`, bundle, scope: "deployment", trust: "deployment", status: "continue", outcome, duration_ms: 1 });
  const base = { chain_id: "c", type: "pre_inject", status: "completed", reason: null, aborted_by: null, context: {}, constitution: { id: "k", rules: [] }, cascade_failure: false, duration_ms: 1 };
  // Two hooks of strip-pii ran: one chain for it; guard's only hook was skipped: no chain for guard.
  metrics.recordChain({ ...base, hook_results: [hook("strip-pii", "ok"), hook("guard", "skipped_predicate"), hook("strip-pii", "error")] } as unknown as ChainResult);
  metrics.recordChain({ ...base, hook_results: [hook("guard", "skipped_predicate"), hook("guard", "ok")] } as unknown as ChainResult);
  metrics.recordProfileChain({ ...base, profile: { profile: "gemini-cli", event: "BeforeTool", mode: "sequential", native: {}, exit_code: 0 }, hook_results: [hook("block-shell", "ok"), hook("block-shell", "ok")] } as unknown as ChainResult);
  const text = await metrics.text();
  expect(text).toContain('vcp_bundle_chains_total{bundle="strip-pii",profile="vcp"} 1');
  expect(text).toContain('vcp_bundle_chains_total{bundle="guard",profile="vcp"} 1');
  expect(text).toContain('vcp_bundle_chains_total{bundle="block-shell",profile="gemini-cli"} 1');
  expect(text).toMatch(/^# TYPE vcp_bundle_chains_total counter$/m);
});

test("vcp_store_command_errors_total: every reason from the first scrape, growing by what the connection counted", async () => {
  const store = { connected: true, reconnects: 0, revision: 1, desiredRevision: 1, refused: 0, liveReplicas: 2, commandErrors: { timeout: 0, reply: 0, unreachable: 0 } };
  const metrics = createMetrics(() => snapshot({ store }), { sharedStore: true });
  let text = await metrics.text();
  for (const reason of ["timeout", "reply", "unreachable"]) expect(text).toContain(`vcp_store_command_errors_total{reason="${reason}"} 0`);
  store.commandErrors = { timeout: 3, reply: 1, unreachable: 0 };
  await new Promise((r) => setTimeout(r, 60)); // past the per-scrape snapshot
  text = await metrics.text();
  expect(text).toContain('vcp_store_command_errors_total{reason="timeout"} 3');
  expect(text).toContain('vcp_store_command_errors_total{reason="reply"} 1');
  expect(text).toMatch(/^# TYPE vcp_store_command_errors_total counter$/m);
  // Without a shared store the family is absent (a local deployment's exposition is unchanged).
  expect(await createMetrics(() => snapshot()).text()).not.toContain("vcp_store_command_errors_total");
});
