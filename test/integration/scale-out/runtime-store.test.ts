// The library with `store: { kind: "redis" }` against a real redis-server (in process, node:vm test
// backend): an install whose publication fails changes nothing; a runtime started while Redis is down
// starts, serves what it has, and connects and reconciles once Redis is up; `kind: local` reports local.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { createRuntime, type BundleSource, type Runtime } from "../../../src/index.js";
import { createVmBackend } from "../../support/vm-backend.js";
import { useRedisServer } from "../../support/redis-server.js";
import { waitFor } from "../../support/replicas.js";

const source = (version: string): BundleSource => ({
  manifest: { bundle: "lib-marker", version, trust: "deployment", hooks: [{ name: "lib_mark", type: "pre_inject", action: "mark", priority: 50, timeout_ms: 1000 }] },
  code: `var __vcp_bundle = { mark: function () { return { status: "continue", annotations: { v: ${JSON.stringify(version)} } }; } };`,
});

describe("runtime with a Redis store", () => {
  const redis = useRedisServer<Runtime>();
  const { runtimes, dirs } = redis;
  const start = async (prefix: string, extra: Record<string, unknown> = {}, reconcileMs = 300) => {
    const dataDir = mkdtempSync(join(tmpdir(), "vcp-rt-store-"));
    dirs.push(dataDir);
    const rt = await createRuntime({
      backend: createVmBackend(), dataDir, audit: false, requireSignatures: false,
      store: { kind: "redis", url: redis.url, prefix, heartbeatMs: 200, reconcileMs, commandTimeoutMs: 1000, connectTimeoutMs: 2000, maxBackoffMs: 300 },
      ...extra,
    });
    runtimes.push(rt);
    return rt;
  };

  test("kind local (the default) reports a local store", async () => {
    const rt = await createRuntime({ backend: createVmBackend(), audit: false });
    try {
      expect(rt.status().store).toEqual({ kind: "local" });
    } finally {
      await rt.close();
    }
  });

  test("an install whose publication fails is undone: the previous revision keeps running", async () => {
    const rt = await start("lib-a");
    const v1 = await rt.bundles.install(source("1.0.0"));
    await redis.stop();
    try {
      await waitFor("the runtime to notice", () => rt.status().store.kind === "redis" && !(rt.status().store as any).connection.connected);
      const err = await rt.bundles.install(source("1.1.0")).then(() => undefined, (e: unknown) => e as any);
      expect(err).toMatchObject({ code: "STORE_UNAVAILABLE", details: { operation: expect.stringContaining("publishing bundle 'lib-marker'"), reason: "unreachable" } });
      expect(rt.bundles.get("lib-marker")).toMatchObject({ version: "1.0.0", digest: v1.digest });
      expect(rt.bundles.get("lib-marker")!.errors).toEqual([expect.objectContaining({ code: "STORE_UNAVAILABLE" })]);
      // A chain in a session needs the shared session store (is the session open, which session hooks
      // does it have?): refused while Redis is down, never run without them (redis-sessions).
      await expect(fireInSession()).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
      // A removal is refused the same way and the bundle stays.
      await expect(rt.bundles.remove("lib-marker")).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
      expect((await rt.hooks.chain("pre_inject")).map((h) => h.name)).toEqual(["lib_mark"]);
    } finally {
      await redis.start();
    }
    // The previous revision kept running: the chain, once the store answers, is v1's.
    const chain = await waitFor("the chain once Redis is back", () => fireInSession().catch(() => undefined));
    expect(chain.hook_results.map((h) => h.annotations)).toEqual([{ v: "1.0.0" }]);

    function fireInSession() {
      return rt.fire("pre_inject", { session: "s", context: {}, constitution: { id: "c", version: "1", rules: [] }, event: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "" } } as never);
    }
  }, 60_000);

  test("started while Redis is down: starts, then connects and takes the shared revisions", async () => {
    const writer = await start("lib-b");
    await writer.bundles.install(source("2.0.0"));
    await redis.stop();
    let late: Runtime;
    try {
      late = await start("lib-b");
      expect((late.status().store as any).connection.connected).toBe(false);
      expect(late.bundles.get("lib-marker")).toBeUndefined();
    } finally {
      await redis.start();
    }
    await waitFor("the late runtime to take 2.0.0", () => late.bundles.get("lib-marker")?.version === "2.0.0", 30_000);
    expect((late.status().store as any).connection.connected).toBe(true);
  }, 60_000);

  test("Redis that lost its data: a change reusing an old seq number still reaches every replica; the replicas re-share what they run", async () => {
    // Only notifications and reconnects trigger a reconcile here (no timer), so the order below is exact.
    const rt1 = await start("lib-c", {}, 600_000);
    const rt2 = await start("lib-c", {}, 600_000);
    const v1 = await rt1.bundles.install(source("1.0.0"));
    await waitFor("rt2 to run 1.0.0", () => rt2.bundles.get("lib-marker")?.digest === v1.digest);
    expect(await redis.command("FLUSHALL")).toBe("OK");
    // The first change after the loss is shared too (above the revision its replica had seen, under a new generation).
    const v2 = await rt1.bundles.install(source("2.0.0"));
    await waitFor("rt2 to run 2.0.0", () => rt2.bundles.get("lib-marker")?.digest === v2.digest, 30_000);
    // Lost again, and Redis restarted empty: the replicas reconnect and share what they run; nothing is removed.
    await redis.command("FLUSHALL");
    await redis.restart({ kill: true });
    const entry = await waitFor("the bundle to be shared again", async () => {
      const text = await redis.command("HGET", "lib-c:bundle:active", "lib-marker").catch(() => "");
      return text === "" ? undefined : JSON.parse(text);
    }, 30_000);
    expect(entry).toMatchObject({ bundle: "lib-marker", digest: v2.digest, version: "2.0.0" });
    expect(rt1.bundles.get("lib-marker")?.digest).toBe(v2.digest);
    expect(rt2.bundles.get("lib-marker")?.digest).toBe(v2.digest);
  }, 90_000);
});
