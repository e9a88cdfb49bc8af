/**
 * A real `redis-server` for tests: on a free loopback port, in its own temp directory, with the
 * append-only file fsynced at every write (`appendfsync always`), so a restart — even after SIGKILL —
 * keeps every write Redis acknowledged. Restartable on the same port and directory.
 *
 * The binary is `$REDIS_SERVER` or `redis-server` on PATH (Debian package `redis-server`, installed by
 * .ci/run when absent). A missing binary is a failure, not a skip.
 *
 * @example
 * ```ts
 * const redis = await startRedisServer();
 * // … redis.url is redis://127.0.0.1:<port>
 * await redis.restart({ kill: true }); // SIGKILL, then start again on the same port and AOF
 * await redis.close();
 * ```
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, createConnection } from "node:net";
import { tmpdir } from "node:os";
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";
import { join } from "node:path";

export interface RedisServerHandle {
  url: string;
  port: number;
  dir: string;
  /** The running process's pid (changes at every restart). */
  pid(): number | undefined;
  running(): boolean;
  /** Stop Redis (SIGKILL with `kill: true`, else SIGTERM, which Redis answers by a clean shutdown). */
  stop(options?: { kill?: boolean }): Promise<void>;
  /** Start again on the same port and directory (it reloads its AOF). */
  start(): Promise<void>;
  restart(options?: { kill?: boolean }): Promise<void>;
  /** Send one command over a raw connection (RESP), for tests that look at Redis directly. */
  command(...args: string[]): Promise<string>;
  /** Stop and delete the directory. */
  close(): Promise<void>;
}

/**
 * A test file's (or describe block's) redis-server and what its tests start against it: Redis starts
 * before the tests; after them every runtime pushed on `runtimes` is closed, then Redis is stopped,
 * then every directory pushed on `dirs` is removed. The handle's members reach the running server
 * (`redis.url`, `redis.restart()`…) once it has started.
 *
 * @example
 * ```ts
 * const redis = useRedisServer<Runtime>();
 * test("…", async () => {
 *   const rt = await createRuntime({ store: { kind: "redis", url: redis.url } });
 *   redis.runtimes.push(rt);
 * });
 * ```
 */
export function useRedisServer<R extends { close(): Promise<void> } = { close(): Promise<void> }>(options: Parameters<typeof startRedisServer>[0] = {}): RedisServerHandle & {
  /** Closed after the tests, before Redis stops (a close that fails is ignored). */
  readonly runtimes: R[];
  /** Removed after Redis stopped. */
  readonly dirs: string[];
} {
  let server: RedisServerHandle | undefined;
  const runtimes: R[] = [];
  const dirs: string[] = [];
  beforeAll(async () => {
    server = await startRedisServer(options);
  }, 60_000);
  afterAll(async () => {
    for (const rt of runtimes) await rt.close().catch(() => undefined);
    await server?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }, 60_000);
  const started = (): RedisServerHandle => {
    if (server === undefined) throw new Error("useRedisServer: the server starts in beforeAll");
    return server;
  };
  return {
    runtimes,
    dirs,
    get url() { return started().url; },
    get port() { return started().port; },
    get dir() { return started().dir; },
    pid: () => started().pid(),
    running: () => started().running(),
    stop: (o) => started().stop(o),
    start: () => started().start(),
    restart: (o) => started().restart(o),
    command: (...args) => started().command(...args),
    close: () => started().close(),
  };
}

/**
 * Run `work` while the Redis at `url` refuses INCR (an ACL on the default user), which only the
 * publication of a bundle change (its revision counter) and a session's lock use: Redis is up and every
 * other write lands, so a bundle change's script stops half-way, as it does when Redis refuses a write.
 */
export async function whileIncrIsRefused<T>(url: string, work: () => Promise<T>): Promise<T> {
  const admin = new Redis(url);
  try {
    await admin.call("ACL", "SETUSER", "default", "-incr");
    return await work();
  } finally {
    await admin.call("ACL", "SETUSER", "default", "+incr");
    admin.disconnect();
  }
}

const READY_TIMEOUT_MS = 30_000;

