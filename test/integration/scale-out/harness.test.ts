// The scale-out harness itself (test/support/redis-server.ts, test/support/replicas.ts): a real
// redis-server and three real `vcp-hooks serve` processes sharing one vcp.yaml, each seeing the others
// in GET /v1/status; Redis keeps what it acknowledged across a SIGKILL restart (AOF, appendfsync always).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startRedisServer } from "../../support/redis-server.js";
import { startReplicas, waitFor, type ReplicaSet } from "../../support/replicas.js";

describe("redis-server harness", () => {
  test("a write acknowledged before a SIGKILL is there after the restart", async () => {
    const redis = await startRedisServer();
    try {
      expect(await redis.command("SET", "k", "v1")).toBe("OK");
      await redis.restart({ kill: true });
      expect(await redis.command("GET", "k")).toBe("v1");
    } finally {
      await redis.close();
    }
  }, 60_000);
});

describe("three replicas on one Redis", () => {
  let set: ReplicaSet;
  beforeAll(async () => {
    set = await startReplicas({ count: 3 });
  }, 300_000);
  afterAll(async () => {
    await set?.close();
  }, 120_000);

  test("each replica lists all three as live peers under one prefix, with no warning", async () => {
    for (const replica of set.replicas) {
      const status = await waitFor(`${replica.name} to see 3 live replicas`, async () => {
        const r = await replica.request("GET", "/v1/status", { token: set.tokens.operator });
        return r.status === 200 && r.body.store.replicas.filter((p: any) => p.live).length === 3 ? r.body : undefined;
      });
      expect(status.store).toMatchObject({ kind: "redis", replica_id: replica.name, warnings: [], connection: { connected: true } });
      expect(status.store.replicas.map((p: any) => p.id).sort()).toEqual(["A", "B", "C"]);
      expect(new Set(status.store.replicas.map((p: any) => p.config_version)).size).toBe(1);
      expect(replica.output()).toContain(`store: redis redis://127.0.0.1:${set.redis.port}`);
      const metrics = await replica.request("GET", "/metrics", { token: set.tokens.operator });
      expect(metrics.text).toMatch(/^vcp_store_connected 1$/m);
      expect(metrics.text).toMatch(/^vcp_store_live_replicas 3$/m);
    }
  }, 120_000);
});
