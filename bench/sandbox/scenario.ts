/**
 * Scenario attacks: attacks a single-bundle corpus file cannot express because they need several
 * tenants at once — two HTTP clients, two bundles, a session-trust hook next to deployment policy —
 * and assert a property across them (tenant isolation, crash attribution). Each lives in its own
 * file under bench/sandbox/scenarios/ exporting `scenario`; `loadScenarios` finds them all, so the
 * adversarial suite (test/adversarial/scenarios.test.ts) and the sandbox bench run the same list.
 *
 * A scenario builds whatever it needs (its own runtime, server, data directory) and tears it down
 * before returning. It never throws for an attack that succeeded: it returns `contained: false`
 * with the reasons, so the bench can report it; it throws only when it could not run at all.
 */
import { existsSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Report categories only scenarios fill (see REPORT_CATEGORIES in ./report.ts). */
export const SCENARIO_CATEGORIES = ["tenant-isolation", "attribution", "profile-boundary"] as const;
export type ScenarioCategory = (typeof SCENARIO_CATEGORIES)[number];

export interface ScenarioOutcome {
  /** Every asserted property held. */
  contained: boolean;
  /** One line of what was observed (shown in the report's "observed" column). */
  observed: string;
  /** Why it is not contained; empty when contained. */
  reasons: string[];
  /** The runtime (or server) still served a well-behaved request exactly afterwards. */
  servedAfter: boolean;
  /** Sandbox host restarts the scenario caused (0 when it uses no sandbox). */
  processRestarts: number;
}

export interface Scenario {
  /** `[a-z0-9-]{1,60}`, unique across scenarios and the corpus. */
  id: string;
  category: ScenarioCategory;
  /** One line; the test is titled `<category>/<id>: <title>`. */
  title: string;
  /** The property that must hold, in one line (the report's "expected" column). */
  expected: string;
  /** Runs the attack. The scenario owns and closes everything it starts. */
  run(): Promise<ScenarioOutcome>;
}

/**
 * Collects the outcome of several checks: `check(ok, reason)` records a reason when `ok` is false.
 * Scenarios use it so one run reports every broken property, not just the first.
 */
export class Checks {
  readonly reasons: string[] = [];
  check(ok: boolean, reason: string): void {
    if (!ok) this.reasons.push(reason);
  }
  outcome(observed: string, servedAfter: boolean, processRestarts = 0): ScenarioOutcome {
    return { contained: this.reasons.length === 0 && servedAfter, observed, reasons: servedAfter ? this.reasons : [...this.reasons, "the runtime did not serve a well-behaved request afterwards"], servedAfter, processRestarts };
  }
}

const SCENARIO_DIR = fileURLToPath(new URL("./scenarios/", import.meta.url));

/** Every scenario under ./scenarios/, sorted by category then id: compiled (dist/bench/…) or from the sources under vitest. */
export async function loadScenarios(): Promise<Scenario[]> {
  // tsc creates the compiled directory only once it holds a scenario.
  if (!existsSync(SCENARIO_DIR)) return [];
  const files = readdirSync(SCENARIO_DIR).filter((f) => /\.(js|ts)$/.test(f) && !f.endsWith(".d.ts"));
  const scenarios: Scenario[] = [];
  for (const file of files) {
    const mod = (await import(new URL(`./scenarios/${file}`, import.meta.url).href)) as { scenario?: Scenario };
    const s = mod.scenario;
    if (!s || typeof s.run !== "function") throw new Error(`bench/sandbox/scenarios/${file} exports no scenario`);
    if (!/^[a-z0-9-]{1,60}$/.test(s.id)) throw new Error(`scenario id '${s.id}' in ${file} must match [a-z0-9-]{1,60}`);
    if (!(SCENARIO_CATEGORIES as readonly string[]).includes(s.category)) throw new Error(`scenario ${s.id}: unknown category '${s.category}'`);
    scenarios.push(s);
  }
  const ids = new Set<string>();
  for (const s of scenarios) {
    if (ids.has(s.id)) throw new Error(`scenario id '${s.id}' is used twice`);
    ids.add(s.id);
  }
  return scenarios.sort((a, b) => a.category.localeCompare(b.category) || a.id.localeCompare(b.id));
}
