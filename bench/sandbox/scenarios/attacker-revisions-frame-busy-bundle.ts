/**
 * Attribution: an attacker kills the sandbox host twice, from two revisions of its bundle, while an
 * innocent bundle is busy on every worker. Each crash alone is ambiguous (two bundles were inside a
 * hook); the innocent bundle is the only one "running" during both, so a rule that blames a repeat
 * suspect frames it. The attacker's digest changes between crashes, so it never repeats.
 *
 * Must hold: the innocent bundle is never quarantined and keeps serving; the attacker's current
 * revision is quarantined once a crash can be pinned on it (its crashes continue until it is: a
 * suspect runs alone, so that takes at most one more crash).
 */
import type { ChainResult } from "../../../src/index.js";
import type { Scenario, ScenarioOutcome } from "../scenario.js";
import { Checks } from "../scenario.js";
import { DETONATOR_SOURCE, busySource, describeChain, digestOf, installKitBundle, kitInput, quarantined, startKitRuntime } from "../attribution-kit.js";

/** Crash attempts from the second revision before giving up on seeing it quarantined. */
const MAX_ATTEMPTS = 4;

export const scenario: Scenario = {
  id: "attacker-revisions-frame-busy-bundle",
  category: "attribution",
  title: "two revisions of an attacker's bundle crash the host while an innocent bundle is busy",
  expected: "the busy innocent bundle is never quarantined and keeps serving; the attacker's revision is quarantined",
  run: () => runFramingAttempt("new-revision"),
};

/**
 * The attack, in two variants: the attacker's second crash comes from a new revision (a new digest),
 * or from the same bundle removed and installed again (a fresh load, which ends any probation).
 * Exported for the sibling scenario attacker-reinstall-frames-busy-bundle.
 */
export async function runFramingAttempt(variant: "new-revision" | "reinstall"): Promise<ScenarioOutcome> {
  const checks = new Checks();
  const runtime = await startKitRuntime();
  let stop = false;
  const innocentResults: ChainResult[] = [];
  const loops: Promise<void>[] = [];
  try {
    await installKitBundle(runtime, "busy-policy", "1.0.0", [{ name: "scan", type: "on_transition", priority: 50 }], busySource(150));
    await installKitBundle(runtime, "attacker", "1.0.0", [{ name: "probe", type: "pre_inject", priority: 50 }], DETONATOR_SOURCE);
    const innocent = digestOf(runtime, "busy-policy");
    const revisions = [digestOf(runtime, "attacker")];

    // Two callers keep the innocent bundle inside its hook on both workers.
    for (let caller = 0; caller < 2; caller++) {
      loops.push(
        (async () => {
          while (!stop) innocentResults.push(await runtime.fire("on_transition", kitInput("on_transition", `s-busy-${caller}`, { text: "x" })));
        })(),
      );
    }
    const busyNow = async (): Promise<void> => {
      const start = innocentResults.length;
      while (innocentResults.length < start + 2 && !stop) await new Promise((r) => setTimeout(r, 20));
    };
    const detonate = () => runtime.fire("pre_inject", kitInput("pre_inject", "s-attacker", { text: "x", detonate: true }));

    const restarts0 = runtime.status().sandbox.restarts;
    await busyNow();
    const first = await detonate();
    checks.check(!quarantined(runtime).includes(innocent), "busy-policy was quarantined after the first crash");

    if (variant === "reinstall") {
      // Removed and installed again under the same name, same code: a fresh load clears its probation.
      await runtime.bundles.remove("attacker");
      await installKitBundle(runtime, "attacker", "1.0.0", [{ name: "probe", type: "pre_inject", priority: 50 }], DETONATOR_SOURCE);
    } else {
      // Revision 2: the digest the first crash may have put on probation is gone.
      await installKitBundle(runtime, "attacker", "1.0.1", [{ name: "probe", type: "pre_inject", priority: 50 }], `${DETONATOR_SOURCE}\n// revision 2`);
    }
    revisions.push(digestOf(runtime, "attacker"));
    let attempts = 0;
    let last: ChainResult = first;
    while (attempts < MAX_ATTEMPTS && !quarantined(runtime).includes(revisions[1]!)) {
      await busyNow();
      last = await detonate();
      attempts++;
      checks.check(!quarantined(runtime).includes(innocent), `busy-policy was quarantined after crash ${attempts + 1}`);
    }
    const restarts = runtime.status().sandbox.restarts - restarts0;
    checks.check(restarts >= 2, `the attacker crashed the host only ${restarts} time(s); the scenario proves nothing`);
    const q = quarantined(runtime);
    checks.check(!q.includes(innocent), "busy-policy (busy during every crash, never the cause) is quarantined");
    checks.check(q.includes(revisions[1]!), `the attacker's second ${variant === "reinstall" ? "install" : "revision"} is not quarantined after ${attempts} crash(es)`);

    // The innocent bundle keeps serving (it may run alone for a few chains while on probation).
    stop = true;
    await Promise.all(loops);
    const served = await runtime.fire("on_transition", kitInput("on_transition", "s-after", { text: "x" }));
    const servedAfter = served.hook_results.length === 1 && served.hook_results[0]!.outcome === "ok";
    const named = (d: string) => (d === innocent ? "busy-policy" : d === revisions[1] ? "attacker (second)" : d === revisions[0] ? "attacker (first)" : d);
    return checks.outcome(
      `${restarts} crashes; last attack chain: ${describeChain(last)}; quarantined: ${q.map(named).join(", ") || "none"}; after: ${describeChain(served)}`,
      servedAfter,
      restarts,
    );
  } finally {
    stop = true;
    await Promise.allSettled(loops);
    await runtime.close();
  }
}
