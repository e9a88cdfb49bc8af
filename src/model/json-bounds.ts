/**
 * Bounds on JSON that crosses a boundary: what callers hand the runtime (context, constitution,
 * event, session, pipeline inputs, HTTP bodies) and what guest code hands back (results, chain
 * state, log fields). One rule, in one place:
 *
 * - **depth**: a value nests arrays/objects at most `maxDepth` levels (`{}` and `[]` are depth 1, a
 *   scalar 0). Every JSON.stringify / JSON.parse / structured clone / IPC copy in this runtime
 *   recurses once per level, on stacks of different sizes (a worker thread's is the smallest): a
 *   result nested ~2,300 deep could not be cloned from a worker to the sandbox host, and a context
 *   nested ~6,000 deep could not be sent over IPC. Bounding depth at every entry keeps every one of
 *   those copies ~10× below where any of them fails.
 * - **size**: an input field serializes to at most `maxBytes` UTF-8 bytes of JSON. The default equals
 *   the sandbox's result cap (`limits.result_bytes`), so what goes into a hook can come back out.
 *
 * A violation, and any value JSON cannot carry (cycles, BigInt, a throwing getter), is a
 * `VcpError("INVALID_INPUT")` that names the field and the limit, raised before any work is done.
 *
 * The sandbox applies the same depth limit to results inside the isolate, with the same scanner:
 * {@link jsonTextDepth} is written so its source can run there (see prelude.ts).
 */
import { VcpError } from "../errors.js";
import { DEFAULTS } from "../config/defaults.js";

/** Default deepest nesting of an input field, a hook result field, chain state or log fields. */
export const DEFAULT_JSON_DEPTH = DEFAULTS.limits.json_depth;
/**
 * Highest configurable depth. Measured on Node 24: structured clone from a worker fails near 2,300
 * levels and IPC JSON near 6,000; the wire envelopes add < 10 levels. 256 keeps a wide margin.
 */
export const JSON_DEPTH_CEILING = 256;
/** Default cap on one input field's serialized size (= the default `limits.result_bytes`). */
export const DEFAULT_INPUT_BYTES = DEFAULTS.limits.input_bytes;
/** Highest configurable input size (the HTTP body ceiling). */
export const INPUT_BYTES_CEILING = 64 * 1024 * 1024;
/** A hook result wraps its fields one level deep (`{"modified_context": …}`). */
export const RESULT_ENVELOPE_DEPTH = 1;
/** A chain's `event` and `session` wrap caller fields one level deep (`{"transition_metadata": …}`). */
export const CHAIN_INPUT_ENVELOPES: Readonly<Record<string, number>> = Object.freeze({ event: 1, session: 1 });

/** Limits on one JSON value crossing a boundary. */
export interface JsonBounds {
  /** Deepest nesting of arrays/objects (`{}` is depth 1). */
  readonly maxDepth: number;
  /** Largest serialized size, UTF-8 bytes of JSON. */
  readonly maxBytes: number;
}

export const DEFAULT_JSON_BOUNDS: JsonBounds = Object.freeze({ maxDepth: DEFAULT_JSON_DEPTH, maxBytes: DEFAULT_INPUT_BYTES });

/**
 * Resolve caller options into bounds, refusing nonsense with INVALID_CONFIG naming the option.
 *
 * @example
 * ```ts
 * resolveJsonBounds({ maxDepth: 32 }) // { maxDepth: 32, maxBytes: 1048576 }
 * ```
 */
export function resolveJsonBounds(options: { maxDepth?: number; maxBytes?: number } = {}, prefix = "inputLimits"): JsonBounds {
  const maxDepth = options.maxDepth ?? DEFAULT_JSON_DEPTH;
  const maxBytes = options.maxBytes ?? DEFAULT_INPUT_BYTES;
  if (!Number.isSafeInteger(maxDepth) || maxDepth < 2 || maxDepth > JSON_DEPTH_CEILING) {
    throw new VcpError("INVALID_CONFIG", `${prefix}.maxDepth must be an integer from 2 to ${JSON_DEPTH_CEILING}`, { field: `${prefix}.maxDepth` });
  }
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 1024 || maxBytes > INPUT_BYTES_CEILING) {
    throw new VcpError("INVALID_CONFIG", `${prefix}.maxBytes must be an integer from 1024 to ${INPUT_BYTES_CEILING}`, { field: `${prefix}.maxBytes` });
  }
  return Object.freeze({ maxDepth, maxBytes });
}

