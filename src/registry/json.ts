import { VcpError } from "../errors.js";
import { formatPath } from "../model/zod-errors.js";

/**
 * A deep copy of `value` restricted to JSON data, every object and array frozen. Hooks cross IPC and
 * the isolate boundary as JSON, and a frozen copy means no caller can change a registered hook by
 * mutating the object it passed in (or that we froze *its* object under it).
 *
 * Throws INVALID_HOOK naming the path of the first value that is not JSON data (function, Date,
 * Map, NaN, a cycle, ...).
 *
 * @example
 * ```ts
 * const metadata = toFrozenJson(parsed.metadata, ["metadata"]);
 * ```
 */
export function toFrozenJson(value: unknown, path: PropertyKey[], ancestors: object[] = []): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") {
    if (Number.isFinite(value)) return value;
    throw notJson(path, "must be a finite number", value);
  }
  if (typeof value !== "object") throw notJson(path, "must be JSON data", typeof value);
  if (ancestors.includes(value)) throw notJson(path, "must be JSON data, not a cycle", "cycle");
  ancestors.push(value);
  try {
    if (Array.isArray(value)) {
      const out: unknown[] = [];
      for (let i = 0; i < value.length; i++) out.push(toFrozenJson(value[i], [...path, i], ancestors));
      return Object.freeze(out);
    }
    const proto: unknown = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) throw notJson(path, "must be JSON data (a plain object)", "object");
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      // SECURITY: define, never assign — assigning an own "__proto__" key would replace the prototype.
      Object.defineProperty(out, key, {
        value: toFrozenJson((value as Record<string, unknown>)[key], [...path, key], ancestors),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return Object.freeze(out);
  } finally {
    ancestors.pop();
  }
}

/**
 * The `received` of an error's details: primitives as given (long strings cut), anything else by
 * kind, so details stay small plain data that can go to logs.
 */
export function describeReceived(value: unknown): unknown {
  if (typeof value === "string") return value.length > 80 ? `${value.slice(0, 80)}…` : value;
  if (value === null || typeof value === "number" || typeof value === "boolean") return value;
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function notJson(path: readonly PropertyKey[], rule: string, received: unknown): VcpError {
  const field = formatPath(path);
  return new VcpError("INVALID_HOOK", `hooks: ${field}: ${rule}`, { field, rule, received: describeReceived(received) });
}
