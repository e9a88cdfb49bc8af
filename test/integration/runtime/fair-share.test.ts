// Fair share per signer (issue 24, review): the same hog load split over four bundles signed by one key
// demoted none of them — each revision held a quarter of the workers, under its share — and another
// tenant's p50 went from 2.6 ms to 613 ms (bench/fairness.ts, FAIRNESS_SPLIT=4). Shares are accounted
// per signing key: the four bundles are one tenant and are capped as one. Real sandbox, real isolates;
// the test asserts the demotion state the runtime reports, never a latency.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, type FireInput, type HookType, type Runtime } from "../../../src/index.js";
import { createArtifact, generateKeyPair, signArtifact } from "../../../src/tooling.js";
import { busyLoop } from "../../../bench/sandbox/attribution-kit.js";
import { CONSTITUTION, EVENTS } from "../../../bench/sandbox/fixtures.js";

const hogKey = generateKeyPair();
const okKey = generateKeyPair();
// One hog bundle per hook type, so each chain holds one of them: the load is split, not repeated.
const HOG_TYPES: HookType[] = ["pre_inject", "post_select", "on_conflict", "on_violation"];
const HOG_BUSY_MS = 150;

function signed(bundle: string, type: HookType, code: string, key: { privateKeyPem: string }, keyId: string) {
  const manifest = { bundle, version: "1.0.0", trust: "deployment", hooks: [{ name: `${bundle.replaceAll("-", "_")}_hook`, type, action: "run", priority: 50, timeout_ms: 30_000 }] };
  return signArtifact(createArtifact(manifest as never, code), key.privateKeyPem, keyId);
}

function input(type: HookType, session: string): FireInput {
  return { session: { id: session }, context: { text: "x" }, constitution: structuredClone(CONSTITUTION) as FireInput["constitution"], event: structuredClone(EVENTS[type]) as never };
}

let runtime: Runtime;
beforeAll(async () => {
  runtime = await createRuntime({
    sandbox: { threads: 2 },
    keyring: { keys: [{ key_id: "tenant-hog", public_key: hogKey.publicKeyPem, max_trust: "deployment" }, { key_id: "tenant-ok", public_key: okKey.publicKeyPem, max_trust: "deployment" }] },
    requireSignatures: true,
  });
  await runtime.bundles.install(signed("victim", "on_transition", `var __vcp_bundle = { run: function () { return { status: "continue" }; } };`, okKey, "tenant-ok"));
  const hogCode = `var __vcp_bundle = { run: function () { ${busyLoop(HOG_BUSY_MS)} return { status: "continue" }; } };`;
  for (const [i, type] of HOG_TYPES.entries()) await runtime.bundles.install(signed(`hog-${i + 1}`, type, hogCode, hogKey, "tenant-hog"));
}, 120_000);
afterAll(async () => {
  await runtime?.close();
});

describe("fair share per signer", () => {
  test("a hog split over four bundles signed by one key is demoted like one bundle; the other tenant is not", async () => {
    const hogDigests = HOG_TYPES.map((_, i) => runtime.bundles.get(`hog-${i + 1}`)!.digest);
    const victimDigest = runtime.bundles.get("victim")!.digest;
    let stop = false;
    let victimChains = 0;
    const loops = [
      ...HOG_TYPES.map(async (type, i) => {
        while (!stop) await runtime.fire(type, input(type, `hog-${i}`));
      }),
      (async () => {
        while (!stop) {
          await runtime.fire("on_transition", input("on_transition", "victim"));
          victimChains++;
        }
      })(),
    ];
    let seen: { demotedBundles?: string[]; demotedAccounts?: string[] } = {};
    try {
      // Detection takes ≈ 2 s of saturation; the ceiling is for a busy 2-core CI machine.
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        seen = runtime.status().sandbox as typeof seen;
        if (hogDigests.every((d) => seen.demotedBundles?.includes(d))) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    } finally {
      stop = true;
      await Promise.all(loops);
    }
    expect(victimChains).toBeGreaterThan(0);
    // Every revision the key signed is capped, as one account; the other signer's bundle is not.
    expect([...(seen.demotedBundles ?? [])].sort()).toEqual([...hogDigests].sort());
    expect(seen.demotedBundles).not.toContain(victimDigest);
    expect(seen.demotedAccounts).toEqual(["key:tenant-hog"]);
  }, 120_000);
});
