// What an operator learns when Redis fails: the reason Redis gave (its DENIED reply, not the EPIPE or
// "Connection is closed." that ioredis reports after it), and failed commands counted by reason for
// vcp_store_command_errors_total. Real redis-server processes (test/support/redis-server.ts).
import { createServer, type Server, type Socket } from "node:net";
import { networkInterfaces } from "node:os";
import { afterEach, describe, expect, test } from "vitest";
import { connectStore, type StoreConnection } from "../../../src/store/index.js";
import type { Logger } from "../../../src/observe/events.js";
import { startRedisServer, type RedisServerHandle } from "../../support/redis-server.js";

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

function recordingLogger(): Logger & { lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> } {
  const lines: Array<{ level: string; fields: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (fields: unknown, msg?: unknown) => void lines.push({ level, fields: typeof fields === "object" && fields !== null ? (fields as Record<string, unknown>) : {}, msg: String(msg ?? fields) });
  return { lines, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error"), isLevelEnabled: () => true, child() { return this; } } as never;
}

async function connect(url: string, logger: Logger, commandTimeoutMs = 1000): Promise<StoreConnection> {
  const store = await connectStore({ url, prefix: "errs", connectTimeoutMs: 5000, commandTimeoutMs, maxBackoffMs: 500, clientName: "vcp-hooks:errors-test", logger });
  cleanups.push(() => store.close());
  return store;
}

/** An IPv4 address of this machine that is not loopback: Redis's protected mode refuses connections to it. */
function outsideAddress(): string | undefined {
  return Object.values(networkInterfaces()).flat().find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address;
}

/** A real redis-server in protected mode (no password), reached on an address that is not loopback. */
async function protectedRedis(address: string): Promise<string> {
  const redis: RedisServerHandle = await startRedisServer({ extraArgs: ["--bind", "127.0.0.1", address, "--protected-mode", "yes"] });
  cleanups.push(() => redis.close());
  return `redis://${address}:${redis.port}`;
}

/** A listener that does byte for byte what Redis does when it refuses (networking.c): write the error reply, close. */
async function refusingListener(): Promise<string> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.end("-DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user. In this mode connections are only accepted from the loopback interface. If you want to connect from external computers to Redis you may adopt one of the following solutions: …\r\n");
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  cleanups.push(() => new Promise((r) => {
    server.close(r);
    for (const socket of sockets) socket.destroy();
  }));
  return `redis://127.0.0.1:${(server.address() as { port: number }).port}`;
}

// Whether ioredis reads the refusal before its own write fails is a race: both orders must end the same.
const address = outsideAddress();
const REFUSERS: Array<[string, () => Promise<string>]> = [
  ...(address !== undefined ? [["redis-server in protected mode", () => protectedRedis(address)] as [string, () => Promise<string>]] : []),
  ["a listener refusing as Redis does", refusingListener],
];

describe("Redis errors keep their reason", () => {
  test.each(REFUSERS)("a connection Redis refuses (%s) says DENIED in the log, the status and the failed command, not EPIPE", async (_name, refuser) => {
    const logger = recordingLogger();
    const store = await connect(await refuser(), logger);
    const denied = /DENIED Redis is running in protected mode because protected mode is enabled and no password is set for the default user\./;
    const connectionErrors = logger.lines.filter((l) => l.msg === "store: Redis connection error").map((l) => String(l.fields["error"]));
    expect(connectionErrors.length).toBeGreaterThan(0);
    expect(connectionErrors[0]).toMatch(denied);
    expect(store.status()).toMatchObject({ connected: false, last_error: expect.stringMatching(denied) });
    const failed = await store.run("reading a key", (redis) => redis.get(store.keys.custom("x"))).then(() => undefined, (err: unknown) => err as { code: string; message: string; details: { reason: string } });
    expect(failed).toMatchObject({ code: "STORE_UNAVAILABLE", details: { reason: "unreachable" } });
    expect(failed!.message).toMatch(denied);
    expect(store.status().command_errors).toEqual({ timeout: 0, reply: 0, unreachable: 1 });
  }, 60_000);

  test("failed commands are counted by reason: an error reply, a timeout, no connection", async () => {
    const redis = await startRedisServer();
    cleanups.push(() => redis.close());
    const store = await connect(redis.url, recordingLogger(), 300);
    await store.run("a command", (r) => r.ping());
    await expect(store.run("an unknown command", (r) => r.call("NO_SUCH_COMMAND"))).rejects.toMatchObject({ code: "STORE_UNAVAILABLE", details: { reason: "reply" } });
    // Redis holds every client's commands for 2 s: ours time out after 300 ms.
    expect(await redis.command("CLIENT", "PAUSE", "2000", "ALL")).toBe("OK");
    await expect(store.run("a paused command", (r) => r.get(store.keys.custom("y")))).rejects.toMatchObject({ code: "STORE_UNAVAILABLE", details: { reason: "timeout" } });
    await redis.stop({ kill: true });
    await expect(store.run("a command without Redis", (r) => r.get(store.keys.custom("z")))).rejects.toMatchObject({ code: "STORE_UNAVAILABLE", details: { reason: "unreachable" } });
    expect(store.status().command_errors).toEqual({ timeout: 1, reply: 1, unreachable: 1 });
  }, 60_000);
});
