import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ChainResult } from "../chain/types.js";
import { SKIPPED_OUTCOMES } from "../model/result.js";

/** Latency buckets in seconds: 50 µs … 5 s, dense where chains usually land (0.1–2 ms). */
const LATENCY_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

/**
 * Prometheus metrics of one runtime (prom-client, a registry per runtime so several runtimes in one
 * process do not collide). Chain and hook metrics are recorded from each ChainResult on the main
 * thread; gauges that describe the sandbox and audit log are read when scraped.
 */
export function createMetrics(readGauges: () => { restarts: number; queued: number; inFlight: number; auditLagMs: number; auditPending: number }) {
  const registry = new Registry();
  const chains = new Counter({ name: "vcp_chains_total", help: "Hook chains run, by hook type and chain status.", labelNames: ["type", "status"], registers: [registry] });
  const chainSeconds = new Histogram({
    name: "vcp_chain_duration_seconds",
    help: "Hook chain latency as measured inside the sandbox, by hook type.",
    labelNames: ["type"],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const hooks = new Counter({ name: "vcp_hooks_total", help: "Hook executions by hook type and outcome.", labelNames: ["type", "outcome"], registers: [registry] });
  const hookSeconds = new Histogram({
    name: "vcp_hook_duration_seconds",
    help: "Hook action latency by hook type (skipped hooks excluded).",
    labelNames: ["type"],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const timeouts = new Counter({ name: "vcp_hook_timeouts_total", help: "Hooks that exceeded timeout_ms (spec §5.4.4).", labelNames: ["type"], registers: [registry] });
  const errors = new Counter({
    name: "vcp_hook_errors_total",
    help: "Hooks that failed: exception, invalid result or crash (spec §7.1.5).",
    labelNames: ["type", "outcome"],
    registers: [registry],
  });
  const cascades = new Counter({ name: "vcp_cascade_failures_total", help: "Chains where more than half of the hooks failed (spec §7.3).", labelNames: ["type"], registers: [registry] });
  new Gauge({
    name: "vcp_sandbox_restarts",
    help: "Times the sandbox host process was restarted after dying.",
    registers: [registry],
    collect() {
      this.set(readGauges().restarts);
    },
  });
  new Gauge({
    name: "vcp_sandbox_queue_depth",
    help: "Chains waiting for a sandbox worker.",
    registers: [registry],
    collect() {
      this.set(readGauges().queued);
    },
  });
  new Gauge({
    name: "vcp_sandbox_in_flight",
    help: "Chains running in the sandbox.",
    registers: [registry],
    collect() {
      this.set(readGauges().inFlight);
    },
  });
  new Gauge({
    name: "vcp_audit_lag_seconds",
    help: "Age of the oldest audit record not yet durably written.",
    registers: [registry],
    collect() {
      this.set(readGauges().auditLagMs / 1000);
    },
  });
  new Gauge({
    name: "vcp_audit_pending_records",
    help: "Audit records waiting for the group commit.",
    registers: [registry],
    collect() {
      this.set(readGauges().auditPending);
    },
  });

  return {
    registry,
    recordChain(result: ChainResult): void {
      chains.inc({ type: result.type, status: result.status });
      chainSeconds.observe({ type: result.type }, result.duration_ms / 1000);
      if (result.cascade_failure) cascades.inc({ type: result.type });
      for (const hook of result.hook_results) {
        hooks.inc({ type: result.type, outcome: hook.outcome });
        if (SKIPPED_OUTCOMES.has(hook.outcome)) continue;
        hookSeconds.observe({ type: result.type }, hook.duration_ms / 1000);
        if (hook.outcome === "timeout") timeouts.inc({ type: result.type });
        else if (hook.outcome === "error" || hook.outcome === "invalid_result" || hook.outcome === "crashed") errors.inc({ type: result.type, outcome: hook.outcome });
      }
    },
    text(): Promise<string> {
      return registry.metrics();
    },
    contentType: registry.contentType,
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