/**
 * Nesting depth of JSON text (`{}` is 1, a scalar 0), or the first depth above `limit` as soon as
 * the text goes deeper (so a hostile text costs at most one pass).
 *
 * SECURITY: this function's source also runs inside every isolate (prelude.ts embeds it), after
 * bundle code had a chance to replace built-in methods. It therefore uses only operators, string
 * indexing and `.length` of a primitive string: no method call a guest could have redefined.
 *
 * @example
 * ```ts
 * jsonTextDepth('{"a":[1,{"b":"]"}]}', 64) // 3
 * ```
 */
export function jsonTextDepth(text: string, limit: number): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === "{" || c === "[") {
      depth++;
      if (depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (c === "}" || c === "]") {
      depth--;
    }
  }
  return max;
}

/**
 * Whether JSON text nests deeper than `limit` (`jsonTextDepth(text, limit) > limit`), without the
 * character-by-character scan when the text cannot: nesting never exceeds the number of `{` and `[`
 * characters in the text (brackets inside strings only make that bound looser), and `indexOf` counts
 * them far faster than the scan walks the text. A text with more brackets than `limit` is scanned.
 *
 * Host code only: `indexOf` is a method a bundle could replace inside an isolate (the prelude has its
 * own copy over captured intrinsics).
 *
 * @example
 * ```ts
 * jsonTextExceeds('{"a":[1,{"b":"]"}]}', 2) // true
 * ```
 */
export function jsonTextExceeds(text: string, limit: number): boolean {
  return openBracketsAbove(text, limit) && jsonTextDepth(text, limit) > limit;
}

/** Whether `text` holds more than `limit` `{` and `[` characters in all (stops counting there). */
function openBracketsAbove(text: string, limit: number): boolean {
  let count = 0;
  for (let i = text.indexOf("{"); i !== -1; i = text.indexOf("{", i + 1)) if (++count > limit) return true;
  for (let i = text.indexOf("["); i !== -1; i = text.indexOf("[", i + 1)) if (++count > limit) return true;
  return false;
}

/**
 * Nesting depth of an in-memory value as JSON would see it (own enumerable properties), or the first
 * depth above `limit`. Iterative: a value nested a million levels deep costs `limit` steps down one
 * branch, never a stack overflow. Cycles count as infinitely deep.
 *
 * @example
 * ```ts
 * jsonValueDepth({ a: [1, { b: 2 }] }, 64) // 3
 * ```
 */
export function jsonValueDepth(value: unknown, limit: number): number {
  return walkDepth(value, limit, Number.POSITIVE_INFINITY).depth;
}

interface Walked {
  depth: number;
  /** Some object has a toJSON method: JSON.stringify may produce another shape than the walk saw. */
  toJson: boolean;
  /** The walk stopped after `maxNodes` objects (shared references can make a small graph huge as JSON). */
  tooMany: boolean;
}

/** Depth walk shared by jsonValueDepth and serializeBounded. */
function walkDepth(value: unknown, limit: number, maxNodes: number): Walked {
  if (value === null || typeof value !== "object") return { depth: 0, toJson: false, tooMany: false };
  let max = 0;
  let toJson = false;
  let nodes = 0;
  // Two parallel stacks instead of one object per node: this runs on every fire.
  const values: object[] = [value];
  const depths: number[] = [1];
  while (values.length > 0) {
    const v = values.pop()!;
    const d = depths.pop()!;
    if (d > max) {
      max = d;
      if (max > limit) return { depth: max, toJson, tooMany: false };
    }
    if (++nodes > maxNodes) return { depth: max, toJson, tooMany: true };
    if (typeof (v as { toJSON?: unknown }).toJSON === "function") toJson = true;
    const children = Array.isArray(v) ? v : Object.values(v);
    for (const child of children) {
      if (child !== null && typeof child === "object") {
        values.push(child as object);
        depths.push(d + 1);
      }
    }
  }
  return { depth: max, toJson, tooMany: false };
}

/**
 * Serialize one input field, enforcing the bounds. Returns the JSON text (callers that need it, e.g.
 * for a hash, do not serialize twice). Throws INVALID_INPUT naming `field` and the limit broken.
 *
 * @example
 * ```ts
 * serializeBounded("context", input.context, bounds); // '{"text":"hi"}'
 * ```
 */
