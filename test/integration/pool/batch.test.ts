import { afterEach, describe, expect, test } from "vitest";
import type { Sandbox } from "../../../src/pool/index.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import { vcpPlanRef } from "../../../src/chain/plan.js";
import type { GuestLogLine } from "../../../src/sandbox-host/types.js";
import { GUEST_ITERATIONS_PER_MS, KILLER_CODE, VcpError, bundle, busyCode, hook, request, startSandbox, task } from "./helpers.js";

/**
 * Chains that queue up in the sandbox host go to the next free worker as one task (src/pool/batch.ts).
 * Each test first runs quick chains one at a time (warm: the supervisor lets more chains wait in the
 * host once chains are quick), then occupies the only worker (threads 1) with a busy "gate" chain, so
 * the chains sent after it wait in the host together and run as a batch when the gate ends; every
 * chain must still be answered as if it had run alone.
 */

/** Logs "<name> saw <n>" and appends its name to `context.by`. */
function tagBundle(name: string) {
  return bundle(
    name,
    `var __vcp_bundle = { act(input) { vcp.log("info", ${JSON.stringify(name)} + " saw " + input.context.n); return { status: "modify", modified_context: { ...input.context, by: [...(input.context.by || []), ${JSON.stringify(name)}] } }; } };`,
  );
}

const gateBundle = bundle("gate", busyCode(150));
const gateHooks = [hook("gate", gateBundle, { timeout_ms: 30_000 })];

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

/**
 * Quick chains one at a time, so that every bundle's isolate exists in the worker (batch.ts stops a
 * batch that runs long) and the supervisor's estimate of the chain time is low: it lets about
 * HOST_QUEUE_MS of work wait in the host per thread, so quick chains are what gets batched.
 */
async function warm(box: Sandbox, hooks: readonly ResolvedHook[], chains = 80): Promise<void> {
  const plans = hooks.map((h) => [h]);
  for (let i = 0; i < chains; i++) {
    await box.runChain({ plan: { profile: vcpPlanRef("pre_inject"), revision: 0, hooks: plans[i % plans.length]! }, request: request({ n: -1 }) });
  }
}

