/**
 * One real redis-server and one store connection for a test file (started before its tests, closed after),
 * as the contract tests of the state ports use them: each runs the same cases against the in-memory
 * adapter and the Redis adapter over this connection.
 */
import { afterAll, beforeAll } from "vitest";
import { silentLogger } from "../../src/observe/events.js";
import { connectStore, type StoreConnection } from "../../src/store/index.js";
import { startRedisServer, type RedisServerHandle } from "./redis-server.js";

/**
 * Registers the file's beforeAll/afterAll; the returned function gives the connection once started,
 * its `url` the server's (for a test that needs connections of its own, e.g. another prefix).
 */
export function useRedisStore(prefix: string): (() => StoreConnection) & { url(): string } {
  let server: RedisServerHandle | undefined;
  let connection: StoreConnection | undefined;
  beforeAll(async () => {
    server = await startRedisServer();
    connection = await connectStore({ url: server.url, prefix, connectTimeoutMs: 5000, commandTimeoutMs: 2000, maxBackoffMs: 1000, logger: silentLogger });
  }, 60_000);
  afterAll(async () => {
    await connection?.close();
    await server?.close();
  }, 60_000);
  const started = () => {
    if (connection === undefined || server === undefined) throw new Error("useRedisStore: the connection is opened in beforeAll");
    return connection;
  };
  return Object.assign(started, { url: () => (started(), server!.url) });
}

/** A clock a test steps by hand; the Redis adapters read it through their scripts' `now` argument. */
export function steppedClock(start = 1_700_000_000_000) {
  let t = start;
  return { now: () => t, step: (ms: number) => void (t += ms) };
}
