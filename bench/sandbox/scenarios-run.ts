/**
 * Runs the scenario attacks (./scenario.ts) for the sandbox bench and turns each outcome into a
 * report row. Scenarios start their own runtimes and servers, so they run after the corpus, one at a
 * time, without the corpus's background load.
 */
import { nowNs } from "../lib/stats.js";
import type { CaseReport } from "./report.js";
import { loadScenarios, type Scenario } from "./scenario.js";

function row(s: Scenario, ms: number, outcome: { contained: boolean; observed: string; reasons: string[]; servedAfter: boolean; processRestarts: number }): CaseReport {
  return {
    id: s.id,
    category: s.category,
    title: s.title,
    source: "scenario",
    contained: outcome.contained,
    reasons: outcome.reasons,
    expected: { outcome: s.expected, status: null, install_error: null, error_matches: null, annotations: null, recycled: "none" },
    observed: { outcome: outcome.observed, status: null, install_error: null, error_class: null, error: null, annotations: null, duration_ms: ms, chain_status: null },
    control: { regained_ms: ms, recovered_ms: null, wedged: false },
    recycled: { expected: "none", observed: outcome.processRestarts > 0 ? "process" : "none", basis: "measured", process_restarts: outcome.processRestarts },
    served_after: outcome.servedAfter,
    background: null,
    notes: ["scenario: several tenants at once, run on its own runtime without background load"],
  };
}

/** Every scenario whose `category/id` matches `filter` (all when absent), in order. */
export async function runScenarios(filter: RegExp | null, onRow: (r: CaseReport) => void): Promise<CaseReport[]> {
  const rows: CaseReport[] = [];
  for (const s of await loadScenarios()) {
    if (filter && !filter.test(`${s.category}/${s.id}`)) continue;
    const t0 = nowNs();
    let r: CaseReport;
    try {
      const outcome = await s.run();
      r = row(s, Number(nowNs() - t0) / 1e6, outcome);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      r = row(s, Number(nowNs() - t0) / 1e6, { contained: false, observed: "the scenario could not run", reasons: [`the bench could not run the scenario: ${message.slice(0, 300)}`], servedAfter: false, processRestarts: 0 });
    }
    rows.push(r);
    onRow(r);
  }
  return rows;
}
