import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Sandbox } from "../../../src/pool/index.js";
import { CONTINUE_CODE, KILLER_CODE, SPIN_CODE, bundle, hook, startSandbox, task, trailBundle, until } from "./helpers.js";

describe("sandbox pool: a bundle that kills the host process", () => {
  let sandbox: Sandbox;
  const restarts: Record<string, unknown>[] = [];
  const quarantines: Record<string, unknown>[] = [];
  const killer = bundle("killer", KILLER_CODE, { memoryMb: 64 });
  const good = trailBundle("good");

  beforeAll(async () => {
    sandbox = await startSandbox({ threads: 2 });
    sandbox.on("restart", (info) => restarts.push(info));
    sandbox.on("quarantine", (info) => quarantines.push(info));
    await sandbox.loadBundle(killer);
    await sandbox.loadBundle(good);
  });
  afterAll(() => sandbox?.close());

  test("the in-flight chain is answered crashed, the host restarts, the culprit is quarantined", async () => {
    const { result, events } = await sandbox.runChain(task([hook("boom", killer)], 1, { user: "u" }));
    expect(result.status).toBe("completed"); // fail-open
    expect(result.context).toEqual({ user: "u" });
    expect(result.hook_results).toEqual([
      expect.objectContaining({ hook: "boom", bundle: "killer", outcome: "crashed", status: "continue" }),
    ]);
    expect(result.hook_results[0]!.error).toMatch(/sandbox host crashed/);
    expect(events).toContainEqual(
      expect.objectContaining({ event: "hook.error", payload: expect.objectContaining({ hook: "boom", outcome: "crashed" }) }),
    );
    expect(sandbox.stats().restarts).toBe(1);
    expect(restarts).toHaveLength(1);
    expect(sandbox.stats().quarantined).toEqual([killer.digest]);
    expect(quarantines).toEqual([expect.objectContaining({ digest: killer.digest, bundle: "killer", hook: "boom" })]);
  });

  test("a well-behaved chain of another bundle works right after the restart", async () => {
    const { result } = await sandbox.runChain(task([hook("fine", good)], 2, { user: "u" }));
    expect(result.hook_results[0]).toMatchObject({ outcome: "ok", status: "modify" });
    expect(result.context).toEqual({ user: "u", trail: ["good"] });
  });

  test("hooks of a quarantined bundle are skipped as crashed, visibly, without killing the host", async () => {
    const { result, events } = await sandbox.runChain(task([hook("boom2", killer), hook("after", good)], 3));
    expect(result.hook_results.map((r) => [r.hook, r.outcome])).toEqual([
      ["boom2", "crashed"],
      ["after", "ok"],
    ]);
    expect(result.hook_results[0]!.error).toMatch(/bundle quarantined/);
    expect(events.some((e) => e.event === "hook.error" && e.payload.hook === "boom2")).toBe(true);
    expect(sandbox.stats().restarts).toBe(1);
  });

  test("a fail_closed hook of a quarantined bundle aborts the chain", async () => {
    const { result } = await sandbox.runChain(task([hook("guard", killer, { fail_closed: true }), hook("never", good)], 4));
    expect(result.status).toBe("aborted");
    expect(result.aborted_by).toBe("guard");
    expect(result.reason).toMatch(/^fail-closed: guard: /);
    expect(result.hook_results.map((r) => r.hook)).toEqual(["guard"]);
  });

  test("loading the culprit again lifts the quarantine", async () => {
    await sandbox.loadBundle(killer);
    expect(sandbox.stats().quarantined).toEqual([]);
  });

  test("a fail_closed hook that crashes the host aborts its chain with reason fail-closed: <hook>: sandbox crashed", async () => {
    const { result } = await sandbox.runChain(task([hook("closed", killer, { fail_closed: true }), hook("nope", good)], 5));
    expect(result).toMatchObject({
      status: "aborted",
      aborted_by: "closed",
      reason: "fail-closed: closed: sandbox crashed",
    });
    expect(result.hook_results).toEqual([expect.objectContaining({ hook: "closed", outcome: "crashed", status: "abort" })]);
    expect(sandbox.stats().restarts).toBe(2);
    expect(sandbox.stats().quarantined).toEqual([killer.digest]);
    // Bundles loaded before the crash were reloaded into the new host.
    expect((await sandbox.runChain(task([hook("fine2", good)], 6))).result.hook_results[0]!.outcome).toBe("ok");
  });
});

