/**
 * What the shared session, periodic and approval stores need of Redis: commands, Lua scripts, one
 * subscription, and the deployment's key prefix. src/store/ adapts its Redis connection to this, so
 * the session logic (sessions.ts, session-lock.ts, shared-periodic.ts, shared-approvals.ts) reads as
 * what it does rather than as client calls, and every failure reaches it as one coded error.
 */
import { VcpError } from "../errors.js";

/** A Lua script run by EVALSHA (loaded on first use); `name` is for errors and logs. */
export interface LuaScript {
  readonly name: string;
  readonly source: string;
}

export interface SessionRedis {
  /** One command. Rejects with STORE_UNAVAILABLE when Redis does not answer within the command timeout. */
  command(args: readonly (string | number)[]): Promise<unknown>;
  /** One Lua script: atomic in Redis (one transaction). Rejects like {@link command}. */
  script(script: LuaScript, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
  /** Subscribe to one channel; messages arrive until the returned function is called. */
  subscribe(channel: string, listener: (message: string) => void): Promise<() => Promise<void>>;
  /** A key under the deployment's prefix: `key("session", x)` → `<prefix>:session:<x>`. */
  key(...parts: string[]): string;
  /** This replica's id (heartbeat, leases). */
  readonly replicaId: string;
}

/**
 * A caller-chosen id or a session key as one key segment: base64url, so an id with `:`, `{`, `}` or
 * control characters can never address another key or hash slot.
 */
export function segment(text: string): string {
  return Buffer.from(text, "utf8").toString("base64url");
}

/** The coded error of a store that did not answer: 503, so a load balancer or client retries. */
export function storeUnavailable(what: string, cause?: unknown): VcpError {
  if (cause instanceof VcpError && cause.code === "STORE_UNAVAILABLE") return cause;
  const why = cause instanceof Error ? cause.message : cause === undefined ? "no answer in time" : String(cause);
  return new VcpError("STORE_UNAVAILABLE", `the shared store (Redis) did not answer ${what}: ${why}; nothing was changed, retry later`, { operation: what }, { cause });
}

/** Rejects with STORE_UNAVAILABLE after `ms` unless `work` settles first (it keeps running; its result is dropped). */
export function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(storeUnavailable(what, new Error(`no answer within ${ms} ms`))), ms);
    timer.unref?.();
    work.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}