describe("sandbox pool: chains batched in the host", () => {
  test("chains of different bundles waiting together each get their own result, error and log lines", async () => {
    const logs: GuestLogLine[] = [];
    sandbox = await startSandbox({ threads: 1, onGuestLog: (line) => logs.push(line) });
    const tags = ["alpha", "beta", "gamma", "delta"].map(tagBundle);
    const thrower = bundle("thrower", `var __vcp_bundle = { act(input) { throw new Error("no " + input.context.n); } };`);
    for (const b of [gateBundle, ...tags, thrower]) await sandbox.loadBundle(b);
    await warm(sandbox, [...tags, thrower].map((b) => hook(`warm-${b.name}`, b)));
    logs.length = 0;

    const gate = sandbox.runChain({ plan: { profile: vcpPlanRef("pre_inject"), revision: 1, hooks: gateHooks }, request: request({ n: 100 }) });
    // Chain i: bundle i % 4, then every third chain also runs the thrower, every other one a second tag.
    const plans = Array.from({ length: 12 }, (_, i) => {
      const hooks = [hook(`first-${i}`, tags[i % 4]!)];
      if (i % 3 === 0) hooks.push(hook(`throws-${i}`, thrower));
      if (i % 2 === 1) hooks.push(hook(`second-${i}`, tags[(i + 1) % 4]!));
      return hooks;
    });
    const results = await Promise.all(plans.map((hooks, i) => sandbox!.runChain(task(hooks, 2, { n: i }))));
    expect((await gate).result.hook_results[0]).toMatchObject({ hook: "gate", outcome: "ok" });

    results.forEach(({ result }, i) => {
      const by = [tags[i % 4]!.name, ...(i % 2 === 1 ? [tags[(i + 1) % 4]!.name] : [])];
      expect(result.context, `chain ${i}`).toEqual({ n: i, by });
      expect(result.hook_results.map((r) => [r.hook, r.outcome]), `chain ${i}`).toEqual(
        plans[i]!.map((h) => [h.name, h.name.startsWith("throws") ? "error" : "ok"]),
      );
      if (i % 3 === 0) expect(result.hook_results[1]!.error, `chain ${i}`).toMatch(`no ${i}`);
    });
    // One line per hook that logs, carrying that chain's own input and naming its own hook.
    for (let i = 0; i < 12; i++) {
      const mine = logs.filter((line) => line.message.endsWith(` saw ${i}`));
      expect(mine.map((line) => [line.hook, line.message]), `chain ${i}`).toEqual(
        plans[i]!.filter((h) => !h.name.startsWith("throws")).map((h) => [h.name, `${h.action.bundle} saw ${i}`]),
      );
    }
    expect(sandbox.stats()).toMatchObject({ restarts: 0, inFlight: 0, queued: 0 });
  });

  test("a hook that kills the host inside a batch: only its bundle is blamed, every other chain is answered", async () => {
    const restarts: Record<string, unknown>[] = [];
    const quarantines: Record<string, unknown>[] = [];
    sandbox = await startSandbox({ threads: 1 });
    sandbox.on("restart", (info) => restarts.push(info));
    sandbox.on("quarantine", (info) => quarantines.push(info));
    const killer = bundle("killer", KILLER_CODE, { memoryMb: 64 });
    const tags = ["one", "two", "three"].map(tagBundle);
    for (const b of [gateBundle, killer, ...tags]) await sandbox.loadBundle(b);
    await warm(sandbox, tags.map((b) => hook(`warm-${b.name}`, b)));

    const gate = sandbox.runChain({ plan: { profile: vcpPlanRef("pre_inject"), revision: 1, hooks: gateHooks }, request: request({ n: 100 }) });
    // Waiting together behind the gate: a good chain before the killer (it may have finished inside
    // the batch when the host dies: its reply died with the host), the killer, good chains after it.
    const before = sandbox.runChain(task([hook("before", tags[0]!)], 2, { n: 0 }));
    const boom = sandbox.runChain(task([hook("boom", killer), hook("after-boom", tags[1]!)], 2, { n: 1 }));
    const after = [2, 3, 4].map((n) => sandbox!.runChain(task([hook(`after-${n}`, tags[n % 3]!)], 2, { n })));

    const crashed = (await boom).result;
    expect(crashed.status).toBe("completed"); // fail-open
    expect(crashed.context).toEqual({ n: 1 });
    expect(crashed.hook_results).toEqual([expect.objectContaining({ hook: "boom", bundle: "killer", outcome: "crashed" })]);
    expect(crashed.hook_results[0]!.error).toMatch(/sandbox host crashed/);
    for (const [n, chain] of [[0, before] as const, ...after.map((p, i) => [i + 2, p] as const)]) {
      const { result } = await chain;
      expect(result.hook_results.map((r) => r.outcome), `chain ${n}`).toEqual(["ok"]);
      expect(result.context, `chain ${n}`).toEqual({ n, by: [tags[n % 3]!.name] });
    }
    expect((await gate).result.hook_results[0]!.outcome).toBe("ok");
    expect(quarantines).toEqual([expect.objectContaining({ digest: killer.digest, hook: "boom" })]);
    expect(restarts).toHaveLength(1);
    expect(restarts[0]).toMatchObject({ crashedChains: 1, culprits: [expect.objectContaining({ digest: killer.digest })], suspects: [] });
    expect(sandbox.stats()).toMatchObject({ restarts: 1, quarantined: [killer.digest], suspectBundles: [] });

    // A batch mixing chains that name the quarantined bundle with chains that do not: each chain has
    // its own quarantine set, so only the former skip it.
    await warm(sandbox, tags.map((b) => hook(`rewarm-${b.name}`, b)));
    const gate2 = sandbox.runChain({ plan: { profile: vcpPlanRef("pre_inject"), revision: 1, hooks: gateHooks }, request: request({ n: 100 }) });
    const mixed = await Promise.all(
      [0, 1, 2, 3].map((n) =>
        sandbox!.runChain(task(n % 2 === 0 ? [hook(`q-${n}`, killer), hook(`ok-${n}`, tags[0]!)] : [hook(`ok-${n}`, tags[0]!)], 3, { n })),
      ),
    );
    await gate2;
    mixed.forEach(({ result }, n) => {
      const outcomes = result.hook_results.map((r) => r.outcome);
      expect(outcomes, `chain ${n}`).toEqual(n % 2 === 0 ? ["crashed", "ok"] : ["ok"]);
      if (n % 2 === 0) expect(result.hook_results[0]!.error).toMatch(/bundle quarantined/);
    });
    expect(sandbox.stats().restarts).toBe(1);
  });

  test("chains that miss their plan on a worker inside a batch run again with it", async () => {
    sandbox = await startSandbox({ threads: 2 });
    const spin = bundle(
      "spin",
      `var __vcp_bundle = { act(input) { let x = 0; for (let i = 0; i < input.context.spin; i++) x += i & 1; return { status: "modify", modified_context: { ...input.context, done: x >= 0 } }; } };`,
    );
    const other = bundle("other", busyCode(60));
    const quick = tagBundle("quick");
    for (const b of [spin, other, quick]) await sandbox.loadBundle(b);
    await warm(sandbox, [hook("quick", quick)]);
    // One hook list (one plan key): its first chain carries the plan and holds one worker for long;
    // the other worker runs a shorter chain of another plan, then takes the waiting chains of the first
    // plan as a batch without having compiled it (PLAN_MISS for each), so they run again with it.
    const plan = [hook("spin", spin, { timeout_ms: 60_000 })];
    const otherPlan = [hook("other", other, { timeout_ms: 30_000 })];
    const long = sandbox.runChain(task(plan, 1, { spin: 600 * GUEST_ITERATIONS_PER_MS }));
    const short = sandbox.runChain(task(otherPlan, 1, { n: 0 }));
    const waiting = Array.from({ length: 6 }, (_, n) => sandbox!.runChain(task(plan, 1, { spin: n })));
    for (const [n, chain] of waiting.entries()) {
      const { result } = await chain;
      expect(result.hook_results.map((r) => r.outcome), `chain ${n}`).toEqual(["ok"]);
      expect(result.context, `chain ${n}`).toEqual({ spin: n, done: true });
    }
    expect((await long).result.hook_results[0]!.outcome).toBe("ok");
    expect((await short).result.hook_results[0]!.outcome).toBe("ok");
    expect(sandbox.stats()).toMatchObject({ restarts: 0, inFlight: 0 });
  });

  test("a reply over the frame limit inside a batch fails only its own chain", async () => {
    sandbox = await startSandbox({ threads: 1, frameBytes: 16 * 1024 });
    const grow = bundle(
      "grow",
      `var __vcp_bundle = { act(input) { return input.context.big ? { status: "modify", modified_context: { ...input.context, blob: "g".repeat(40 * 1024) } } : { status: "modify", modified_context: { ...input.context, small: true } }; } };`,
    );
    await sandbox.loadBundle(gateBundle);
    await sandbox.loadBundle(grow);
    const growHooks = [hook("grow", grow)];
    for (let i = 0; i < 80; i++) await sandbox.runChain(task(growHooks, 1, { big: false }));

    const gate = sandbox.runChain({ plan: { profile: vcpPlanRef("pre_inject"), revision: 1, hooks: gateHooks }, request: request({ n: 100 }) });
    const settled = await Promise.allSettled([0, 1, 2, 3, 4].map((n) => sandbox!.runChain(task(growHooks, 1, { n, big: n === 2 }))));
    await gate;
    settled.forEach((outcome, n) => {
      if (n === 2) {
        expect(outcome.status).toBe("rejected");
        const error = (outcome as PromiseRejectedResult).reason as unknown;
        expect(error).toBeInstanceOf(VcpError);
        expect(error).toMatchObject({ code: "SANDBOX_FRAME_TOO_LARGE", details: { limit: 16 * 1024, frame: "sandbox reply" } });
      } else {
        expect(outcome.status, `chain ${n}`).toBe("fulfilled");
        expect((outcome as PromiseFulfilledResult<{ result: { context: unknown } }>).value.result.context).toEqual({ n, big: false, small: true });
      }
    });
    expect(sandbox.stats()).toMatchObject({ restarts: 0, inFlight: 0 });
  });
});
