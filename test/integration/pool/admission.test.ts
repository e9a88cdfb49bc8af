import { afterEach, describe, expect, test } from "vitest";
import type { Sandbox } from "../../../src/pool/index.js";
import { CONTINUE_CODE, SPIN_CODE, VcpError, bundle, busyCode, hook, startSandbox, task } from "./helpers.js";

let sandbox: Sandbox | undefined;
afterEach(async () => {
  await sandbox?.close();
  sandbox = undefined;
});

describe("sandbox pool: bounded queue", () => {
  test("more than maxQueue waiting chains is SANDBOX_OVERLOADED, naming the limit", async () => {
    sandbox = await startSandbox({ threads: 2, maxQueue: 1 });
    // Admission is decided at submission, synchronously: the checks below only need the chains still
    // running when they are made, which any busy loop gives. So the loop is short and its timeout the
    // longest a hook may have: a 1.5 s loop under a 10 s wall-clock timeout timed out (and the three
    // chains outlasted the test's 20 s) with a load average of ≈ 15 on two cores.
    const busy = bundle("busy", busyCode(200));
    await sandbox.loadBundle(busy);
    const slowHook = hook("busy", busy, { timeout_ms: 30_000 });
    const running = [sandbox.runChain(task([slowHook])), sandbox.runChain(task([slowHook]))];
    expect(sandbox.stats()).toMatchObject({ inFlight: 2, queued: 0 });
    const queued = sandbox.runChain(task([slowHook]));
    expect(sandbox.stats().queued).toBe(1);
    const err = await sandbox.runChain(task([slowHook])).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VcpError);
    expect(err).toMatchObject({ code: "SANDBOX_OVERLOADED", details: { maxQueue: 1 } });
    expect((err as Error).message).toMatch(/maxQueue 1/);
    // The accepted chains all finish normally.
    for (const done of await Promise.all([...running, queued])) expect(done.result.hook_results[0]!.outcome).toBe("ok");
    expect(sandbox.stats()).toMatchObject({ inFlight: 0, queued: 0 });
  }, 120_000);

  test("invalid options are INVALID_CONFIG", async () => {
    await expect(startSandbox({ threads: 0 })).rejects.toMatchObject({ code: "INVALID_CONFIG" });
    await expect(startSandbox({ maxQueue: -1 })).rejects.toMatchObject({ code: "INVALID_CONFIG" });
  });
});

describe("sandbox pool: slow-bundle admission", () => {
  test("a bundle that keeps timing out occupies one thread; chains of other bundles keep flowing", async () => {
    sandbox = await startSandbox({ threads: 2, slowBundle: { timeouts: 1, windowMs: 600_000 } });
    const slow = bundle("slowpoke", SPIN_CODE);
    const fast = bundle("fast", CONTINUE_CODE);
    await sandbox.loadBundle(slow);
    await sandbox.loadBundle(fast);

    const first = await sandbox.runChain(task([hook("spin", slow, { timeout_ms: 100 })]));
    expect(first.result.hook_results[0]!.outcome).toBe("timeout");
    expect(sandbox.stats().slowBundles).toEqual([slow.digest]);

    const finished: string[] = [];
    const spinHook = hook("spin-long", slow, { timeout_ms: 1500 });
    const s1 = sandbox.runChain(task([spinHook])).then(() => finished.push("slow-1"));
    const s2 = sandbox.runChain(task([spinHook])).then(() => finished.push("slow-2"));
    // Only one chain of the slow bundle is let into the pool; the second waits in the supervisor.
    expect(sandbox.stats()).toMatchObject({ inFlight: 1, queued: 1 });
    const f = sandbox.runChain(task([hook("quick", fast)])).then((r) => {
      finished.push("fast");
      return r;
    });
    const quick = await f;
    expect(quick.result.hook_results[0]!.outcome).toBe("ok");
    // Without admission both slow chains would hold both threads and "fast" would finish after one of them.
    expect(finished).toEqual(["fast"]);
    expect(sandbox.stats()).toMatchObject({ inFlight: 1, queued: 1 });
    await Promise.all([s1, s2]);
    expect(finished).toEqual(["fast", "slow-1", "slow-2"]);
  });

  test("a slow bundle stops being gated when it is loaded again", async () => {
    sandbox = await startSandbox({ threads: 2, slowBundle: { timeouts: 2, windowMs: 600_000 } });
    const slow = bundle("slowpoke", SPIN_CODE);
    await sandbox.loadBundle(slow);
    const spin = hook("spin", slow, { timeout_ms: 50 });
    await sandbox.runChain(task([spin]));
    expect(sandbox.stats().slowBundles).toEqual([]); // one timeout is below the threshold of two
    await sandbox.runChain(task([spin]));
    expect(sandbox.stats().slowBundles).toEqual([slow.digest]);
    await sandbox.loadBundle(slow);
    expect(sandbox.stats().slowBundles).toEqual([]);
    const both = [sandbox.runChain(task([spin])), sandbox.runChain(task([spin]))];
    expect(sandbox.stats().inFlight).toBe(2);
    await Promise.all(both);
  });
});
