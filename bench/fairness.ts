/**
 * Fairness bench: what one bundle whose hooks stay just under their timeout does to a well-behaved
 * tenant's chains. Phases, each with the well-behaved 3-hook chain (bench/sandbox/fixtures.ts) in a
 * closed loop:
 *
 *   quiet  — the well-behaved chain alone
 *   hog    — plus HOG_CALLERS closed loops of a chain whose one hook is busy HOG_BUSY_MS of its
 *            HOG_TIMEOUT_MS timeout (never times out, so timeout-based slow-bundle detection never fires)
 *
 * FAIRNESS_SPLIT=4 splits the same hog load over four bundles signed by one key, one per hook type
 * (each caller fires its own type): fair share is accounted per signer, so they are one tenant.
 *
 * Prints a table and writes bench/reports/fairness.json. Run: `npm run bench:fairness`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import type { HookType, Runtime } from "../src/index.js";
import { createArtifact, generateKeyPair, signArtifact } from "../src/tooling.js";
import { buildGuestText } from "./lib/guest-build.js";
import { busySource, installKitBundle, kitInput, startKitRuntime } from "./sandbox/attribution-kit.js";
import { RUNTIME_OPTIONS, checkWellBehaved, installWellBehaved, wellBehavedInput } from "./sandbox/fixtures.js";
import { nowNs, percentile } from "./lib/stats.js";

const HOG_BUSY_MS = 900;
// The hog works ~900 ms per call (by iteration count; the guest clock is frozen during a call) and
// must never time out, only hold workers: its timeout is well above its work.
const HOG_TIMEOUT_MS = 5000;
const HOG_CALLERS = 4;
const PHASE_MS = Number(process.env["FAIRNESS_PHASE_MS"] ?? 10_000);
const SPLIT = process.env["FAIRNESS_SPLIT"] === "4";
/** With FAIRNESS_SPLIT=4: hog bundle i runs on HOG_SPLIT_TYPES[i], and caller c fires its bundle's type. */
const HOG_SPLIT_TYPES: HookType[] = ["pre_inject", "post_select", "on_conflict", "on_violation"];
const hogKey = generateKeyPair();

interface PhaseStats {
  phase: string;
  chains: number;
  errors: number;
  p50_ms: number | null;
  p99_ms: number | null;
  max_ms: number | null;
  hog_chains?: number;
  hog_demoted?: boolean;
}

async function wellBehavedLoop(runtime: Runtime, untilMs: number, latencies: number[], errors: { n: number }): Promise<void> {
  let i = 0;
  while (Date.now() < untilMs) {
    const text = `fair-${i++}`;
    const t0 = nowNs();
    const result = await runtime.fire("on_transition", wellBehavedInput("s-tenant", text));
    if (checkWellBehaved(result, text) !== null) errors.n++;
    else latencies.push(Number(nowNs() - t0));
  }
}

async function phase(runtime: Runtime, name: string, hog: boolean): Promise<PhaseStats> {
  const until = Date.now() + PHASE_MS;
  const latencies: number[] = [];
  const errors = { n: 0 };
  let hogChains = 0;
  let demoted = false;
  const loops = [wellBehavedLoop(runtime, until, latencies, errors)];
  if (hog) {
    for (let c = 0; c < HOG_CALLERS; c++) {
      loops.push(
        (async () => {
          while (Date.now() < until) {
            const type = SPLIT ? HOG_SPLIT_TYPES[c % HOG_SPLIT_TYPES.length]! : "pre_inject";
            await runtime.fire(type, kitInput(type, `s-hog-${c}`, { text: "x" }));
            hogChains++;
            demoted ||= (runtime.status().sandbox.demotedBundles ?? []).length > 0;
          }
        })(),
      );
    }
  }
  await Promise.all(loops);
  const stats: PhaseStats = {
    phase: name,
    chains: latencies.length,
    errors: errors.n,
    p50_ms: latencies.length ? percentile(latencies, 50) / 1e6 : null,
    p99_ms: latencies.length ? percentile(latencies, 99) / 1e6 : null,
    max_ms: latencies.length ? latencies.reduce((a, b) => (b > a ? b : a), 0) / 1e6 : null,
  };
  if (hog) Object.assign(stats, { hog_chains: hogChains, hog_demoted: demoted });
  return stats;
}

async function main(): Promise<void> {
  // FAIRNESS=off measures the same load without the worker-time share (the behaviour before it).
  const runtime = await startKitRuntime({
    ...(process.env["FAIRNESS"] === "off" ? { sandbox: { ...RUNTIME_OPTIONS.sandbox, fairShare: false } } : {}),
    // The hog's signing key; the well-behaved bundles stay unsigned (RUNTIME_OPTIONS allows it).
    keyring: { keys: [{ key_id: "hog-tenant", public_key: hogKey.publicKeyPem, max_trust: "deployment" }] },
  });
  try {
    await installWellBehaved(runtime);
    if (!SPLIT) {
      await installKitBundle(runtime, "hog", "1.0.0", [{ name: "hog", type: "pre_inject", priority: 50, timeout_ms: HOG_TIMEOUT_MS }], busySource(HOG_BUSY_MS));
    } else {
      const code = await buildGuestText(busySource(HOG_BUSY_MS));
      for (const [i, type] of HOG_SPLIT_TYPES.entries()) {
        const manifest = { bundle: `hog-${i + 1}`, version: "1.0.0", trust: "deployment", limits: { memory_mb: 64 }, hooks: [{ name: `hog_${i + 1}`, type, action: "run", priority: 50, timeout_ms: HOG_TIMEOUT_MS, condition: null }] };
        await runtime.bundles.install(signArtifact(createArtifact(manifest as never, code), hogKey.privateKeyPem, "hog-tenant"));
      }
    }
    const results = [await phase(runtime, "quiet", false), await phase(runtime, "hog", true), await phase(runtime, "quiet-after", false)];
    const fmt = (n: number | null | undefined) => (n == null ? "-" : n.toFixed(1));
    console.log("phase        chains  errors   p50 ms    p99 ms    max ms   hog chains  hog demoted");
    for (const r of results) {
      console.log(
        `${r.phase.padEnd(12)} ${String(r.chains).padStart(6)}  ${String(r.errors).padStart(6)}  ${fmt(r.p50_ms).padStart(7)}  ${fmt(r.p99_ms).padStart(8)}  ${fmt(r.max_ms).padStart(8)}   ${String(r.hog_chains ?? "-").padStart(9)}  ${String(r.hog_demoted ?? "-")}`,
      );
    }
    mkdirSync("bench/reports", { recursive: true });
    writeFileSync("bench/reports/fairness.json", JSON.stringify({ phase_ms: PHASE_MS, hog: { busy_ms: HOG_BUSY_MS, timeout_ms: HOG_TIMEOUT_MS, callers: HOG_CALLERS, bundles: SPLIT ? 4 : 1 }, results }, null, 2));
  } finally {
    await runtime.close();
  }
}

await main();
