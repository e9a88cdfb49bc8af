/*
 * Redaction for audit payloads, guest log lines and the operational log (src/observe/logger.ts).
 * No I/O and no pino: the sandbox workers import this module.
 */
import { REDACT_LOOKAHEAD, redactHead, redactString } from "./redact-string.js";

// The string scrubber lives apart so light entries (the `vcp-hooks hook` adapter) can use it without this module.
export { redactHead, redactString };

/** Replaces the value of a configured key. */
export const REDACTED = "[REDACTED]";


export interface RedactorOptions {
  /** Keys whose values are replaced wholesale, matched at any depth, ignoring case, `-` and `_`. */
  keys: readonly string[];
  /** Strings longer than this are cut AFTER redaction; default 4096. */
  maxStringLength?: number;
  /** Nesting deeper than this is replaced by "[MaxDepth]"; default 32. */
  maxDepth?: number;
  /**
   * A budget for the copy, in characters of its JSON text: once the copy is known to be longer, the
   * walk stops (later members and elements are left out), so a value of any size costs about this
   * much work. The copy's JSON text then starts with the same `maxChars` characters as a full copy's
   * (members are copied in JSON.stringify's order); a copy within the budget is the full copy. For a
   * caller that shows a cut JSON text (an approval's `input`). Default: none (the audit log's fields
   * are bounded before they reach the writer, and its size marker hashes the whole field).
   */
  maxChars?: number;
}

/** What one redaction has walked: the objects above the current value, and a lower bound of the copy's JSON length. */
interface Walk {
  ancestors: Set<object>;
  chars: number;
}

/** Returns a redacted copy; never changes its argument. */
export type Redactor = (value: unknown) => unknown;

const normalizeKey = (key: string) => key.toLowerCase().replace(/[-_\s]/g, "");

/**
 * Build a redactor for audit payloads and log fields: configured keys are replaced at any depth,
 * secret shapes are replaced inside every string (keys of objects included), then long strings are
 * truncated. SECURITY: redaction runs before truncation, so a secret cannot escape the patterns by
 * being cut in half; a string is read only up to its kept length plus a lookahead, and with
 * `maxChars` a value only up to a budget, so no limit waits for the whole input to be walked. Cycles become "[Circular]"; functions and symbols are dropped; the result is
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
  const budget = options.maxChars ?? Infinity;

  // SECURITY: a string is read no further than its kept length plus the shapes' lookahead (redactHead),
  // and redacted before it is cut.
  const scan = maxString + REDACT_LOOKAHEAD;
  const str = (text: string): string => truncate(redactHead(text, maxString), maxString, Math.max(0, text.length - scan));

  // `at.chars` counts at least the JSON text of what was copied so far, in JSON.stringify's order:
  // quotes, brackets, a key's quotes and colon, one character per number and comma.
  function walk(value: unknown, depth: number, at: Walk): unknown {
    if (typeof value === "string") {
      const out = str(value);
      at.chars += out.length + 2;
      return out;
    }
    if (typeof value === "number") {
      at.chars += 1;
      return value;
    }
    if (value === null || typeof value === "boolean") {
      at.chars += 4;
      return value;
    }
    if (typeof value === "bigint") return walk(value.toString(), depth, at);
    if (typeof value !== "object") return undefined; // undefined, function, symbol
    if (at.ancestors.has(value)) return walk("[Circular]", depth, at);
    if (depth >= maxDepth) return walk("[MaxDepth]", depth, at);
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? walk(null, depth, at) : walk(value.toISOString(), depth, at);
    if (ArrayBuffer.isView(value)) return walk(`[Binary ${value.byteLength} bytes]`, depth, at);
    at.ancestors.add(value);
    at.chars += 1; // the opening bracket (the closing one is not counted: a cut copy closes early)
    try {
      if (Array.isArray(value)) {
        const out: unknown[] = [];
        // The budget is checked before each element is read: a huge array costs no more than the budget.
        for (let i = 0; i < value.length && at.chars <= budget; i++) {
          const copied = walk(value[i], depth + 1, at);
          at.chars += (i > 0 ? 1 : 0) + (copied === undefined ? 4 : 0); // the comma; JSON writes null for what it cannot carry
          out.push(copied ?? null);
        }
        return out;
      }
      const source: Record<string, unknown> =
        value instanceof Error ? errorFields(value) : (value as Record<string, unknown>);
      const out: Record<string, unknown> = {};
      let members = 0;
      // for…in (own members only), not Object.entries: no array of every member before the budget is checked.
      for (const key in source) {
        if (at.chars > budget) break;
        if (!Object.hasOwn(source, key)) continue;
        const safeKey = str(key);
        // A key is compared by its head too (a longer one can only match more, never less).
        const secret = keys.has(normalizeKey(key.length > scan ? key.slice(0, scan) : key));
        const copied = secret ? REDACTED : walk(source[key], depth + 1, at);
        if (copied === undefined) continue;
        if (secret) at.chars += REDACTED.length + 2;
        // SECURITY: a member named `__proto__` (JSON.parse makes it an own member) is copied as a member; a
        // plain assignment would set the copy's prototype instead and hide the member from the reader.
        if (safeKey === "__proto__") Object.defineProperty(out, safeKey, { value: copied, enumerable: true, writable: true, configurable: true });
        else out[safeKey] = copied;
        at.chars += (members++ > 0 ? 1 : 0) + safeKey.length + 3; // the comma, the key's quotes and colon
      }
      return out;
    } finally {
      at.ancestors.delete(value);
    }
  }

  return (value: unknown) => walk(value, 0, { ancestors: new Set(), chars: 0 });
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

/** `text` cut at `max` (marked with how many characters were cut, `unread` of them never read). */
function truncate(text: string, max: number, unread: number): string {
  if (text.length <= max) return text;
  let cut = max;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--; // do not split a surrogate pair
  return `${text.slice(0, cut)}…[truncated ${text.length - cut + unread} chars]`;
}
