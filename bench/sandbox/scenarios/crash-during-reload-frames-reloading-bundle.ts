/**
 * Attribution: after a crash the supervisor reloads every bundle into the new sandbox host, one at a
 * time, and quarantines a bundle whose reload fails. An attacker that gets a chain running during
 * that window and kills the host again makes an innocent bundle's reload "fail" — and the innocent
 * bundle is quarantined for it. Here the innocent bundles' top-level code is slow (a legitimate
 * start-up cost), which widens the window; the attacker fires a stream of detonating chains.
 *
 * Must hold: no innocent bundle is quarantined; the attacker's bundles are; the innocent bundles
 * keep serving.
 */
import type { ChainResult } from "../../../src/index.js";
import type { Scenario } from "../scenario.js";
import { Checks } from "../scenario.js";
import { DETONATOR_SOURCE, describeChain, digestOf, installKitBundle, kitInput, quarantined, startKitRuntime, busyLoop } from "../attribution-kit.js";

/** Many innocent bundles, each a little slow to load: a wide reload window of short loads. */
const INNOCENT = ["warm-1", "warm-2", "warm-3", "warm-4", "warm-5", "warm-6", "warm-7", "warm-8"];
/**
 * Top-level code busy for about this long (CPU) at every load. The load budget (1 s) is wall clock:
 * isolated-vm ends ordinary code on the wall clock, and 150 ms ran past it on a loaded 2-core machine
 * (load ≈ 20), so the window is widened by the number of bundles, not by their length.
 */
const LOAD_BUSY_MS = 25;
const STREAM_INTERVAL_MS = 25;
const STREAM_MAX_MS = 20_000;

const slowLoadSource = `${busyLoop(LOAD_BUSY_MS)}
export function run(input) { return { status: "continue" }; }`;

export const scenario: Scenario = {
  id: "crash-during-reload-frames-reloading-bundle",
  category: "attribution",
  title: "a crash while the restarted host reloads bundles is pinned on the bundle being reloaded",
  expected: "bundles being reloaded are never quarantined for another bundle's crash; the attackers are",
  async run() {
    const checks = new Checks();
    const runtime = await startKitRuntime();
    try {
      for (const name of INNOCENT) await installKitBundle(runtime, name, "1.0.0", [{ name: `check-${name}`, type: "on_transition", priority: 50 }], slowLoadSource);
      await installKitBundle(runtime, "opener", "1.0.0", [{ name: "open", type: "pre_inject", priority: 50 }], DETONATOR_SOURCE);
      await installKitBundle(runtime, "closer", "1.0.0", [{ name: "close", type: "post_select", priority: 50 }], DETONATOR_SOURCE);
      const innocents = new Map(INNOCENT.map((name) => [digestOf(runtime, name), name]));
      const closer = digestOf(runtime, "closer");
      const restarts0 = runtime.status().sandbox.restarts;

      // Crash 1 (alone: the opener is rightly quarantined) starts a restart and its reloads.
      const first = await runtime.fire("pre_inject", kitInput("pre_inject", "s-open", { text: "x", detonate: true }));
      // Then a stream of detonating chains, so one is submitted while the reloads run.
      const stream: Promise<ChainResult>[] = [];
      const started = Date.now();
      while (!quarantined(runtime).includes(closer) && Date.now() - started < STREAM_MAX_MS) {
        stream.push(runtime.fire("post_select", kitInput("post_select", "s-close", { text: "x", detonate: true })));
        await new Promise((r) => setTimeout(r, STREAM_INTERVAL_MS));
        if ([...innocents.keys()].some((d) => quarantined(runtime).includes(d))) break;
      }
      const results = await Promise.all(stream);
      const restarts = runtime.status().sandbox.restarts - restarts0;
      checks.check(restarts >= 2, `only ${restarts} crash(es); the scenario proves nothing`);
      const q = quarantined(runtime);
      const framed = q.filter((d) => innocents.has(d)).map((d) => innocents.get(d)!);
      checks.check(framed.length === 0, `innocent bundles quarantined: ${framed.join(", ")}`);
      checks.check(q.includes(closer), "the closer (the second attacker) was not quarantined");

      const served = await runtime.fire("on_transition", kitInput("on_transition", "s-after", { text: "x" }));
      const servedAfter = served.hook_results.length === INNOCENT.length && served.hook_results.every((h) => h.outcome === "ok");
      return checks.outcome(
        `first: ${describeChain(first)}; ${results.length} closer chains; ${restarts} crashes; quarantined: ${q.map((d) => innocents.get(d) ?? (d === closer ? "closer" : "opener")).join(", ")}; after: ${describeChain(served)}`,
        servedAfter,
        restarts,
      );
    } finally {
      await runtime.close();
    }
  },
};
