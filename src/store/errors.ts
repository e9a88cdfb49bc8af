/*
 * How a Redis failure reaches a caller: one coded error, STORE_UNAVAILABLE (HTTP 503), naming the
 * operation that needed the store. The connection URL (it may hold a password) is never in it.
 */
import { messageWithCauses, VcpError } from "../errors.js";

/** Why the store could not serve: no connection, no answer in time, or an error reply (OOM, LOADING, READONLY…). */
export type StoreFailure = "unreachable" | "timeout" | "reply";

export function classifyStoreError(err: unknown): StoreFailure {
  const message = err instanceof Error ? err.message : String(err);
  if (/timed out/i.test(message)) return "timeout";
  if (err instanceof Error && err.name === "ReplyError") return "reply";
  return "unreachable";
}

/**
 * @example
 * ```ts
 * throw storeUnavailable("installing bundle 'strip-pii'", err);
 * // STORE_UNAVAILABLE: installing bundle 'strip-pii': the shared store (Redis) is unreachable: Connection is closed.
 * ```
 */
export function storeUnavailable(operation: string, err: unknown, connectionError?: string): VcpError {
  if (err instanceof VcpError) return err;
  const reason = classifyStoreError(err);
  // The causes too, and why the connection is down when the command failed for want of one.
  const own = messageWithCauses(err);
  const raw = connectionError !== undefined && !own.includes(connectionError) ? `${own} (connection: ${connectionError})` : own;
  // SECURITY: a redis:// URL in an error text could carry the password; never pass it on.
  const text = raw.replace(/rediss?:\/\/[^\s]+/g, "redis://…");
  const what = reason === "timeout" ? "did not answer in time (store.command_timeout_ms)" : reason === "reply" ? "refused the command" : "is unreachable";
  return new VcpError("STORE_UNAVAILABLE", `${operation}: the shared store (Redis) ${what}: ${text}`, { operation, reason, error: text }, { cause: err });
}
