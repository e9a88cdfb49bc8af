// Session hooks by reference (issue 25, item 2): a session hook names (bundle, hook) and runs the
// bundle's ACTIVE revision. Updating the bundle keeps it working — chains and periodic ticks — and a
// revision that drops the hook deregisters it (hook.deregistered + an audit record naming the
// revision) without touching the session's other hooks. Run with both stores: `store: local` and a
// real redis-server. Before this, every chain of the session failed after the update (the hook still
// named the retired revision: 404 UNKNOWN_BUNDLE from the sandbox) until the session was closed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, type BundleSource, type PeriodicTickReport, type Runtime, type RuntimeOptions } from "../../../src/index.js";
import { createVmBackend } from "../../support/vm-backend.js";
import { startRedisServer, type RedisServerHandle } from "../../support/redis-server.js";
import { waitFor } from "../../support/replicas.js";

const BUNDLE = "upd";
const constitution = { id: "c", version: "1", rules: [{ id: "r1", text: "Be kind." }] };
const event = { injection_target: "system", injection_format: "system_prompt", raw_constitution: "" };

/** v1 and v2 offer three session hooks; v3 drops `s_drop`, v4 `s_tick` too. Each hook says which version ran it. */
function revision(version: string, { withDrop = true, withTick = true } = {}): BundleSource {
  const hooks = [
    { name: "s_keep", type: "pre_inject", action: "keep", priority: 60, timeout_ms: 1000, scope: "session" },
    ...(withDrop ? [{ name: "s_drop", type: "pre_inject", action: "drop", priority: 40, timeout_ms: 1000, scope: "session" }] : []),
    ...(withTick ? [{ name: "s_tick", type: "periodic", action: "tick", priority: 50, timeout_ms: 1000, scope: "session", metadata: { interval_ms: 1000 } }] : []),
  ];
  const v = JSON.stringify(version);
  return {
    manifest: { bundle: BUNDLE, version, trust: "deployment", hooks } as BundleSource["manifest"],
    code: `var __vcp_bundle = {
      keep: function () { return { status: "continue", annotations: { keep: ${v} } }; },
      drop: function () { return { status: "continue", annotations: { drop: ${v} } }; },
      tick: function () { return { status: "continue", annotations: { tick: ${v} } }; }
    };`,
  };
}

const stores = ["local", "redis"] as const;

