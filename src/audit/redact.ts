/*
 * Redaction for audit payloads, guest log lines and the operational log (src/observe/logger.ts).
 * No I/O and no pino: the sandbox workers import this module.
 */
import { redactString } from "./redact-string.js";

// The string scrubber lives apart so light entries (the `vcp-hooks hook` adapter) can use it without this module.
export { redactString };

/** Replaces the value of a configured key. */
export const REDACTED = "[REDACTED]";


export interface RedactorOptions {
  /** Keys whose values are replaced wholesale, matched at any depth, ignoring case, `-` and `_`. */
  keys: readonly string[];
  /** Strings longer than this are cut AFTER redaction; default 4096. */
  maxStringLength?: number;
  /** Nesting deeper than this is replaced by "[MaxDepth]"; default 32. */
  maxDepth?: number;
}

/** Returns a redacted copy; never changes its argument. */
export type Redactor = (value: unknown) => unknown;

const normalizeKey = (key: string) => key.toLowerCase().replace(/[-_\s]/g, "");

/**
 * Build a redactor for audit payloads and log fields: configured keys are replaced at any depth,
 * secret shapes are replaced inside every string (keys of objects included), then long strings are
 * truncated. SECURITY: redaction runs before truncation, so a secret cannot escape the patterns by
 * being cut in half. Cycles become "[Circular]"; functions and symbols are dropped; the result is
 * plain JSON data.
 *
 * @example
 * ```ts
 * const redact = createRedactor({ keys: ["password", "authorization"] });
 * redact({ user: "a", password: "hunter2", note: "key sk-abcdefghijklmnop1234" });
 * // { user: "a", password: "[REDACTED]", note: "key [REDACTED:api-key]" }
 * ```
 */
export function createRedactor(options: RedactorOptions): Redactor {
  const keys = new Set(options.keys.map(normalizeKey));
  const maxString = options.maxStringLength ?? 4096;
  const maxDepth = options.maxDepth ?? 32;

  const str = (text: string): string => truncate(redactString(text), maxString);

  function walk(value: unknown, depth: number, ancestors: Set<object>): unknown {
    if (typeof value === "string") return str(value);
    if (value === null || typeof value === "number" || typeof value === "boolean") return value;
    if (typeof value === "bigint") return value.toString();
    if (typeof value !== "object") return undefined; // undefined, function, symbol
    if (ancestors.has(value)) return "[Circular]";
    if (depth >= maxDepth) return "[MaxDepth]";
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
    if (ArrayBuffer.isView(value)) return `[Binary ${value.byteLength} bytes]`;
    ancestors.add(value);
    try {
      if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1, ancestors) ?? null);
      const source: Record<string, unknown> =
        value instanceof Error ? errorFields(value) : (value as Record<string, unknown>);
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(source)) {
        const safeKey = str(key);
        if (keys.has(normalizeKey(key))) {
          out[safeKey] = REDACTED;
          continue;
        }
        const redacted = walk(v, depth + 1, ancestors);
        if (redacted !== undefined) out[safeKey] = redacted;
      }
      return out;
    } finally {
      ancestors.delete(value);
    }
  }

  return (value: unknown) => walk(value, 0, new Set());
}

/**
 * An Error's message and stack are not enumerable, nor are `cause` (where undici puts the DNS or
 * socket error behind "fetch failed") and an AggregateError's `errors` (one per address tried): keep
 * them all (redacted; a cause is walked like any value, so its own cause follows).
 */
function errorFields(error: Error): Record<string, unknown> {
  return {
    ...(error as unknown as Record<string, unknown>),
    type: error.name,
    message: error.message,
    stack: error.stack,
    ...(error.cause !== undefined ? { cause: error.cause } : {}),
    ...(error instanceof AggregateError ? { errors: error.errors } : {}),
  };
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = max;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--; // do not split a surrogate pair
  return `${text.slice(0, cut)}…[truncated ${text.length - cut} chars]`;
}
