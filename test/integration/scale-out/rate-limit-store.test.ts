// The rate limit port (src/registry/rate-limit.ts RateLimitStore) has two adapters: in memory
// (registry/rate-limit-local.ts) and Redis (store/rate-limit.ts, the GCRA step as a Lua script). The
// registry limit means the same with either store only if both answer every take alike: the same
// cases run against each — bursts, spacing, refusals that consume nothing, clock steps both ways —
// the Redis one on a real redis-server with the test's clock passed to the script, and one long
// sequence of takes at uneven times is run on both and must get the same answers call for call.
import { randomUUID } from "node:crypto";
import { describe, expect, test } from "vitest";
import { createLocalRateLimitStore, createRegistryRateLimit, gcraSpacing, type RateDecision, type RateLimitStore } from "../../../src/registry/index.js";
import { createRedisRateLimitStore } from "../../../src/store/index.js";
import { steppedClock, useRedisStore } from "../../support/redis-store.js";

const redis = useRedisStore("rateport");

type Clock = ReturnType<typeof steppedClock>;

const adapters: Array<[string, (clock: Clock) => RateLimitStore]> = [
  ["in memory", (clock) => createLocalRateLimitStore(clock)],
  // A fresh scope per store: each starts empty, as a fresh local one does.
  ["redis", (clock) => createRedisRateLimitStore(redis(), { scope: `t-${randomUUID()}`, now: clock.now })],
];

describe.each(adapters)("rate limit port: %s", (_name, make) => {
  test("a burst of the limit, then one per window/limit; retry_after counts down with the clock", async () => {
    const clock = steppedClock();
    const store = make(clock);
    const three = gcraSpacing(3);
    for (let i = 0; i < 3; i++) expect(await store.take("a", three)).toEqual({ ok: true });
    expect(await store.take("a", three)).toEqual({ ok: false, retryAfterMs: 20_000 });
    clock.step(19_999);
    expect(await store.take("a", three)).toEqual({ ok: false, retryAfterMs: 1 });
    clock.step(1);
    expect(await store.take("a", three)).toEqual({ ok: true });
    expect((await store.take("a", three)).ok).toBe(false);
    clock.step(60_000);
    for (let i = 0; i < 3; i++) expect((await store.take("a", three)).ok).toBe(true);
    expect((await store.take("a", three)).ok).toBe(false);
  });

  test("keys are independent and refused takes consume nothing", async () => {
    const clock = steppedClock();
    const store = make(clock);
    const two = gcraSpacing(2);
    await store.take("a", two);
    await store.take("a", two);
    for (let i = 0; i < 5; i++) expect((await store.take("a", two)).ok).toBe(false);
    expect(await store.take("b", two)).toEqual({ ok: true });
    clock.step(30_000);
    expect(await store.take("a", two)).toEqual({ ok: true });
  });

  test("a clock stepped back lengthens the wait by the step; stepped forward past the window, the bucket is full", async () => {
    const clock = steppedClock();
    const store = make(clock);
    const two = gcraSpacing(2);
    await store.take("a", two);
    expect(await store.take("a", two)).toEqual({ ok: true });
    clock.step(-5_000);
    expect(await store.take("a", two)).toEqual({ ok: false, retryAfterMs: 35_000 });
    clock.step(3_600_000);
    expect(await store.take("a", two)).toEqual({ ok: true });
    expect(await store.take("a", two)).toEqual({ ok: true });
    expect((await store.take("a", two)).ok).toBe(false);
  });

  test("the registry limit over the store: what counts, and what the refusal says", async () => {
    const store = make(steppedClock());
    const limit = createRegistryRateLimit(store as RateLimitStore<false>, 1);
    await limit.admit({ id: "ops", role: "operator" });
    const refused = await Promise.resolve().then(() => limit.admit({ id: "ops", role: "operator" })).catch((e: unknown) => e);
    const shared = store.scope === "all_replicas";
    expect(refused).toMatchObject({
      code: "RATE_LIMITED",
      details: { principal: "ops", limit: 1, retry_after_ms: 60_000, ...(shared ? { scope: "all_replicas" } : {}) },
      message: expect.stringContaining(shared ? "1 registry changes per minute across all replicas" : "1 registry changes per minute (spec"),
    });
    // The runtime itself and the embedding application are not counted.
    for (let i = 0; i < 5; i++) {
      await limit.admit({ id: "runtime", role: "system" });
      await limit.admit(undefined);
    }
    await limit.admit({ id: "carol", role: "client" });
  });
});

test("one sequence of takes at uneven times and limits gets the same answers from both adapters", async () => {
  // A deterministic walk: bursts, waits of a fraction of an interval, steps back and forward.
  let seed = 42;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const calls: Array<{ step: number; key: string; perMinute: number }> = [];
  for (let i = 0; i < 400; i++) {
    const r = random();
    const step = r < 0.5 ? 0 : r < 0.8 ? Math.floor(random() * 3_000) : r < 0.9 ? -Math.floor(random() * 3_000) : Math.floor(random() * 70_000);
    calls.push({ step, key: `k${Math.floor(random() * 2)}`, perMinute: [3, 7, 13][Math.floor(random() * 3)]! });
  }
  const answers: RateDecision[][] = [];
  for (const [, make] of adapters) {
    const clock = steppedClock();
    const store = make(clock);
    const out: RateDecision[] = [];
    for (const call of calls) {
      clock.step(call.step);
      // One limit per key (a key's TAT is only meaningful with its own spacing).
      out.push(await store.take(`${call.key}-${call.perMinute}`, gcraSpacing(call.perMinute)));
    }
    answers.push(out);
  }
  expect(answers[0]!.filter((a) => !a.ok).length).toBeGreaterThan(30);
  expect(answers[0]!.filter((a) => a.ok).length).toBeGreaterThan(30);
  expect(answers[1]).toEqual(answers[0]);
}, 60_000);