export async function startRedisServer(options: { binary?: string; /** After the defaults, which they override (e.g. another --bind). */ extraArgs?: string[] } = {}): Promise<RedisServerHandle> {
  const binary = options.binary ?? process.env.REDIS_SERVER ?? "redis-server";
  const dir = mkdtempSync(join(tmpdir(), "vcp-redis-"));
  let port = 0;
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();

  async function launch(): Promise<void> {
    const args = [
      "--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--daemonize", "no",
      "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--protected-mode", "no",
      "--logfile", "", "--loglevel", "notice",
      ...(options.extraArgs ?? []),
    ];
    const proc = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
    child = proc;
    let output = "";
    exited = new Promise((resolve) => proc.once("exit", () => resolve()));
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not become ready in ${READY_TIMEOUT_MS} ms:\n${output}`)), READY_TIMEOUT_MS);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        if (/Ready to accept connections/.test(output)) {
          clearTimeout(timer);
          resolve();
        }
      };
      proc.stdout!.on("data", onData);
      proc.stderr!.on("data", onData);
      proc.once("error", (err) => {
        clearTimeout(timer);
        reject(new Error(`cannot start ${binary} (apt-get install redis-server, or set REDIS_SERVER): ${err.message}`));
      });
      proc.once("exit", (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited with ${code} before it was ready:\n${output}`));
      });
    });
  }

  // A free port: ask the kernel, release it, let Redis bind it (retried if someone took it meanwhile).
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    try {
      await launch();
      break;
    } catch (err) {
      if (attempt >= 4 || !/Address already in use|bind/i.test(String(err))) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
    }
  }

  const handle: RedisServerHandle = {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    pid: () => child?.pid,
    running: () => child !== undefined && child.exitCode === null && child.signalCode === null,
    async stop(stopOptions = {}) {
      if (!handle.running()) return;
      child!.kill(stopOptions.kill ? "SIGKILL" : "SIGTERM");
      await exited;
    },
    async start() {
      if (handle.running()) return;
      await launch();
    },
    async restart(restartOptions = {}) {
      await handle.stop(restartOptions);
      await handle.start();
    },
    command: (...args) => rawCommand(port, args),
    async close() {
      await handle.stop({ kill: true });
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** One RESP command; the reply as text (bulk/simple strings, integers; arrays joined by newlines). */
function rawCommand(port: number, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let data = "";
    socket.setTimeout(10_000, () => socket.destroy(new Error("redis command timed out")));
    socket.on("error", reject);
    socket.on("data", (chunk) => {
      data += chunk.toString("utf8");
      const parsed = parseReply(data);
      if (parsed !== undefined) {
        socket.end();
        if (parsed.error) reject(new Error(parsed.value));
        else resolve(parsed.value);
      }
    });
    socket.write(`*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`);
  });
}

function parseReply(text: string): { value: string; error: boolean } | undefined {
  const result = parseAt(text, 0);
  return result === undefined ? undefined : { value: result.value, error: result.error };
}

function parseAt(text: string, at: number): { value: string; error: boolean; end: number } | undefined {
  const eol = text.indexOf("\r\n", at);
  if (eol < 0) return undefined;
  const type = text[at];
  const line = text.slice(at + 1, eol);
  if (type === "+" || type === ":") return { value: line, error: false, end: eol + 2 };
  if (type === "-") return { value: line, error: true, end: eol + 2 };
  if (type === "$") {
    const length = Number(line);
    if (length < 0) return { value: "", error: false, end: eol + 2 };
    const buf = Buffer.from(text.slice(eol + 2), "utf8");
    if (buf.length < length + 2) return undefined;
    const value = buf.subarray(0, length).toString("utf8");
    return { value, error: false, end: eol + 2 + value.length + 2 };
  }
  if (type === "*") {
    const count = Number(line);
    const parts: string[] = [];
    let end = eol + 2;
    for (let i = 0; i < count; i++) {
      const part = parseAt(text, end);
      if (part === undefined) return undefined;
      parts.push(part.value);
      end = part.end;
    }
    return { value: parts.join("\n"), error: false, end };
  }
  return { value: line, error: false, end: eol + 2 };
}
