// Whether Redis answers this replica (src/store/health.ts), from the commands' outcomes: a partition
// that keeps the socket open still shows, an error reply does not count as unreachability, and one
// answer clears it.
import { describe, expect, test } from "vitest";
import { Registry } from "prom-client";
import { createStoreHealth } from "../../../src/store/health.js";

function clock() {
  let t = 1000;
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

describe("store health", () => {
  test("unreachable once Redis has not answered for the threshold, counted from the failed command's send", () => {
    const c = clock();
    const health = createStoreHealth({ unreachableAfterMs: 5000, now: c.now });
    health.answered();
    c.advance(4000);
    // Sent at 3000, timed out at 5000: the trouble starts at its send.
    health.failed("timeout", 3000);
    c.advance(2999);
    expect(health.unreachable()).toBe(false);
    expect(health.status().unreachable_ms).toBe(4999);
    c.advance(1);
    expect(health.unreachable()).toBe(true);
    health.answered();
    expect(health.unreachable()).toBe(false);
    expect(health.status()).toMatchObject({ unreachable_ms: 0 });
  });

  test("an error reply is Redis answering: counted, not unreachable; a lost connection is trouble from then", () => {
    const c = clock();
    const health = createStoreHealth({ unreachableAfterMs: 1000, now: c.now });
    health.answered();
    health.failed("reply", c.now());
    c.advance(5000);
    expect(health.unreachable()).toBe(false);
    health.lost();
    c.advance(1000);
    expect(health.unreachable()).toBe(true);
  });

  test("0 never makes a replica unreachable; before the first answer it is in trouble", () => {
    const c = clock();
    const off = createStoreHealth({ unreachableAfterMs: 0, now: c.now });
    const fresh = createStoreHealth({ unreachableAfterMs: 1000, now: c.now });
    c.advance(60_000);
    expect(off.unreachable()).toBe(false);
    expect(fresh.unreachable()).toBe(true);
  });

  test("metrics: the unreachable gauge", async () => {
    const c = clock();
    const health = createStoreHealth({ unreachableAfterMs: 1000, now: c.now });
    const registry = new Registry();
    health.registerMetrics(registry);
    health.answered();
    health.failed("timeout", c.now());
    health.failed("timeout", c.now());
    c.advance(1000);
    const text = await registry.metrics();
    expect(text).toMatch(/^vcp_store_unreachable 1$/m);
  });
});
