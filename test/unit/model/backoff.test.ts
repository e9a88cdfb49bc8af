import { describe, expect, test } from "vitest";
import { DeadlineBackoff } from "../../../src/model/backoff.js";

describe("DeadlineBackoff: retries within a deadline", () => {
  test("waits 0.5 s, 1 s, 2 s, 4 s, then 5 s at most, and gives up when a wait would end past the deadline", () => {
    let now = 0;
    const backoff = new DeadlineBackoff(20_000, () => now);
    const waits: Array<number | undefined> = [];
    for (let i = 0; i < 6; i++) {
      const wait = backoff.failed();
      waits.push(wait);
      now += wait ?? 0;
    }
    // 0.5 + 1 + 2 + 4 + 5 = 12.5 s spent; 7.5 s left, so one more 5 s wait fits, then 2.5 s left: none.
    expect(waits).toEqual([500, 1000, 2000, 4000, 5000, 5000]);
    expect(backoff.remainingMs()).toBe(2500);
    expect(backoff.failed()).toBeUndefined();
    expect(backoff.failedAttempts).toBe(7);
  });

  test("the time left never goes below zero", () => {
    let now = 0;
    const backoff = new DeadlineBackoff(1000, () => now);
    now = 5000;
    expect(backoff.remainingMs()).toBe(0);
    expect(backoff.failed()).toBeUndefined();
  });
});
