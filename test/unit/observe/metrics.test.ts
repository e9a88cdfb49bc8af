import { expect, test } from "vitest";
import { createMetrics } from "../../../src/observe/metrics.js";
import type { ChainResult } from "../../../src/chain/types.js";

test("chain results become Prometheus counters and histograms; gauges are read at scrape time", async () => {
  let restarts = 0;
  const metrics = createMetrics(() => ({ restarts, queued: 3, inFlight: 1, auditLagMs: 250, auditPending: 2 }));
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
  const metrics = createMetrics(() => ({ restarts: 0, queued: 0, inFlight: 0, auditLagMs: 0, auditPending: 0 }));
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
