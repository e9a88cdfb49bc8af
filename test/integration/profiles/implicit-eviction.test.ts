// Implicit profile sessions never refuse an event for their count (issue 24, PROFILES §8.3), with both
// store kinds. Local: a real runtime (the in-process vm backend) with limits.sessions_per_client 3 —
// every event past the cap is answered by its chain, and vcp_implicit_sessions_evicted_total counts
// the evictions in the runtime's own /metrics text. Redis: two profile firers standing in for two
// replicas on one real redis-server — the client's shared set never holds more than the cap, the
// evicted session is the least recently used one, and the count is scoped `all_replicas`.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, type Runtime } from "../../../src/index.js";
import { createMetrics, type Metrics } from "../../../src/observe/metrics.js";
import { silentLogger } from "../../../src/observe/events.js";
import { registerProfile } from "../../../src/profiles/index.js";
import { resolveJsonBounds } from "../../../src/model/json-bounds.js";
import { createProfileFirer } from "../../../src/fire/profile.js";
import { resolveEnabledProfiles } from "../../../src/profiles/enabled.js";
import { createRegistry } from "../../../src/registry/index.js";
import { connectStore, createRedisImplicitSessionStore, type StoreConnection } from "../../../src/store/index.js";
import { profileBundle } from "../../support/bundles.js";
import echoProfile from "../../support/echo-profile.js";
import { startRedisServer, type RedisServerHandle } from "../../support/redis-server.js";
import { createVmBackend } from "../../support/vm-backend.js";

registerProfile(echoProfile);

const CAP = 3;
const client = { id: "app", role: "client" } as const;

function evictedIn(text: string, scope: "replica" | "all_replicas"): number {
  const line = text.split("\n").find((l) => l.startsWith(`vcp_implicit_sessions_evicted_total{scope="${scope}"}`));
  return line === undefined ? 0 : Number(line.split(" ").at(-1));
}

describe("local store: a real runtime", () => {
  let runtime: Runtime;
  beforeAll(async () => {
    runtime = await createRuntime({ backend: createVmBackend(), maxSessionsPerOwner: CAP });
    await runtime.bundles.install(profileBundle("guard", "echo", [{ name: "no_rm", matcher: "^rm$" }], { no_rm: "() => ({ decision: 'block', reason: 'no rm' })" }, {}, "Check"));
  }, 60_000);
  afterAll(async () => {
    await runtime?.close();
  });

  test("every event past limits.sessions_per_client is judged by its chain; the evictions are metered", async () => {
    for (let i = 0; i < CAP * 4; i++) {
      const out = await runtime.fireProfile("echo", "Check", { input: { session_id: `s-${i}`, tool: "rm" }, principal: client });
      expect(out).toMatchObject({ exit_code: 2, native: { decision: "block", reason: "no rm" } });
      expect(out.result.hook_results.map((h) => h.outcome)).toEqual(["ok"]);
    }
    expect(evictedIn(await runtime.metrics(), "replica")).toBe(CAP * 3);
  }, 60_000);
});

describe("redis store: two replicas, one shared count", () => {
  let redis: RedisServerHandle;
  let connection: StoreConnection;
  beforeAll(async () => {
    redis = await startRedisServer();
    connection = await connectStore({ url: redis.url, prefix: "evicttest", connectTimeoutMs: 5000, commandTimeoutMs: 2000, maxBackoffMs: 1000, logger: silentLogger });
  }, 60_000);
  afterAll(async () => {
    await connection?.close();
    await redis?.close();
  }, 60_000);

  /** One replica's profile firer on the shared store, with its own clock (it decides when a session in use is extended). */
  function replica(principal: { id: string; role: "client" } = client) {
    let now = 0;
    const metrics: Metrics = createMetrics(() => ({}) as never);
    const firer = createProfileFirer({
      enabled: resolveEnabledProfiles({ echo: {} }),
      registry: createRegistry({ clock: { now: () => now, wallNow: () => now }, emit: () => undefined }),
      backend: { runChain: () => Promise.reject(new Error("an empty plan dispatches nothing")) } as never,
      audit: () => undefined,
      metrics,
      clock: { now: () => now, wallNow: () => now },
      inputBounds: resolveJsonBounds({}),
      maxSessionsPerOwner: CAP,
      assertOpen: () => undefined,
      pin: () => undefined,
      unpin: () => undefined,
      implicitSessions: createRedisImplicitSessionStore(connection),
      logger: silentLogger,
    });
    return {
      fire: (session: string) => firer.fire("echo", "Notice", { input: { session_id: session }, principal }),
      advance: (ms: number) => (now += ms),
      evicted: async () => (await metrics.registry.getSingleMetric("vcp_implicit_sessions_evicted_total")!.get()).values.find((v) => v.labels["scope"] === "all_replicas")?.value ?? 0,
    };
  }

  const members = async (owner: string = client.id) => (await connection.redis.zrange(connection.keys.custom("implicit", owner), "0", "-1")).map((m) => (JSON.parse(m) as string[])[1]).sort();

  test("past the cap on all replicas together, the least recently used session is evicted and no event is refused", async () => {
    const a = replica();
    const b = replica();
    await expect(a.fire("s1")).resolves.toMatchObject({ exit_code: 0 });
    await expect(b.fire("s2")).resolves.toMatchObject({ exit_code: 0 });
    await expect(a.fire("s3")).resolves.toMatchObject({ exit_code: 0 });
    expect(await members()).toEqual(["s1", "s2", "s3"]);
    // s1 is used again on A past the refresh period (≤ 5 s): it is now the most recently used.
    a.advance(6_000);
    await a.fire("s1");
    // A fourth session on B: s2 (the least recently used) goes, on every replica's count.
    await expect(b.fire("s4")).resolves.toMatchObject({ exit_code: 0 });
    expect(await members()).toEqual(["s1", "s3", "s4"]);
    expect(await b.evicted()).toBe(1);
    expect(await a.evicted()).toBe(0);
    // Many more: every one answered, the shared set stays at the cap.
    for (let i = 0; i < 20; i++) await expect((i % 2 === 0 ? a : b).fire(`m-${i}`)).resolves.toMatchObject({ exit_code: 0 });
    expect(await members()).toHaveLength(CAP);
    expect((await a.evicted()) + (await b.evicted())).toBe(21);
  }, 60_000);

  test("a session the shared count evicted is counted again at its next use, not a refresh period later", async () => {
    const carol = { id: "carol", role: "client" } as const;
    const a = replica(carol);
    const b = replica(carol);
    // Redis orders sessions by expiry to the millisecond (its clock): a few ms apart, each is later than the last.
    const apart = () => new Promise((resolve) => setTimeout(resolve, 5));
    await b.fire("b1");
    await apart();
    await a.fire("a1");
    await apart();
    await b.fire("b2");
    await apart();
    // A fourth session on B: b1 (the least recently used) leaves the shared count; B still has room for it.
    await b.fire("b3");
    expect(await members("carol")).toEqual(["a1", "b2", "b3"]);
    // b1 used again on B at once: it is a session again for the deployment, and a1 (now the least recently used) goes.
    await b.fire("b1");
    expect(await members("carol")).toEqual(["b1", "b2", "b3"]);
    expect(await b.evicted()).toBe(2);
  }, 60_000);
});
