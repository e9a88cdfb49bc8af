// A rate limit holds across replicas (issue 18): with limits.registrations_per_minute 4, four bundle
// changes by one operator spread over A, B and C are allowed and the fifth is refused on whichever
// replica receives it (429 RATE_LIMITED with Retry-After, "across all replicas"); another principal
// has its own allowance; with Redis down the check answers 503 STORE_UNAVAILABLE naming it.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReplicas, waitFor, type ReplicaSet } from "../../support/replicas.js";
import { markerBundle, status } from "./fixtures.js";

describe("global registry rate limit", () => {
  let set: ReplicaSet;
  const second = { token: "vcp_op_second_operator_token_0001", id: "ops-second" };

  beforeAll(async () => {
    set = await startReplicas({
      count: 3,
      config: { limits: { registrations_per_minute: 4 } },
      extraAuth: [{ id: second.id, role: "operator", token: second.token }],
    });
  }, 300_000);

  afterAll(async () => {
    await set?.close();
  }, 120_000);

  test("four changes across A, B and C pass; the fifth is 429 on any replica; another principal is not affected", async () => {
    const [a, b, c] = ["A", "B", "C"].map((n) => set.byName(n));
    const order = [a!, b!, c!, a!];
    for (const [i, replica] of order.entries()) {
      const put = await replica.request("PUT", "/v1/bundles/marker", { token: set.tokens.operator, body: markerBundle(set, `1.0.${i}`) });
      expect(put.status, `${replica.name}: ${put.text}`).toBe(201);
    }
    for (const replica of [b!, c!]) {
      const refused = await replica.request("PUT", "/v1/bundles/marker", { token: set.tokens.operator, body: markerBundle(set, "1.1.0") });
      expect(refused.status, refused.text).toBe(429);
      expect(refused.body.error).toMatchObject({ code: "RATE_LIMITED", details: { principal: "ops", limit: 4, scope: "all_replicas" } });
      expect(refused.body.error.message).toContain("across all replicas");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    }
    // Nothing changed by the refusals: every replica still runs 1.0.3.
    for (const replica of [a!, b!, c!]) {
      await waitFor(`${replica.name} to run 1.0.3`, async () => (await status(set, replica)).bundles.find((x: any) => x.bundle === "marker")?.version === "1.0.3");
    }
    const other = await c!.request("PUT", "/v1/bundles/marker", { token: second.token, body: markerBundle(set, "1.2.0") });
    expect(other.status, other.text).toBe(201);
  }, 180_000);

  test("with Redis down the limit cannot be checked: 503 STORE_UNAVAILABLE naming the check, nothing installed", async () => {
    const a = set.byName("A");
    await set.redis.stop();
    try {
      await waitFor("A to notice", async () => (await status(set, a)).store.connection.connected === false);
      const put = await a.request("PUT", "/v1/bundles/marker", { token: second.token, body: markerBundle(set, "1.3.0") });
      expect(put.status).toBe(503);
      expect(put.body.error).toMatchObject({ code: "STORE_UNAVAILABLE", details: { operation: expect.stringContaining("rate limit of 'ops-second'") } });
      expect((await status(set, a)).bundles.find((x: any) => x.bundle === "marker")?.version).toBe("1.2.0");
    } finally {
      await set.redis.start();
    }
  }, 120_000);
});
