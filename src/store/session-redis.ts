/**
 * What the shared session, periodic and approval stores need of Redis: commands and Lua scripts that
 * fail as one coded error (STORE_UNAVAILABLE, 503, via connection.ts), one subscription, the key
 * helpers (keys.ts) and this replica's id. A narrow view of the {@link StoreConnection}, so the
 * session logic (sessions.ts, session-lock.ts, shared-periodic.ts, approvals.ts) reads as
 * what it does rather than as client calls.
 */
import { defineScript, type StoreConnection, type StoreScript } from "./connection.js";
import type { StoreKeys } from "./keys.js";
import type { RedisClock } from "./redis-clock.js";

/** A Lua script: atomic in Redis (one transaction). `operation` says what it does, for STORE_UNAVAILABLE. */
export interface LuaScript {
  readonly operation: string;
  readonly script: StoreScript;
}

export function luaScript(name: string, operation: string, source: string): LuaScript {
  return Object.freeze({ operation, script: defineScript(name, source) });
}

export interface SessionRedis {
  /** One command; `operation` names it in STORE_UNAVAILABLE. */
  command(operation: string, args: readonly [string, ...(string | number)[]]): Promise<unknown>;
  script(script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  /** Messages of one channel until the returned function is called (resubscribes after a reconnect). */
  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>>;
  readonly keys: StoreKeys;
  /** This replica's id (lease holder). */
  readonly replicaId: string;
  /** How long a command may take before it fails (store.command_timeout_ms). */
  readonly commandTimeoutMs: number;
  /** Redis's clock as this replica knows it (redis-clock.ts): scripts' "not after" deadlines. */
  readonly clock: RedisClock;
  /** Redis TIME now, read with one command (feeds `clock`). */
  serverTimeMs(operation: string): Promise<number>;
}

export function sessionRedisOf(connection: StoreConnection, replicaId: string, commandTimeoutMs: number): SessionRedis {
  return {
    command: (operation, [name, ...args]) => connection.run(operation, (redis) => redis.call(name, ...args)),
    script: (lua, keys, args) => connection.eval(lua.operation, lua.script, keys, args),
    subscribe: (channel, listener) => connection.subscribe(channel, listener),
    keys: connection.keys,
    replicaId,
    commandTimeoutMs,
    clock: connection.clock,
    serverTimeMs: (operation) => connection.serverTimeMs(operation),
  };
}

/** A long or structured value (an owner-scoped session name) as one short, inert key part. */
export function segment(text: string): string {
  return Buffer.from(text, "utf8").toString("base64url");
}