describe.each(stores)("session hooks across a bundle update (store: %s)", (store) => {
  let redis: RedisServerHandle | undefined;
  let rt: Runtime;
  /** With Redis: a second replica on the same store, which takes each revision from the shared store. */
  let peer: Runtime | undefined;
  const dataDirs: string[] = [];
  const ticks: PeriodicTickReport[] = [];
  /** Warnings of the replicas (a deregistered session hook must not be reported as pending anywhere). */
  const warnings: Array<{ replica: string; msg: string; fields: Record<string, unknown> }> = [];
  const loggerFor = (replica: string) => {
    const warn = (fields: object, msg = "") => void warnings.push({ replica, msg, fields: fields as Record<string, unknown> });
    return { isLevelEnabled: () => false, debug: () => {}, info: () => {}, warn, error: warn };
  };

  async function start(replica: string): Promise<Runtime> {
    const dataDir = mkdtempSync(join(tmpdir(), "vcp-session-update-"));
    dataDirs.push(dataDir);
    const options: RuntimeOptions = {
      backend: createVmBackend(), dataDir, requireSignatures: false, registrationsPerMinute: 10_000,
      sessionHookAllowlist: [`${BUNDLE}/s_keep`, `${BUNDLE}/s_drop`, `${BUNDLE}/s_tick`],
      onPeriodicTick: (report) => void ticks.push(report), logger: loggerFor(replica),
    };
    if (redis !== undefined) {
      options.store = { kind: "redis", url: redis.url, prefix: "upd", heartbeatMs: 200, reconcileMs: 200, commandTimeoutMs: 2000, connectTimeoutMs: 2000, maxBackoffMs: 300 };
      options.sharedSessions = { periodicScanMs: 100 };
    }
    return createRuntime(options);
  }

  beforeAll(async () => {
    if (store === "redis") redis = await startRedisServer();
    rt = await start("rt");
    if (store === "redis") peer = await start("peer");
  }, 60_000);
  afterAll(async () => {
    await peer?.close().catch(() => undefined);
    await rt?.close().catch(() => undefined);
    await redis?.close();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  /** Install on `rt`; with Redis, wait until the peer runs the same revision too. */
  async function install(source: BundleSource) {
    const info = await rt.bundles.install(source);
    if (peer !== undefined) await waitFor(`the peer to run ${info.version}`, () => peer!.bundles.get(BUNDLE)?.digest === info.digest, 15_000);
    return info;
  }
  /** What each replica's chain in session s1 runs (the same on both). */
  async function fireEverywhere() {
    const here = annotationsOf(await fire());
    if (peer !== undefined) expect(annotationsOf(await fireOn(peer)), "the peer's chain").toEqual(here);
    return here;
  }

  const fireOn = (runtime: Runtime) => runtime.fire("pre_inject", { session: "s1", context: {}, constitution, event } as never);
  const fire = () => fireOn(rt);
  const annotationsOf = (result: Awaited<ReturnType<typeof fire>>) => result.hook_results.map((h) => ({ hook: h.hook, outcome: h.outcome, annotations: h.annotations }));
  const ticksAfter = (n: number) => waitFor(`a periodic tick after #${n}`, () => (ticks.length > n ? ticks[ticks.length - 1] : undefined), 15_000);

  test("an update keeps the session's hooks running on the new revision; a dropped hook is deregistered", async () => {
    await install(revision("1.0.0"));
    await rt.sessions.open({ session_id: "s1", context: {}, constitution });
    for (const hook of ["s_keep", "s_drop", "s_tick"]) await rt.sessions.registerHook("s1", { bundle: BUNDLE, hook });
    expect(await fireEverywhere()).toEqual([
      { hook: "s_keep", outcome: "ok", annotations: { keep: "1.0.0" } },
      { hook: "s_drop", outcome: "ok", annotations: { drop: "1.0.0" } },
    ]);
    const firstTick = await ticksAfter(0);
    expect(firstTick).toMatchObject({ hook: "s_tick" });

    // v2: the same hooks, another revision. Every chain of the session runs v2.
    await install(revision("2.0.0"));
    expect(await fireEverywhere()).toEqual([
      { hook: "s_keep", outcome: "ok", annotations: { keep: "2.0.0" } },
      { hook: "s_drop", outcome: "ok", annotations: { drop: "2.0.0" } },
    ]);
    // The periodic session hook keeps ticking, on v2.
    const seen = ticks.length;
    const tick = await waitFor("a v2 tick", () => ticks.slice(seen).find((t) => t.result?.hook_results[0]?.annotations?.["tick"] === "2.0.0"), 15_000);
    expect(tick.error).toBeUndefined();
    expect(ticks.slice(seen).filter((t) => t.error !== undefined || t.result?.hook_results.some((h) => h.outcome !== "ok"))).toEqual([]);

    // v3 drops s_drop: it is deregistered (event + audit naming the revision); s_keep and s_tick stay.
    const dropped: Array<Record<string, unknown>> = [];
    const stop = rt.on("hook.deregistered", (payload) => void dropped.push(payload as Record<string, unknown>));
    const v3 = await install(revision("3.0.0", { withDrop: false }));
    stop();
    expect(dropped).toEqual([expect.objectContaining({ hook: "s_drop", scope: "session", session_id: "s1", bundle: BUNDLE, reason: expect.stringContaining("3.0.0") })]);
    expect(String(dropped[0]!["reason"])).toContain(v3.digest);
    expect(await fireEverywhere()).toEqual([{ hook: "s_keep", outcome: "ok", annotations: { keep: "3.0.0" } }]);
    expect(await rt.sessions.get("s1")).toBeDefined();
    const records = await rt.audit.query({ limit: 10_000 });
    const record = records.find((r) => r.event === "hook.deregistered" && r.hook === "s_drop");
    expect(record).toMatchObject({ scope: "session", session: "s1", bundle: BUNDLE, details: { reason: expect.stringContaining("3.0.0") } });
    const v3Tick = await waitFor("a v3 tick", () => ticks.slice(seen).find((t) => t.result?.hook_results[0]?.annotations?.["tick"] === "3.0.0"), 15_000);
    expect(v3Tick.error).toBeUndefined();

    // v4 drops the periodic session hook: its ticks stop (no failing tick), the chain keeps s_keep.
    await install(revision("4.0.0", { withDrop: false, withTick: false }));
    const afterDrop = ticks.length;
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(ticks.slice(afterDrop + 1)).toEqual([]);
    expect(ticks.filter((t) => t.error !== undefined)).toEqual([]);
    expect(await fireEverywhere()).toEqual([{ hook: "s_keep", outcome: "ok", annotations: { keep: "4.0.0" } }]);
    // A replica that meets the session only now (its registry never held s1's hooks) takes s_keep from
    // the store and reports nothing pending: s_drop and s_tick were deregistered, not delayed.
    if (store === "redis") {
      const late = await start("late");
      try {
        await waitFor("the late replica to run 4.0.0", () => late.bundles.get(BUNDLE)?.version === "4.0.0", 15_000);
        expect(annotationsOf(await fireOn(late))).toEqual([{ hook: "s_keep", outcome: "ok", annotations: { keep: "4.0.0" } }]);
        expect(annotationsOf(await fireOn(late))).toEqual([{ hook: "s_keep", outcome: "ok", annotations: { keep: "4.0.0" } }]);
      } finally {
        await late.close();
      }
    }
    const pending = warnings.filter((w) => /could not be registered on this replica yet/.test(w.msg));
    expect(pending.map((w) => `${w.replica}: ${String(w.fields["hook"])}`)).toEqual([]);
  }, 90_000);

  test("removing the bundle deregisters its session hooks with a reason; the session stays usable", async () => {
    const dropped: Array<Record<string, unknown>> = [];
    const stop = rt.on("hook.deregistered", (payload) => void dropped.push(payload as Record<string, unknown>));
    await rt.bundles.remove(BUNDLE);
    stop();
    expect(dropped.filter((d) => d["scope"] === "session").map((d) => d["hook"])).toEqual(["s_keep"]);
    expect(dropped.every((d) => String(d["reason"]).includes("removed"))).toBe(true);
    expect((await fire()).hook_results).toEqual([]);
  }, 30_000);
});
