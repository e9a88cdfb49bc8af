// The implicit session port (src/pipeline/implicit-sessions.ts ImplicitSessionStore) has two adapters:
// in memory (pipeline/implicit-sessions-local.ts, one replica's count) and Redis
// (store/implicit-sessions.ts, every replica's). limits.sessions_per_client means the same with
// either store only if both answer every admission alike: the same cases run against each — the
// cap, least recently used first, in-use sessions last, idle expiry, release, owners apart — the
// Redis one on a real redis-server with the test's clock passed to the script; and one long
// sequence of admissions and releases is run on both and must get the same answers call for call.
import { randomUUID } from "node:crypto";
import { describe, expect, test } from "vitest";
import { implicitMember, type ImplicitAdmitted, type ImplicitSessionStore } from "../../../src/pipeline/implicit-sessions.js";
import { createLocalImplicitSessionStore } from "../../../src/pipeline/implicit-sessions-local.js";
import { createRedisImplicitSessionStore } from "../../../src/store/index.js";
import { steppedClock, useRedisStore } from "../../support/redis-store.js";

const redis = useRedisStore("implicitport");

const adapters: Array<[string, (clock: ReturnType<typeof steppedClock>) => ImplicitSessionStore]> = [
  ["in memory", (clock) => createLocalImplicitSessionStore(clock)],
  ["redis", (clock) => createRedisImplicitSessionStore(redis(), { now: clock.now })],
];

const TTL = 60_000;
const m = (id: string) => implicitMember("amplifier", id);
const none = { evicted: [], expired: [] };

describe.each(adapters)("implicit session port: %s", (_name, make) => {
  /** A store on a fresh clock and a fresh owner (Redis keys are per owner), stepping 1 ms before each admission so no two expiries tie. */
  function harness(limit = 2) {
    const clock = steppedClock();
    const store = make(clock);
    const owner = `app-${randomUUID()}`;
    const admit = async (id: string, options: { ttlMs?: number; inUse?: string[]; owner?: string } = {}): Promise<ImplicitAdmitted> => {
      clock.step(1);
      return store.admit({ owner: options.owner ?? owner, member: m(id), ttlMs: options.ttlMs ?? TTL, limit, inUse: new Set((options.inUse ?? []).map(m)) });
    };
    return { clock, store, owner, admit };
  }

  test("past the cap a new session evicts the least recently used; using a session again moves it last", async () => {
    const { admit } = harness(2);
    expect(await admit("a")).toEqual(none);
    expect(await admit("b")).toEqual(none);
    expect(await admit("a")).toEqual(none);
    expect(await admit("c")).toEqual({ evicted: [m("b")], expired: [] });
    expect(await admit("a")).toEqual(none);
    expect(await admit("c")).toEqual(none);
    expect(await admit("b")).toEqual({ evicted: [m("a")], expired: [] });
  });

  test("a session in use is evicted last: the next idle one goes in its place; all in use, the least recently used goes anyway", async () => {
    const { admit } = harness(2);
    await admit("busy");
    await admit("idle");
    expect(await admit("new", { inUse: ["busy"] })).toEqual({ evicted: [m("idle")], expired: [] });
    expect(await admit("newer", { inUse: ["busy", "new"] })).toEqual({ evicted: [m("busy")], expired: [] });
  });

  test("idle past its TTL a session leaves by expiry, not eviction; it expires at exactly its TTL", async () => {
    const { admit, clock } = harness(1);
    await admit("s1");
    clock.step(5_000);
    expect(await admit("s1")).toEqual(none); // use resets the idle clock
    clock.step(TTL - 2);
    expect(await admit("s2")).toEqual({ evicted: [m("s1")], expired: [] }); // s1 one ms short of its TTL: live
    clock.step(TTL - 1); // s2 is exactly TTL old at the next admission
    expect(await admit("s1")).toEqual({ evicted: [], expired: [m("s2")] });
    // An expired session used again is a new one.
    clock.step(TTL);
    expect(await admit("s1")).toEqual(none);
  });

  test("sessions of different TTLs: the one that expires first goes", async () => {
    const { admit } = harness(2);
    await admit("long", { ttlMs: 10 * TTL });
    await admit("short", { ttlMs: TTL });
    expect(await admit("third", { ttlMs: TTL })).toEqual({ evicted: [m("short")], expired: [] });
  });

  test("owners are counted apart, and a released session no longer counts", async () => {
    const { admit, store, owner } = harness(1);
    const other = `other-${randomUUID()}`;
    await admit("s1");
    expect(await admit("s1", { owner: other })).toEqual(none);
    await store.release(owner, m("s1"));
    expect(await admit("s2")).toEqual(none);
    expect(await admit("s3")).toEqual({ evicted: [m("s2")], expired: [] });
    expect(await admit("s2", { owner: other })).toEqual({ evicted: [m("s1")], expired: [] });
  });
});

test("one sequence of admissions, uses and releases gets the same answers from both adapters", async () => {
  let seed = 7;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  type Call = { step: number; owner: number; id: string; ttlMs: number; inUse: string[]; release: boolean };
  const calls: Call[] = [];
  for (let i = 0; i < 400; i++) {
    const ids = Array.from({ length: 3 }, () => `s${Math.floor(random() * 8)}`);
    calls.push({
      step: 1 + Math.floor(random() * (random() < 0.9 ? 5_000 : 40_000)),
      owner: Math.floor(random() * 2),
      id: ids[0]!,
      ttlMs: random() < 0.8 ? TTL : 3 * TTL,
      inUse: random() < 0.3 ? ids.slice(1) : [],
      release: random() < 0.1,
    });
  }
  const answers: Array<Array<ImplicitAdmitted | "released">> = [];
  for (const [, make] of adapters) {
    const clock = steppedClock();
    const store = make(clock);
    const owners = [`p-${randomUUID()}`, `q-${randomUUID()}`];
    const out: Array<ImplicitAdmitted | "released"> = [];
    for (const call of calls) {
      clock.step(call.step);
      const owner = owners[call.owner]!;
      if (call.release) {
        await store.release(owner, m(call.id));
        out.push("released");
      } else {
        const got = await store.admit({ owner, member: m(call.id), ttlMs: call.ttlMs, limit: 4, inUse: new Set(call.inUse.map(m)) });
        out.push({ evicted: [...got.evicted], expired: [...got.expired].sort() });
      }
    }
    answers.push(out);
  }
  const admitted = answers[0]!.filter((a): a is ImplicitAdmitted => a !== "released");
  expect(admitted.filter((a) => a.evicted.length > 0).length).toBeGreaterThan(20);
  expect(admitted.filter((a) => a.expired.length > 0).length).toBeGreaterThan(5);
  expect(answers[1]).toEqual(answers[0]);
}, 60_000);
