/*
 * The connection to the shared store: the only module that creates Redis clients (eslint's import
 * table keeps `ioredis` in src/store/).
 *
 * - Commands fail fast while disconnected (no offline queue) and time out after
 *   `commandTimeoutMs`: a caller gets STORE_UNAVAILABLE naming its operation within its deadline
 *   instead of waiting for Redis to come back.
 * - The client reconnects by itself, forever, with capped exponential backoff and jitter; every
 *   (re)connection calls the `onReady` listeners (resynchronise, repeat start-up checks).
 * - Pub/sub runs on a second connection (a subscribed Redis connection can send nothing else), which
 *   resubscribes after every (re)connection and then calls the `onReady` listeners, so a message
 *   missed while it was not subscribed is covered by a resync. `subscribe` returns once the
 *   subscription is live (Redis up; bounded by the command timeout).
 */
import { createHash, randomUUID } from "node:crypto";
import { connect as netConnect, isIP, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { connect as tlsConnect } from "node:tls";
import type { Redis } from "ioredis";
import type { Logger } from "../observe/events.js";
import { messageWithCauses, VcpError } from "../errors.js";
import { storeUnavailable, type StoreFailure } from "./errors.js";
import { createStoreHealth, type StoreHealth, type StoreHealthStatus } from "./health.js";
import { storeKeys, type StoreKeys } from "./keys.js";
import { createRedisClock, type RedisClock } from "./redis-clock.js";

export interface StoreConnectionOptions {
  url: string;
  prefix: string;
  /** First connection: how long the start waits for Redis before going on without it. */
  connectTimeoutMs: number;
  /** Every command: past this it fails with STORE_UNAVAILABLE (reason timeout). */
  commandTimeoutMs: number;
  /** Ceiling of the reconnect backoff. */
  maxBackoffMs: number;
  /** Redis not answering for this long makes the replica not ready (store.unreachable_after_ms; 0: never). */
  unreachableAfterMs?: number;
  /** Shown in Redis `CLIENT LIST` (e.g. `vcp-hooks:<replica id>`). */
  clientName?: string;
  logger: Logger;
}

/** A Lua script run with EVALSHA (falling back to EVAL after a Redis restart emptied the script cache). */
export interface StoreScript {
  readonly name: string;
  readonly lua: string;
  readonly sha: string;
}

export function defineScript(name: string, lua: string): StoreScript {
  return Object.freeze({ name, lua, sha: createHash("sha1").update(lua).digest("hex") });
}

export interface StoreConnectionStatus extends StoreHealthStatus {
  /** Connected and answering: false while the connection is down, or once Redis has not answered for `unreachable_after_ms`. */
  connected: boolean;
  /** When the connection last came up or went down (ISO time). */
  since: string;
  /** Times the connection came back after being lost. */
  reconnects: number;
  last_error: string | null;
  /** Commands (`run`, `eval`, …) that failed since start, by why (store/errors.ts classifyStoreError). */
  command_errors: Record<StoreFailure, number>;
}

export type RedisClient = Redis;

export interface StoreConnection {
  readonly keys: StoreKeys;
  /**
   * The command client, for code in src/store/ and for `run`'s callback. Prefer `run`: it maps every
   * failure to STORE_UNAVAILABLE naming the operation.
   */
  readonly redis: RedisClient;
  /**
   * Run `fn` against the command client. Any failure (no connection, timeout, error reply) becomes
   * STORE_UNAVAILABLE with `operation` in the message and details; VcpErrors pass through.
   *
   * @example
   * ```ts
   * const seq = await store.run("reading the bundle revision", (redis) => redis.get(store.keys.bundleSeq));
   * ```
   */
  run<T>(operation: string, fn: (redis: RedisClient) => Promise<T>): Promise<T>;
  /** Run a Lua script (EVALSHA, EVAL when Redis lost its script cache); failures as `run`. */
  eval(operation: string, script: StoreScript, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown>;
  /** Redis `TIME` in ms: one clock for every replica (periodic ticks, leases), whatever their skew. */
  serverTimeMs(operation?: string): Promise<number>;
  /** This replica's estimate of Redis's TIME (redis-clock.ts), fed by every answer that carries it; read at each (re)connection. */
  readonly clock: RedisClock;
  /** Publish on a channel of this deployment (`keys.channel(name)` or another key of `keys`). */
  publish(operation: string, channel: string, message: string): Promise<void>;
  /**
   * Subscribe to a channel on the shared subscriber connection. `onMessage` gets each message;
   * messages sent while disconnected are lost, so pair a subscription with `onReady` (resync).
   * Returns an unsubscribe function.
   */
  subscribe(channel: string, onMessage: (message: string) => void): Promise<() => Promise<void>>;
  /** Called at every (re)connection of the command client, and once at once if it is up now. */
  onReady(listener: () => void): () => void;
  /** The command connection is up (Redis may still not answer: see `health`). */
  connected(): boolean;
  /** Whether Redis answers this replica, from the commands' outcomes (health.ts). */
  readonly health: StoreHealth;
  status(): StoreConnectionStatus;
  /** Close both connections; pending commands fail. */
  close(): Promise<void>;
}

/** Reconnect delay: exponential from 100 ms, capped, ±20 % jitter so replicas do not reconnect in step. */
export function backoffMs(attempt: number, maxBackoffMs: number): number {
  const base = Math.min(maxBackoffMs, 100 * 2 ** Math.min(attempt - 1, 20));
  return Math.max(50, Math.round(base * (0.8 + Math.random() * 0.4)));
}

/**
 * Open the store's connections. Waits up to `connectTimeoutMs` for the first connection; without one
 * it resolves anyway (logged): the client keeps reconnecting and stateless chains run meanwhile.
 *
 * @example
 * ```ts
 * const store = await connectStore({ url: "redis://127.0.0.1:6379", prefix: "vcp", connectTimeoutMs: 5000,
 *   commandTimeoutMs: 2000, maxBackoffMs: 5000, logger });
 * await store.run("ping", (redis) => redis.ping());
 * ```
 */
export async function connectStore(options: StoreConnectionOptions): Promise<StoreConnection> {
  // Loaded with the first connection: ioredis is a sixth of what every runtime start (and every
  // `hook --embedded` call, which never uses Redis) would otherwise load.
  const { Redis: IORedis } = await import("ioredis");
  const { logger } = options;
  const keys = storeKeys(options.prefix);
  const target = describeUrl(options.url);
  const common = {
    lazyConnect: true,
    connectTimeout: options.connectTimeoutMs,
    retryStrategy: (attempt: number) => backoffMs(attempt, options.maxBackoffMs),
    ...(options.clientName !== undefined ? { connectionName: options.clientName.replace(/[^\x21-\x7e]/g, "_") } : {}),
  };
  // Commands: fail fast while down (no offline queue, no retry of a command whose connection died).
  const redis = new IORedis(options.url, { ...common, enableOfflineQueue: false, maxRetriesPerRequest: 0, commandTimeout: options.commandTimeoutMs });
  let subscriber: Redis | undefined;
  const channels = new Map<string, Set<(message: string) => void>>();
  const readyListeners = new Set<() => void>();
  let closed = false;
  let up = false;
  let everUp = false;
  let reconnects = 0;
  let since = new Date().toISOString();
  let lastError: string | null = null;

  // Redis refuses some connections outright (see firstWords): the reason an operator needs is its
  // reply ("DENIED … protected mode"), not the EPIPE or "Connection is closed." ioredis reports.
  // `handshake` is the connection being set up (TCP up, not ready), with Redis's refusal on it if any.
  let handshake: { refusal: string | null; reported: boolean } | null = null;
  let probing: Promise<void> | null = null;
  const report = (text: string): void => {
    // ioredis reports each failed attempt; log a change of state, not every retry.
    const safe = text.replace(/rediss?:\/\/[^\s]+/g, "redis://…");
    if (safe !== lastError) logger.warn({ store: target, error: safe }, "store: Redis connection error");
    lastError = safe;
  };
  const refused = (refusal: string, seen: string | null) => `Redis refused the connection: ${refusal}${seen !== null ? ` (then: ${seen})` : ""}`;
  redis.on("connect", () => {
    const current = { refusal: null as string | null, reported: false };
    handshake = current;
    // Its first bytes, read beside ioredis's own reader: a refusal arrives before any answer.
    redis.stream?.once("data", (chunk: Buffer | string) => {
      current.refusal = refusalIn(chunk);
    });
  });
  redis.on("error", (err: Error) => {
    const seen = messageWithCauses(err);
    const current = handshake;
    if (current === null || up) return report(seen);
    current.reported = true;
    if (current.refusal !== null) return report(refused(current.refusal, seen));
    if (probing !== null) return; // the probe under way reports this failure
    // The socket failed before Redis's first bytes were read (ioredis wrote into a connection Redis
    // had already closed): ask again, saying nothing, and read what Redis says first.
    probing = firstWords(options.url, Math.min(options.connectTimeoutMs, FIRST_WORDS_MS))
      .then((words) => {
        current.refusal = words === null ? null : refusalIn(words);
        report(current.refusal !== null ? refused(current.refusal, seen) : seen);
      })
      .finally(() => (probing = null));
  });
  /** Resynchronise: every listener reads the shared state again (what a lost message would have said). */
  const tellReady = (): void => {
    for (const listener of [...readyListeners]) {
      try {
        listener();
      } catch (err) {
        logger.error({ err }, "store: a ready listener failed");
      }
    }
  };
  redis.on("ready", () => {
    handshake = null;
    if (everUp) reconnects += 1;
    up = true;
    everUp = true;
    since = new Date().toISOString();
    logger.info({ store: target, prefix: options.prefix, reconnects }, reconnects === 0 ? "store: connected to Redis" : "store: reconnected to Redis");
    tellReady();
  });
  const health = createStoreHealth({ unreachableAfterMs: options.unreachableAfterMs ?? 5000 });
  redis.on("close", () => {
    health.lost();
    // Closed by Redis after its refusal, with no socket error to report it by.
    if (!up && handshake !== null && handshake.refusal !== null && !handshake.reported) report(refused(handshake.refusal, null));
    handshake = null;
    if (up) {
      since = new Date().toISOString();
      logger.warn({ store: target }, "store: lost the connection to Redis; reconnecting with backoff");
    }
    up = false;
  });

  // Every command goes through `run` (eval, publish and serverTimeMs too): the one place to count failures.
  const commandErrors: Record<StoreFailure, number> = { timeout: 0, reply: 0, unreachable: 0 };
  const run = async <T>(operation: string, fn: (client: Redis) => Promise<T>): Promise<T> => {
    const startedAt = performance.now();
    try {
      const result = await fn(redis);
      health.answered();
      return result;
    } catch (err) {
      // Without a connection the command's own error says only that ("Connection is closed."): the
      // connection's last error says why.
      const failure = storeUnavailable(operation, err, up ? undefined : (lastError ?? undefined));
      const reason = (failure.details as { reason?: StoreFailure } | undefined)?.reason;
      // A VcpError thrown by `fn` is the caller's own verdict on an answer, not a store failure.
      if (reason !== undefined && !(err instanceof VcpError)) {
        commandErrors[reason]++;
        health.failed(reason, startedAt);
      }
      throw failure;
    }
  };

  const connection: StoreConnection = {
    keys,
    redis,
    run,
    async eval(operation, script, scriptKeys, args) {
      return run(`${operation} (script ${script.name})`, async (client) => {
        try {
          return await client.evalsha(script.sha, scriptKeys.length, ...scriptKeys, ...args);
        } catch (err) {
          if (!(err instanceof Error) || !err.message.startsWith("NOSCRIPT")) throw err;
          return client.eval(script.lua, scriptKeys.length, ...scriptKeys, ...args);
        }
      });
    },
    async serverTimeMs(operation = "reading the store's clock") {
      const sentAt = performance.now();
      const [seconds, micros] = await run(operation, (client) => client.time());
      const ms = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      connection.clock.observe(ms, sentAt, performance.now());
      return ms;
    },
    clock: createRedisClock(),
    async publish(operation, channel, message) {
      await run(operation, (client) => client.publish(channel, message));
    },
    async subscribe(channel, onMessage) {
      if (subscriber === undefined) {
        // Subscriptions may wait for the connection (offline queue on).
        const sub = new IORedis(options.url, { ...common, enableOfflineQueue: true, autoResubscribe: false, maxRetriesPerRequest: null });
        subscriber = sub;
        sub.on("error", () => undefined); // the command client logs the outage
        // The subscriber connects on its own schedule: a message published before its SUBSCRIBE took
        // effect (at start, or while it reconnected) never arrives. So we resubscribe ourselves and
        // then resynchronise the listeners, which read the state that message was about.
        sub.on("ready", () => {
          if (channels.size === 0) return;
          sub.subscribe(...channels.keys()).then(
            () => up && tellReady(),
            (err: unknown) => logger.warn({ err }, "store: resubscribing failed"),
          );
        });
        subscriber.on("message", (from: string, message: string) => {
          for (const listener of channels.get(from) ?? []) {
            try {
              listener(message);
            } catch (err) {
              logger.error({ err, channel: from }, "store: a subscriber failed");
            }
          }
        });
        subscriber.connect().catch(() => undefined);
      }
      let listeners = channels.get(channel);
      const first = listeners === undefined;
      if (listeners === undefined) {
        listeners = new Set();
        channels.set(channel, listeners);
      }
      // Listening before the SUBSCRIBE is sent: nothing that arrives once it is live goes unheard.
      listeners.add(onMessage);
      if (first) {
        const live = subscriber.subscribe(channel).then(
          () => true,
          (err: unknown) => {
            logger.warn({ channel, err }, "store: subscribing failed");
            return false;
          },
        );
        // With Redis up, the subscription is live when this returns, so a caller that reads the state
        // next misses nothing published after that read. Bounded by the command timeout; while Redis
        // is down it waits in the offline queue, and the resubscription on connect resynchronises.
        if (up) await Promise.race([live, sleep(options.commandTimeoutMs, false, { ref: false })]);
      }
      return async () => {
        listeners.delete(onMessage);
        if (listeners.size === 0) {
          channels.delete(channel);
          // Only over a live connection: queued while Redis is down, it would wait for Redis to come
          // back (and a closing replica with it). A channel no one listens to is harmless meanwhile.
          if (subscriber?.status === "ready") await subscriber.unsubscribe(channel).catch(() => undefined);
        }
      };
    },
    onReady(listener) {
      readyListeners.add(listener);
      if (up) queueMicrotask(() => readyListeners.has(listener) && listener());
      return () => readyListeners.delete(listener);
    },
    connected: () => up,
    health,
    status: () => ({ connected: up && !health.unreachable(), since, reconnects, last_error: up ? null : lastError, command_errors: { ...commandErrors }, ...health.status() }),
    async close() {
      if (closed) return;
      closed = true;
      readyListeners.clear();
      channels.clear();
      await Promise.all([quit(redis), subscriber === undefined ? undefined : quit(subscriber)]);
    },
  };

  // Redis's clock at every (re)connection: scripts can carry a "not after" from the first command on.
  connection.onReady(() => void connection.serverTimeMs().catch(() => undefined));

  // The first connection, bounded: a start never hangs on Redis.
  const first = redis.connect().then(
    () => true,
    () => false,
  );
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), options.connectTimeoutMs);
  });
  const ok = await Promise.race([first, timedOut]);
  clearTimeout(timer);
  // A start without Redis says why in its log and status: let a probe of the first failure finish.
  if (!ok) await probing;
  if (!ok) logger.warn({ store: target, connect_timeout_ms: options.connectTimeoutMs }, "store: Redis is not reachable at start; starting without it and reconnecting with backoff (shared state is unavailable until then)");
  return connection;
}