export function serializeBounded(field: string, value: unknown, bounds: JsonBounds): string {
  return measureBounded(field, value, bounds).text;
}

/** serializeBounded, also returning the exact UTF-8 size it checked. */
function measureBounded(field: string, value: unknown, bounds: JsonBounds): { text: string; bytes: number } {
  let text: string | undefined;
  let walked: Walked;
  try {
    // A cheap, iterative walk first: a cyclic, absurdly deep or absurdly large value never reaches
    // JSON.stringify. Every object or array takes at least 2 bytes of JSON, hence the node budget.
    walked = walkDepth(value, bounds.maxDepth, Math.floor(bounds.maxBytes / 2));
    if (walked.depth > bounds.maxDepth) throw tooDeep(field, bounds.maxDepth);
    if (walked.tooMany) {
      throw new VcpError("INVALID_INPUT", `${field}: serializes to more than ${bounds.maxBytes} bytes, the limit (limits.input_bytes)`, {
        field,
        rule: "max_bytes",
        limit: bounds.maxBytes,
      });
    }
    text = JSON.stringify(value);
  } catch (err) {
    if (err instanceof VcpError) throw err;
    // BigInt, a throwing getter or toJSON, a revoked proxy: the caller's data, so a clean refusal, not a crash.
    throw new VcpError("INVALID_INPUT", `${field}: must be JSON-serializable (${err instanceof Error ? err.message : String(err)})`, {
      field,
      rule: "json",
    });
  }
  if (text === undefined) throw new VcpError("INVALID_INPUT", `${field}: must be a JSON value`, { field, rule: "json" });
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes > bounds.maxBytes) {
    throw new VcpError("INVALID_INPUT", `${field}: serializes to ${bytes} bytes, above the limit of ${bounds.maxBytes} (limits.input_bytes)`, {
      field,
      rule: "max_bytes",
      bytes,
      limit: bounds.maxBytes,
    });
  }
  // A toJSON may have produced something deeper than the object graph showed: check what will travel.
  if (walked.toJson && jsonTextDepth(text, bounds.maxDepth) > bounds.maxDepth) throw tooDeep(field, bounds.maxDepth);
  return { text, bytes };
}

/**
 * Check several input fields and their total against the bounds (each field alone, then the sum:
 * the whole input crosses into the sandbox as one string). Undefined fields are skipped. A field that
 * is an envelope of caller fields (a chain's `event` carries `candidates`, `transition_metadata`…;
 * `session` carries `metadata`) may nest `envelopes[field]` levels more, so that a value accepted at
 * the depth bound in one place is accepted wherever it travels next. Returns the JSON text of each
 * checked field (what `JSON.stringify` made of it during the check).
 *
 * @example
 * ```ts
 * const texts = assertInputBounds({ context, constitution, event, session }, bounds);
 * texts.context; // '{"text":"hi"}'
 * ```
 */
export function assertInputBounds(
  fields: Readonly<Record<string, unknown>>,
  bounds: JsonBounds,
  envelopes: Readonly<Record<string, number>> = {},
): Record<string, string> {
  let total = 0;
  const sizes: Record<string, number> = {};
  // The JSON text of each field, as checked: a caller that sends the input on (the sandbox frame)
  // splices these instead of serializing the same values again (chain/request-text.ts).
  const texts: Record<string, string> = {};
  for (const [field, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    const extra = envelopes[field] ?? 0;
    const fieldBounds = extra === 0 ? bounds : { maxDepth: bounds.maxDepth + extra, maxBytes: bounds.maxBytes };
    const { text, bytes } = measureBounded(field, value, fieldBounds);
    texts[field] = text;
    sizes[field] = bytes;
    total += bytes;
  }
  if (total > bounds.maxBytes) {
    throw new VcpError("INVALID_INPUT", `input: its fields serialize to ${total} bytes together, above the limit of ${bounds.maxBytes} (limits.input_bytes)`, {
      field: "input",
      rule: "max_bytes",
      bytes: total,
      limit: bounds.maxBytes,
      sizes,
    });
  }
  return texts;
}

function tooDeep(field: string, maxDepth: number): VcpError {
  return new VcpError("INVALID_INPUT", `${field}: nests arrays/objects deeper than ${maxDepth} levels (limits.json_depth)`, {
    field,
    rule: "max_depth",
    limit: maxDepth,
  });
}
