/**
 * Scenario attacks (bench/sandbox/scenario.ts): several tenants at once, asserting tenant isolation
 * and crash attribution. From the sources: the runtime they start forks the compiled sandbox host
 * from dist/ (src/pool/host-entry.ts; `npm test` builds first).
 */
import { expect, test } from "vitest";
import { loadScenarios, SCENARIO_CATEGORIES } from "../../bench/sandbox/scenario.js";

const scenarios = await loadScenarios();

test("every scenario category has at least one scenario", () => {
  for (const category of SCENARIO_CATEGORIES) {
    expect(scenarios.filter((s) => s.category === category).length, category).toBeGreaterThanOrEqual(1);
  }
});

for (const s of scenarios) {
  test(`${s.category}/${s.id}: ${s.title}`, { timeout: 120_000 }, async () => {
    const outcome = await s.run();
    expect(outcome.reasons, `${s.expected}; observed: ${outcome.observed}`).toEqual([]);
    expect(outcome.servedAfter, "served a well-behaved request afterwards").toBe(true);
    expect(outcome.contained).toBe(true);
  });
}