/** How long a probe waits for Redis's first words (a refusal is written the moment it accepts). */
const FIRST_WORDS_MS = 2000;

/**
 * Redis refuses some connections outright: the moment it accepts one it writes one error reply and
 * closes, before it reads a command — protected mode (`-DENIED Redis is running in protected mode …`),
 * `-ERR max number of clients reached`. ioredis writes its handshake at once, hands that reply to its
 * first handshake command (whose error it ignores, or, for HELLO, misreads as "a password was
 * supplied"), and reports the `write EPIPE` / `read ECONNRESET` / "Connection is closed." that follows.
 * So the connection's first bytes are read beside ioredis (`redis.stream`), and when the socket fails
 * before they could be, a probe connects once more, sends nothing, and reads what Redis says first: a
 * server that has nothing to refuse says nothing. Up to `ms`; null when nothing came.
 */
function firstWords(url: string, ms: number): Promise<string | null> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return Promise.resolve(null);
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  const port = Number(parsed.port || 6379);
  return new Promise((resolve) => {
    let words = "";
    const socket: Socket = parsed.protocol === "rediss:" ? tlsConnect({ host, port, servername: isIP(host) === 0 ? host : undefined }) : netConnect({ host, port });
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      resolve(words === "" ? null : words);
    };
    const timer = setTimeout(done, ms);
    socket.on("data", (chunk: Buffer) => {
      words += chunk.toString("utf8");
      if (words.includes("\r\n") || words.length >= 1024) done();
    });
    socket.on("error", done);
    socket.on("close", done);
  });
}

/** The first sentence of an error reply at the start of `bytes` (DENIED's is followed by ~900 characters of remedies), else null. */
function refusalIn(bytes: Buffer | string): string | null {
  const text = typeof bytes === "string" ? bytes : bytes.toString("utf8", 0, Math.min(bytes.length, 1024));
  if (!text.startsWith("-")) return null;
  return /^[^\r\n]*?(?:\.(?= )|$)/m.exec(text.slice(1))![0].slice(0, 300);
}

async function quit(client: Redis): Promise<void> {
  try {
    if (client.status === "ready") await client.quit();
    else client.disconnect();
  } catch {
    client.disconnect();
  }
}

/** host:port/db of a redis URL, without credentials (for logs and status). */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname && parsed.pathname !== "/" ? parsed.pathname : ""}`;
  } catch {
    return "redis://(unparsable URL)";
  }
}

/** A random id for one process's lifetime (the replica's instance, lock owners). */
export function newInstanceId(): string {
  return randomUUID();
}
