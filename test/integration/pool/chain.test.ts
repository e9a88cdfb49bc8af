import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { GuestLogLine } from "../../../src/sandbox-host/types.js";
import type { Sandbox } from "../../../src/pool/index.js";
import { CONTINUE_CODE, SPIN_CODE, VcpError, bundle, hook, startSandbox, task, trailBundle } from "./helpers.js";

describe("sandbox pool: chains", () => {
  let sandbox: Sandbox;
  const logs: GuestLogLine[] = [];
  const a = trailBundle("alpha");
  const b = trailBundle("beta");
  const c = trailBundle("gamma");
  const logger = bundle(
    "logger",
    `var __vcp_bundle = { act(input) { vcp.log("warn", "saw " + input.session.id, { keys: Object.keys(input.context).length }); return { status: "continue" }; } };`,
  );
  const spin = bundle("spinner", SPIN_CODE);
  const ok = bundle("okay", CONTINUE_CODE);

  beforeAll(async () => {
    sandbox = await startSandbox({ onGuestLog: (line) => logs.push(line) });
    for (const x of [a, b, c, logger, spin, ok]) await sandbox.loadBundle(x);
  });
  afterAll(() => sandbox?.close());

  test("loadBundle loads the code in an isolate and lists its exports", async () => {
    const multi = bundle("multi", `var __vcp_bundle = { one() { return { status: "continue" }; }, two() { return { status: "continue" }; } };`);
    expect((await sandbox.loadBundle(multi)).exports.sort()).toEqual(["one", "two"]);
  });

  test("a bundle that does not load is INVALID_BUNDLE", async () => {
    const broken = bundle("broken", `var __vcp_bundle = { act( {`);
    await expect(sandbox.loadBundle(broken)).rejects.toMatchObject({ code: "INVALID_BUNDLE" });
    const badName = bundle("Bad Name", CONTINUE_CODE);
    await expect(sandbox.loadBundle(badName)).rejects.toMatchObject({ code: "INVALID_BUNDLE" });
    await expect(sandbox.loadBundle({ ...ok, digest: "sha256:../../etc/passwd" })).rejects.toMatchObject({ code: "INVALID_BUNDLE" });
  });

  test("one digest names one content: different code under a loaded digest is refused", async () => {
    await expect(sandbox.loadBundle({ ...ok, code: CONTINUE_CODE + "\n// changed" })).rejects.toMatchObject({ code: "INVALID_BUNDLE" });
  });

  test("three hooks in three bundles run in plan order with modify chaining", async () => {
    const hooks = [hook("first", a, { priority: 90 }), hook("second", b, { priority: 50 }), hook("third", c, { priority: 10 })];
    const { result, events } = await sandbox.runChain(task(hooks, 1, { user: "u1" }));
    expect(result.status).toBe("completed");
    expect(result.context).toEqual({ user: "u1", trail: ["alpha", "beta", "gamma"] });
    expect(result.hook_results.map((r) => [r.hook, r.bundle, r.status, r.outcome])).toEqual([
      ["first", "alpha", "modify", "ok"],
      ["second", "beta", "modify", "ok"],
      ["third", "gamma", "modify", "ok"],
    ]);
    expect(events.filter((e) => e.event === "hook.fired").map((e) => e.payload.hook)).toEqual(["first", "second", "third"]);
    expect(events.at(-1)).toMatchObject({ event: "hook.completed", payload: { hook: "third", outcome: "ok" } });
  });

  test("the same plan runs again (compiled plan cache) with a fresh chain state", async () => {
    const hooks = [hook("p1", a), hook("p2", b)];
    const first = await sandbox.runChain(task(hooks, 2, { n: 1 }));
    const second = await sandbox.runChain(task(hooks, 2, { n: 2 }));
    expect(first.result.context).toEqual({ n: 1, trail: ["alpha", "beta"] });
    expect(second.result.context).toEqual({ n: 2, trail: ["alpha", "beta"] });
  });

  test("guest log lines reach onGuestLog tagged with bundle and hook", async () => {
    logs.length = 0;
    await sandbox.runChain(task([hook("talker", logger)], 3, { x: 1, y: 2 }));
    expect(logs).toEqual([expect.objectContaining({ bundle: "logger", hook: "talker", level: "warn", message: "saw session-1" })]);
  });

  test("a CPU loop times out and the next chain on the pool is fine", async () => {
    const { result, events } = await sandbox.runChain(task([hook("spin", spin, { timeout_ms: 200 }), hook("after", a)], 4));
    expect(result.hook_results.map((r) => r.outcome)).toEqual(["timeout", "ok"]);
    expect(result.context.trail).toEqual(["alpha"]);
    expect(events.some((e) => e.event === "hook.timeout" && e.payload.hook === "spin")).toBe(true);
    const next = await sandbox.runChain(task([hook("again", spin, { timeout_ms: 5000, condition: { field: "context.user", operator: "eq", value: "nobody" } }), hook("ok", ok)], 5));
    expect(next.result.hook_results.map((r) => r.outcome)).toEqual(["skipped_predicate", "ok"]);
    const same = await sandbox.runChain(task([hook("spin-again", spin, { timeout_ms: 100 }), hook("ok2", ok)], 6));
    expect(same.result.hook_results.map((r) => r.outcome)).toEqual(["timeout", "ok"]);
    expect(sandbox.stats().restarts).toBe(0);
  });

  test("an empty plan returns at once", async () => {
    const { result, events } = await sandbox.runChain(task([], 7, { untouched: true }));
    expect(result).toMatchObject({ status: "completed", hook_results: [], context: { untouched: true } });
    expect(events).toEqual([]);
  });

  test("a chain naming a bundle that is not loaded is UNKNOWN_BUNDLE; a disabled one is not", async () => {
    const ghost = bundle("ghost", CONTINUE_CODE + "// ghost");
    const err = await sandbox.runChain(task([hook("g", ghost)], 8)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VcpError);
    expect(err).toMatchObject({ code: "UNKNOWN_BUNDLE" });
    const { result } = await sandbox.runChain(task([hook("g2", ghost, { enabled: false }), hook("ok3", ok)], 9));
    expect(result.hook_results.map((r) => r.outcome)).toEqual(["skipped_disabled", "ok"]);
  });

  test("a hook without a digest is UNKNOWN_BUNDLE: the sandbox never guesses which loaded revision was meant", async () => {
    const h = hook("latest", a);
    const undigested = Object.freeze({ ...h, action: Object.freeze({ bundle: "alpha", export: "act" }) });
    await expect(sandbox.runChain(task([undigested], 10))).rejects.toMatchObject({ code: "UNKNOWN_BUNDLE", details: { hook: "latest", bundle: "alpha" } });
  });

  test("unloadBundle forgets a revision: chains naming it are UNKNOWN_BUNDLE", async () => {
    const temp = bundle("temp", CONTINUE_CODE + "// temp");
    await sandbox.loadBundle(temp);
    expect((await sandbox.runChain(task([hook("t1", temp)], 11))).result.hook_results[0]!.outcome).toBe("ok");
    await sandbox.unloadBundle(temp.digest);
    await expect(sandbox.runChain(task([hook("t2", temp)], 12))).rejects.toMatchObject({ code: "UNKNOWN_BUNDLE" });
  });
});