describe("sandbox pool: crash attribution with two chains in flight", () => {
  let sandbox: Sandbox;
  let codeDir: string;
  const killer = bundle("killer2", KILLER_CODE + "// two", { memoryMb: 64 });
  const spinner = bundle("bystander", SPIN_CODE);
  const ok = bundle("ok", CONTINUE_CODE);

  beforeAll(async () => {
    codeDir = mkdtempSync(join(tmpdir(), "vcp-pool-test-"));
    sandbox = await startSandbox({ threads: 2, codeDir });
    for (const b of [killer, spinner, ok]) await sandbox.loadBundle(b);
  });
  afterAll(async () => {
    await sandbox?.close();
    rmSync(codeDir, { recursive: true, force: true });
  });

  /** True once some worker's slot says it is inside `hookName` (see src/pool/slots.ts). */
  function inside(hookName: string): boolean {
    const dir = join(codeDir, "slots");
    return readdirSync(dir).some((f) => readFileSync(join(dir, f), "latin1").includes(` I ${hookName} `));
  }

  test("an ambiguous crash blames nobody: both chains run again, alone; the culprit crashes again and is quarantined, the bystander is answered", async () => {
    const restarts: Record<string, unknown>[] = [];
    sandbox.on("restart", (info) => restarts.push(info));
    const bystander = sandbox.runChain(task([hook("innocent", spinner, { timeout_ms: 1500 })], 1));
    await until(() => inside("innocent"), "the bystander to enter its hook");
    const culprit = await sandbox.runChain(task([hook("boom", killer)], 1));
    const innocent = await bystander;
    // First crash: two hooks were running, nobody is blamed (suspects); each chain ran again alone.
    expect(restarts[0]).toMatchObject({ culprits: [], suspects: expect.arrayContaining([killer.digest, spinner.digest]) });
    // Second crash: only the culprit's chain was running.
    expect(restarts[1]).toMatchObject({ culprits: [expect.objectContaining({ digest: killer.digest, hook: "boom" })] });
    expect(sandbox.stats().restarts).toBe(2);
    expect(culprit.result.hook_results).toEqual([expect.objectContaining({ hook: "boom", outcome: "crashed" })]);
    // The bystander's chain was answered by its own run: its spin hit its timeout, nothing crashed it.
    expect(innocent.result.hook_results).toEqual([expect.objectContaining({ hook: "innocent", outcome: "timeout" })]);
    expect(sandbox.stats().quarantined).toEqual([killer.digest]);
    expect(sandbox.stats().suspectBundles).toEqual([spinner.digest]);

    const fine = await sandbox.runChain(task([hook("bystander-ok", spinner, { timeout_ms: 50 }), hook("ok", ok)], 3));
    expect(fine.result.hook_results.map((r) => r.outcome)).toEqual(["timeout", "ok"]);
  });
});

describe("sandbox pool: a bundle whose top-level code kills the host", () => {
  test("loadBundle rejects INVALID_BUNDLE, the host restarts, nothing is quarantined, chains still run", async () => {
    const sandbox = await startSandbox({ threads: 2 });
    try {
      const ok = trailBundle("steady");
      await sandbox.loadBundle(ok);
      const bomb = bundle("bomb", `'1'.repeat(2 ** 28).split(''); var __vcp_bundle = { act() { return { status: "continue" }; } };`);
      await expect(sandbox.loadBundle(bomb)).rejects.toMatchObject({ code: "INVALID_BUNDLE" });
      expect(sandbox.stats()).toMatchObject({ restarts: 1, quarantined: [] });
      await expect(sandbox.runChain(task([hook("b", bomb)]))).rejects.toMatchObject({ code: "UNKNOWN_BUNDLE" });
      const { result } = await sandbox.runChain(task([hook("s", ok)]));
      expect(result.context.trail).toEqual(["steady"]);
    } finally {
      await sandbox.close();
    }
  });
});
