// Pub/sub on the store connection against a real redis-server: a notification published right after
// `subscribe` returns is heard (the subscription is live by then), and after the subscriber's
// connection was cut, the listeners are told to resynchronise (a message sent meanwhile is lost).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { connectStore, type StoreConnection } from "../../../src/store/index.js";
import { silentLogger } from "../../../src/observe/events.js";
import { startRedisServer, type RedisServerHandle } from "../../support/redis-server.js";

let server: RedisServerHandle;
const opened: StoreConnection[] = [];

async function open(): Promise<StoreConnection> {
  const connection = await connectStore({ url: server.url, prefix: "subtest", connectTimeoutMs: 5000, commandTimeoutMs: 5000, maxBackoffMs: 200, logger: silentLogger });
  opened.push(connection);
  return connection;
}

beforeAll(async () => {
  server = await startRedisServer();
}, 60_000);
afterAll(async () => {
  for (const connection of opened) await connection.close();
  await server?.close();
}, 60_000);

describe("store pub/sub", () => {
  test("a message published as soon as subscribe returns reaches the listener, on a fresh connection every time", async () => {
    const publisher = await open();
    for (let round = 0; round < 10; round++) {
      // A fresh connection each round: its subscriber connection is not up when subscribe is called.
      const listener = await open();
      const heard: string[] = [];
      await listener.subscribe(`chan-${round}`, (message) => heard.push(message));
      await publisher.publish("test", `chan-${round}`, `hello ${round}`);
      await expect.poll(() => heard, { timeout: 5000 }).toEqual([`hello ${round}`]);
      await listener.close();
    }
  }, 60_000);

  test("after the subscriber's connection is cut, the ready listeners are told once it is subscribed again", async () => {
    const connection = await open();
    const heard: string[] = [];
    await connection.subscribe("cut", (message) => heard.push(message));
    let resyncs = 0;
    connection.onReady(() => resyncs++);
    await expect.poll(() => resyncs, { timeout: 20_000 }).toBeGreaterThanOrEqual(1); // told at once: the command client is up
    const before = resyncs;
    // What a resync is for: a listener told "ready" after the cut publishes at once, and is heard. (The
    // subscriber's first resubscription may still tell the listeners late, after the cut, while it is
    // down: that publish is lost, and the one after its real resubscription must arrive.)
    const publisher = await open();
    let cut = false;
    connection.onReady(() => {
      if (cut) void publisher.publish("test", "cut", "after");
    });
    // Cut only the subscriber's connection (the command client stays up and never reconnects).
    await connection.redis.call("CLIENT", "KILL", "TYPE", "pubsub");
    cut = true;
    await expect.poll(() => resyncs, { timeout: 20_000 }).toBeGreaterThan(before);
    await expect.poll(() => heard, { timeout: 20_000 }).toContain("after");
  }, 60_000);
});
