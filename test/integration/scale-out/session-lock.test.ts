// The cross-replica session lock and the periodic tick claim against a real redis-server, in one
// process standing in for several replicas: a holder whose lock expired (a stalled replica) cannot
// write after another took the session (fencing); two schedulers that both believe they hold a
// session, with clocks minutes apart, still fire each tick number once (claims by Redis TIME).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { connectStore, type StoreConnection } from "../../../src/store/index.js";
import { acquire, commit, release } from "../../../src/store/session-lock.js";
import { sessionRedisOf, type SessionRedis } from "../../../src/store/session-redis.js";
import { sessionKeys } from "../../../src/store/sessions.js";
import { createSharedPeriodic } from "../../../src/store/shared-periodic.js";
import { silentLogger, type Clock } from "../../../src/observe/events.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import { startRedisServer, type RedisServerHandle } from "../../support/redis-server.js";

let server: RedisServerHandle;
let connection: StoreConnection;
let redis: SessionRedis;

beforeAll(async () => {
  server = await startRedisServer();
  connection = await connectStore({ url: server.url, prefix: "locktest", connectTimeoutMs: 5000, commandTimeoutMs: 2000, maxBackoffMs: 1000, logger: silentLogger });
  redis = sessionRedisOf(connection, "r1", 2000);
}, 60_000);
afterAll(async () => {
  await connection?.close();
  await server?.close();
}, 60_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("session lock", () => {
  test("a holder whose lock expired cannot write: the later holder's record stands (SESSION_LOCK_LOST, nothing written)", async () => {
    const keys = sessionKeys(redis, "fenced");
    await connection.redis.hset(keys.record, "rec", JSON.stringify({ v: "initial" }), "fence", 0);
    const first = await acquire(redis, keys, { ttlMs: 150, waitMs: 5000 }, "fenced", () => undefined);
    expect(first.record).toBe(JSON.stringify({ v: "initial" }));
    // The first holder stalls: no renewals, its lock runs out.
    first.lock.stopRenewing();
    await sleep(400);
    const second = await acquire(redis, keys, { ttlMs: 5000, waitMs: 5000 }, "fenced", () => undefined);
    expect(second.lock.fence).toBeGreaterThan(first.lock.fence);
    await commit(redis, keys, second.lock, JSON.stringify({ v: "second" }), "fenced");
    await expect(commit(redis, keys, first.lock, JSON.stringify({ v: "stale" }), "fenced")).rejects.toMatchObject({ code: "SESSION_LOCK_LOST" });
    expect(await connection.redis.hget(keys.record, "rec")).toBe(JSON.stringify({ v: "second" }));
  }, 30_000);

  test("a write that reaches Redis after the writer stopped waiting (its command deadline) is refused: a 503 means not written", async () => {
    const keys = sessionKeys(redis, "late");
    await connection.redis.hset(keys.record, "rec", JSON.stringify({ v: "before" }), "fence", 0);
    const held = await acquire(redis, keys, { ttlMs: 5000, waitMs: 5000 }, "late", () => undefined);
    // Stand-in for a script queued behind a stalled Redis: its "not after" has passed when it runs.
    const impatient = { ...redis, commandTimeoutMs: -1000 };
    await expect(commit(impatient, keys, held.lock, JSON.stringify({ v: "late" }), "late")).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    expect(await connection.redis.hget(keys.record, "rec")).toBe(JSON.stringify({ v: "before" }));
    await release(redis, keys.lock, held.lock);
  }, 30_000);

  test("an acquire that reaches Redis after its sender stopped waiting takes nothing (no lock held by nobody)", async () => {
    const keys = sessionKeys(redis, "late-acquire");
    await connection.redis.hset(keys.record, "rec", JSON.stringify({ v: "free" }), "fence", 0);
    // Stand-in for an acquire queued behind a stalled Redis: its "not after" has passed when it runs.
    const impatient = { ...redis, commandTimeoutMs: -1000 };
    await expect(acquire(impatient, keys, { ttlMs: 5000, waitMs: 200 }, "late-acquire", () => undefined)).rejects.toMatchObject({ code: "SESSION_BUSY" });
    expect(await connection.redis.exists(keys.lock)).toBe(0);
    expect(await connection.redis.get(keys.fence)).toBeNull();
    const onTime = await acquire(redis, keys, { ttlMs: 5000, waitMs: 200 }, "late-acquire", () => undefined);
    expect(onTime.record).toBe(JSON.stringify({ v: "free" }));
    await release(redis, keys.lock, onTime.lock);
  }, 30_000);

  test("while one holder has the session another waits, then gets it; a release never frees someone else's lock", async () => {
    const keys = sessionKeys(redis, "waited");
    await connection.redis.hset(keys.record, "rec", "{}", "fence", 0);
    const first = await acquire(redis, keys, { ttlMs: 5000, waitMs: 5000 }, "waited", () => undefined);
    let secondHeld = false;
    const second = acquire(redis, keys, { ttlMs: 5000, waitMs: 10_000 }, "waited", () => undefined).then((held) => {
      secondHeld = true;
      return held;
    });
    await sleep(300);
    expect(secondHeld).toBe(false);
    await release(redis, keys.lock, first.lock);
    const got = await second;
    // The first holder's (late, repeated) release must not free the second's lock.
    await release(redis, keys.lock, first.lock);
    expect(await connection.redis.get(keys.lock)).toBe(got.lock.token);
    await release(redis, keys.lock, got.lock);
  }, 30_000);

  test("waiting longer than waitMs is SESSION_BUSY (503), and the holder keeps the session", async () => {
    const keys = sessionKeys(redis, "busy");
    await connection.redis.hset(keys.record, "rec", "{}", "fence", 0);
    const first = await acquire(redis, keys, { ttlMs: 5000, waitMs: 5000 }, "busy", () => undefined);
    await expect(acquire(redis, keys, { ttlMs: 5000, waitMs: 200 }, "busy", () => undefined)).rejects.toMatchObject({ code: "SESSION_BUSY" });
    expect(await connection.redis.get(keys.lock)).toBe(first.lock.token);
    await release(redis, keys.lock, first.lock);
  }, 30_000);
});

describe("periodic tick claims", () => {
  test("two schedulers on one session, with clocks ten minutes apart, fire each tick number once", async () => {
    const key = "skewed";
    const openSessions = "locktest:test-open-sessions";
    await connection.redis.hset(sessionKeys(redis, key).record, "rec", "{}", "fence", 0);
    // An open session no scheduler has seen: the start adds it to the due set.
    await connection.redis.sadd(openSessions, key);
    const hook = { name: "t", scope: "deployment", type: "periodic", enabled: true, metadata: { interval_ms: 1000 } } as unknown as ResolvedHook;
    const fired: number[] = [];
    const skewed = (offsetMs: number): Clock => ({ now: () => performance.now() + offsetMs, wallNow: () => Date.now() + offsetMs }) as Clock;
    const scheduler = (offsetMs: number) =>
      createSharedPeriodic({
        // The same replica id on both: each believes the session is its own (a stalled holder's view).
        redis,
        clock: skewed(offsetMs),
        logger: silentLogger,
        scanMs: 20,
        openSessionsKey: openSessions,
        loadSession: async () => true,
        periodicHooks: () => [hook],
        runTick: async (_key, tick) => {
          await tick({ id: key, key, owner: null, context: {}, constitution: { id: "c", rules: [] }, state: null, lastKnownGood: { id: "c", rules: [] }, metadata: {}, createdAt: "", updatedAt: "" } as never);
        },
        fire: async (_type, input) => {
          fired.push((input.event as { tick_count: number }).tick_count);
          return { status: "completed", hook_results: [], context: input.context, constitution: input.constitution } as never;
        },
        touch: () => undefined,
      });
    const a = scheduler(-300_000);
    const b = scheduler(+300_000);
    a.start();
    b.start();
    const started = Date.now();
    while (fired.length < 4 && Date.now() - started < 60_000) await sleep(50);
    a.stop();
    b.stop();
    expect(fired.length).toBeGreaterThanOrEqual(4);
    expect(new Set(fired).size).toBe(fired.length);
    expect([...fired].sort((x, y) => x - y)).toEqual(fired);
  }, 90_000);
});
