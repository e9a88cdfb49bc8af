/**
 * Tenant isolation: a bundle whose hook stays just under its timeout, called from several clients at
 * once, holds every worker; it never times out, so timeout-based slow-bundle admission never sees
 * it, and a well-behaved tenant's chains wait behind it (fairness bench: median 0.2 ms → ≈1.7 s).
 *
 * Must hold (the mechanism, not a latency figure, so it holds on a busy machine): the hog is demoted
 * for its share of worker time (capped at its share of the threads: one of two); the well-behaved
 * tenant's bundles are not; its chains keep completing exactly right while the hog is demoted.
 * Figures: `npm run bench:fairness`.
 */
import type { Runtime } from "../../../src/index.js";
import type { Scenario } from "../scenario.js";
import { Checks } from "../scenario.js";
import { busySource, digestOf, installKitBundle, kitInput, startKitRuntime } from "../attribution-kit.js";
import { WELL_BEHAVED_BUNDLES, checkWellBehaved, installWellBehaved, wellBehavedInput } from "../fixtures.js";

const HOG_CALLERS = 3;
/**
 * Long enough that 3 callers keep both workers busy; short enough that a tenant chain behind it still
 * completes in seconds at load 25 (it was 400 ms: 11 tenant chains in 240 s with 8 CPU burners).
 */
const HOG_BUSY_MS = 100;
// Far above the hog's work even on a loaded machine: the hog must never time out (the attack is a
// hook that stays under its timeout), so only the fair-share cap can stop it. The maximum: isolated-vm
// ends ordinary code on the wall clock, and its CPU must fit on a machine of load 25 and more.
const HOG_TIMEOUT_MS = 30_000;
/**
 * Give up after this long: a safety net, not a figure (it takes ≈2 s of saturation at idle). Wall time
 * scales with the machine's load (at load 20 a tenant chain waits seconds behind the hog), and the
 * counts asserted are what must hold.
 */
const MAX_WAIT_MS = 240_000;
/** Well-behaved chains that must complete while the hog is demoted. */
const CHAINS_WHILE_DEMOTED = 20;

function demoted(runtime: Runtime): string[] {
  return runtime.status().sandbox.demotedBundles ?? [];
}

export const scenario: Scenario = {
  id: "hog-under-timeout-demoted",
  category: "tenant-isolation",
  title: "a bundle whose hooks stay just under their timeout cannot hold every worker",
  expected: "the hog is demoted (capped) for its share of worker time; the tenant's chains keep completing",
  async run() {
    const checks = new Checks();
    const runtime = await startKitRuntime();
    let stop = false;
    const loops: Promise<void>[] = [];
    try {
      await installWellBehaved(runtime);
      await installKitBundle(runtime, "hog", "1.0.0", [{ name: "hog", type: "pre_inject", priority: 50, timeout_ms: HOG_TIMEOUT_MS }], busySource(HOG_BUSY_MS));
      const hog = digestOf(runtime, "hog");
      const tenant = new Set(WELL_BEHAVED_BUNDLES.map((b) => digestOf(runtime, b)));
      let hogChains = 0;
      const tenantDemoted = new Set<string>();
      for (let c = 0; c < HOG_CALLERS; c++) {
        loops.push(
          (async () => {
            while (!stop) {
              await runtime.fire("pre_inject", kitInput("pre_inject", `s-hog-${c}`, { text: "x" }));
              hogChains++;
              for (const d of demoted(runtime)) if (tenant.has(d)) tenantDemoted.add(d);
            }
          })(),
        );
      }

      // The tenant keeps firing; count its chains once the hog is demoted.
      let served = 0;
      let wrong = 0;
      let whileDemoted = 0;
      let seenDemoted = false;
      const started = Date.now();
      let n = 0;
      while (whileDemoted < CHAINS_WHILE_DEMOTED && Date.now() - started < MAX_WAIT_MS) {
        const text = `tenant-${n++}`;
        const result = await runtime.fire("on_transition", wellBehavedInput("s-tenant", text));
        if (checkWellBehaved(result, text) === null) served++;
        else wrong++;
        const now = demoted(runtime);
        for (const d of now) if (tenant.has(d)) tenantDemoted.add(d);
        if (now.includes(hog)) {
          seenDemoted = true;
          whileDemoted++;
        }
        // A gentle pace: the tenant is well-behaved, the hog is what saturates the workers.
        await new Promise((r) => setTimeout(r, 5));
      }
      stop = true;
      await Promise.all(loops);

      checks.check(seenDemoted, `the hog was never demoted (${hogChains} hog chains in ${Date.now() - started} ms)`);
      checks.check(whileDemoted >= CHAINS_WHILE_DEMOTED, `only ${whileDemoted} tenant chains completed while the hog was demoted`);
      checks.check(tenantDemoted.size === 0, `well-behaved bundles were demoted: ${tenantDemoted.size}`);
      checks.check(wrong === 0, `${wrong} tenant chains came back wrong`);

      const text = "after";
      const after = await runtime.fire("on_transition", wellBehavedInput("s-after", text));
      return checks.outcome(
        `hog: ${hogChains} chains, demoted ${seenDemoted}; tenant: ${served} served (${whileDemoted} while the hog was demoted), ${wrong} wrong`,
        checkWellBehaved(after, text) === null,
      );
    } finally {
      stop = true;
      await Promise.allSettled(loops);
      await runtime.close();
    }
  },
};
