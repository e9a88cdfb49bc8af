// The estimate of Redis's clock behind scripts' "not after" deadlines (src/store/redis-clock.ts): a
// lower bound, tightened by each answer, never later than Redis's time; restarted when an answer
// proves Redis's clock went back.
import { describe, expect, test } from "vitest";
import { createRedisClock } from "../../../src/store/redis-clock.js";

describe("Redis clock estimate", () => {
  test("unknown before any answer", () => {
    expect(createRedisClock().lowerBound(0)).toBeUndefined();
  });

  test("a lower bound: Redis's time at the answer, plus the local time since", () => {
    const clock = createRedisClock();
    // Sent at local 1000, answered at 1010; Redis read TIME = 50_000 somewhere in between.
    clock.observe(50_000, 1000, 1010);
    expect(clock.lowerBound(1010)).toBe(50_000);
    expect(clock.lowerBound(2010)).toBe(51_000);
  });

  test("the tightest bound wins; a looser later answer does not loosen it", () => {
    const clock = createRedisClock();
    clock.observe(50_000, 1000, 1100); // slow answer: Redis ≥ 50_000 + (L − 1100)
    clock.observe(50_095, 1090, 1100); // fast one: Redis ≥ 50_095 + (L − 1100)
    expect(clock.lowerBound(1100)).toBe(50_095);
    clock.observe(50_150, 1100, 1200); // slow again: its bound (50_150 at 1200) is below 50_195
    expect(clock.lowerBound(1200)).toBe(50_195);
  });

  test("an answer proving Redis's clock went back (its upper bound below the estimate) restarts the estimate", () => {
    const clock = createRedisClock();
    clock.observe(50_000, 1000, 1000);
    // At local 2000 Redis says 10_000: at most 10_000 + 0, far below the 51_000 estimated.
    clock.observe(10_000, 2000, 2000);
    expect(clock.lowerBound(2000)).toBe(10_000);
  });
});
