/** Report builders for the sandbox bench unit tests: a contained case, tweaked per test. */
import { summarize, SANDBOX_REPORT_SCHEMA, SANDBOX_REPORT_VERSION, type CaseReport, type ReportCategory, type SandboxReport } from "../../../bench/sandbox/report.js";

export function makeCase(id: string, category: ReportCategory, patch: Partial<CaseReport> = {}): CaseReport {
  return {
    id,
    category,
    title: `title of ${id}`,
    source: "corpus",
    contained: true,
    reasons: [],
    expected: { outcome: "timeout", status: "continue", install_error: null, error_matches: null, annotations: null, recycled: "none" },
    observed: { outcome: "timeout", status: "continue", install_error: null, error_class: "Timeout", error: "timed out", annotations: null, duration_ms: 200, chain_status: "completed" },
    control: { regained_ms: 210, recovered_ms: 215, wedged: false },
    recycled: { expected: "none", observed: "isolate", basis: "inferred", process_restarts: 0 },
    served_after: true,
    background: { window_ms: 300, samples: 100, p50_ms: 1, p99_ms: 3, errors: 0, error_kinds: {}, p50_ratio: 1, p99_ratio: 1.5 },
    notes: [],
    ...patch,
  };
}

export function notContained(c: CaseReport, reason: string): CaseReport {
  return { ...c, contained: false, reasons: [reason] };
}

export function makeReport(cases: CaseReport[], patch: Partial<SandboxReport> = {}): SandboxReport {
  return {
    schema: SANDBOX_REPORT_SCHEMA,
    version: SANDBOX_REPORT_VERSION,
    started_at: "2026-01-01T00:00:00.000Z",
    duration_s: 100,
    quick: false,
    subset: null,
    environment: { node: "v24.21.0", v8: "13.6", "isolated-vm": "7.0.1" },
    config: {},
    threat_model: "threat model",
    baseline: { window_ms: 3000, samples: 1000, p50_ms: 1, p99_ms: 2, errors: 0, error_kinds: {} },
    categories: [
      { id: "resource-exhaustion", title: "Resource exhaustion", covered: true, note: null },
      { id: "process-killers", title: "Process killers", covered: true, note: null },
      { id: "integrity", title: "Integrity", covered: false, note: "not yet covered: no checker" },
    ],
    cases,
    summary: summarize(cases),
    ...patch,
  };
}
