// A replica cut off from Redis is not ready (issue 27): two real `serve` processes on one real
// redis-server, A reaching it through a TCP proxy that stalls (a network partition: the connection
// stays open, nothing crosses). Before, A stayed ready and its status said `connected: true` while
// every session call answered 503, so a load balancer kept sending it traffic it could not serve.
// Now, once Redis has not answered A for `store.unreachable_after_ms` (default 5 s), A's /readyz
// answers 503 `store_unreachable`, its status says so and `vcp_store_unreachable` is 1, with the
// failed commands counted in `vcp_store_command_errors_total{reason}`; /healthz stays 200 (a restart
// would not help), B is unaffected, and A is ready again as soon as Redis answers.
// `npm run build` first (the replicas run dist/).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startRedisServer, type RedisServerHandle } from "../../support/redis-server.js";
import { startReplicas, waitFor, type Replica, type ReplicaSet } from "../../support/replicas.js";
import { startTcpProxy, type TcpProxy } from "../../support/tcp-proxy.js";
import { constitution, status } from "./fixtures.js";

let redis: RedisServerHandle;
let proxy: TcpProxy;
let set: ReplicaSet;
let A: Replica, B: Replica;

beforeAll(async () => {
  redis = await startRedisServer();
  proxy = await startTcpProxy(redis.port);
  set = await startReplicas({ count: 2, redis, perReplica: { A: { store: { url: proxy.url } } } });
  [A, B] = set.replicas as [Replica, Replica];
}, 300_000);
afterAll(async () => {
  proxy?.resume();
  if (process.env.SCALE_OUT_DEBUG) for (const r of set?.replicas ?? []) console.log(`── ${r.name}\n${r.output()}`);
  await set?.close();
  await proxy?.close();
  await redis?.close();
}, 120_000);

async function metric(r: Replica, line: RegExp): Promise<number | undefined> {
  const res = await r.request("GET", "/metrics", { token: set.tokens.operator });
  const m = line.exec(res.text);
  return m === null ? undefined : Number(m[1]);
}

describe("store health", () => {
  test("a replica Redis does not answer for store.unreachable_after_ms is not ready, says so in status and metrics, and is ready again when Redis answers", async () => {
    const opened = await A.request("POST", "/v1/sessions", { token: set.tokens.client, body: { session_id: "cut", context: {}, constitution } });
    expect(opened.status, opened.text).toBe(201);
    expect((await A.request("GET", "/readyz")).status).toBe(200);
    expect((await status(set, A)).store.connection.connected).toBe(true);
    expect(await metric(A, /^vcp_store_unreachable (\d+)$/m)).toBe(0);

    proxy.stall();
    const cutAt = Date.now();
    const read = await A.request("GET", "/v1/sessions/cut", { token: set.tokens.client });
    expect(read.status, read.text).toBe(503);
    expect(read.body.error.code).toBe("STORE_UNAVAILABLE");
    const notReady = await waitFor("A to answer /readyz 503", async () => {
      const r = await A.request("GET", "/readyz");
      return r.status === 503 ? r : undefined;
    }, 60_000);
    const after = Date.now() - cutAt;
    expect(notReady.body).toMatchObject({ status: "store_unreachable", reason: expect.stringMatching(/Redis.*has not answered/) });
    // Alive all the same: a restart would not bring Redis back.
    expect((await A.request("GET", "/healthz")).status).toBe(200);
    const seen = (await status(set, A)).store;
    expect(seen.connection).toMatchObject({ connected: false, unreachable_after_ms: 5000 });
    expect(seen.connection.unreachable_ms).toBeGreaterThanOrEqual(5000);
    expect(await metric(A, /^vcp_store_unreachable (\d+)$/m)).toBe(1);
    expect(await metric(A, /^vcp_store_command_errors_total\{reason="timeout"\} (\d+)$/m)).toBeGreaterThanOrEqual(1);
    // B reaches Redis directly: ready, and it serves the session A cannot.
    expect((await B.request("GET", "/readyz")).status).toBe(200);
    expect((await B.request("GET", "/v1/sessions/cut", { token: set.tokens.client })).status).toBe(200);
    console.log(`store health: A not ready ${after} ms after the cut (store.unreachable_after_ms 5000, command timeout 2000 ms)`);

    proxy.resume();
    await waitFor("A to be ready again", async () => (await A.request("GET", "/readyz")).status === 200, 60_000);
    expect((await status(set, A)).store.connection).toMatchObject({ connected: true, unreachable_ms: 0 });
    expect(await metric(A, /^vcp_store_unreachable (\d+)$/m)).toBe(0);
    expect((await A.request("GET", "/v1/sessions/cut", { token: set.tokens.client })).status).toBe(200);
    await A.request("DELETE", "/v1/sessions/cut", { token: set.tokens.client });
  }, 240_000);
});
