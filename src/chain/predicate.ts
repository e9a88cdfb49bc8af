/**
 * Hook conditions (spec §4.4): compiled once when a hook is registered or a plan is built, evaluated
 * per event on the hot path.
 *
 * ## Shape
 *
 * A predicate node is exactly one of
 *
 * ```
 * leaf:      { field: "context.dimensions.safety_level", operator: "gte", value: 7 }
 * compound:  { combine: "and" | "or", children: [node, …] }
 * ```
 *
 * - A leaf has all three of `field`, `operator` and `value`. `value` is required even when it is
 *   `null` (write `value: null` to test for absence), so a forgotten value is an error, not a
 *   silent comparison with null.
 * - `field` is a dot path into the hook's input. For a VCP hook that is the HookInput: its first
 *   segment is one of `context`, `constitution`, `event`, `session`, `chain_state` (anything else can
 *   never resolve, so it is rejected as a typo). For an event-profile hook it is the agent's native
 *   input (`tool_input.command`), checked against the event's input schema ({@link ConditionFields}).
 *   At most 32 non-empty segments and 256 characters; the segments `__proto__`, `prototype` and
 *   `constructor` are rejected.
 * - A compound has a non-empty `children` array of at most `maxChildren` (64) nodes. The root is at
 *   depth 1 and each compound adds one; deeper than `maxDepth` (16) is an error. A whole predicate
 *   has at most `maxNodes` (1024) nodes.
 * - Keys other than the five above, or a node with both leaf and compound keys, are errors.
 * - Values are JSON: null, booleans, finite numbers, strings, dense arrays and plain objects, nested
 *   at most `maxValueDepth` (32) deep and with at most `maxValueNodes` (16384) JSON values in the
 *   whole predicate. No `undefined`, functions, NaN, ±Infinity, BigInt, cycles or class instances.
 *
 * Every violation throws `VcpError("INVALID_PREDICATE")` with `details.path` (e.g.
 * `condition.children[1].value`), `details.rule` (the broken rule in words) and, when a value was
 * the problem, `details.received` (a short, string rendering of it).
 *
 * ## Resolving `field`
 *
 * Each segment steps into the current value, which must be a non-null object. Only own properties
 * are followed (`Object.hasOwn`), so `context.toString` or `context.__proto__` never resolve to
 * anything inherited. On an array a segment must be a canonical index (`0`, `1`, … without leading
 * zeros) below the length; `length` and other names do not resolve on arrays. Any step that fails
 * makes the field *missing*; an own property whose value is `undefined` is also missing.
 *
 * ## Operators
 *
 * | operator        | true when                                                                  |
 * |-----------------|-----------------------------------------------------------------------------|
 * | `eq`            | the field (missing ⇒ null) deep-equals `value`                              |
 * | `neq`           | exactly `!eq`; so a missing field is `neq` any non-null value                |
 * | `gt` `gte` `lt` `lte` | both sides are finite numbers, or both are strings (UTF-16 code-unit order); any other pairing, missing or null ⇒ false |
 * | `in`            | the field (missing ⇒ null) deep-equals some element of the `value` array    |
 * | `not_in`        | exactly `!in`                                                               |
 * | `matches`       | the field is a string of at most `maxMatchInputLength` (65536) UTF-16 units and the RE2 pattern `value` matches somewhere in it (search, not full match: anchor with `^…$` for that) |
 *
 * Deep equality is JSON equality: objects are equal when they have the same own enumerable keys
 * (in any order) with equal values, arrays when they have equal elements in order, numbers by `===`
 * (so `0` equals `-0` and NaN equals nothing), strings by code units.
 *
 * `combine: "and"` is true when every child is true, `"or"` when any is; both stop at the first child
 * that decides the result, in array order.
 *
 * ## Why `matches` is bounded
 *
 * Conditions run on the host thread before any sandbox is involved, on input an attacker may shape
 * (context, event). Patterns are RE2 syntax (no backreferences or lookaround) compiled with re2js,
 * whose automata run in time linear in the input — no catastrophic backtracking — but the constant
 * grows with the compiled program. So a pattern is also limited to `maxPatternLength` (1024)
 * characters and `maxProgramSize` (256) RE2 instructions, and a longer input string is simply
 * `false`: the work of one `matches` is O(maxMatchInputLength × maxProgramSize) in the worst case,
 * whatever the pattern and input. Inline flags such as `(?i)` and `(?s)` are available.
 *
 * ## Why a whole predicate is bounded: cost
 *
 * One `matches` is bounded, but a predicate may hold hundreds of them, each scanning the same 64 KiB
 * field: 1,000 leaves took 1.8 s of host CPU per chain, before the hook even ran. So a predicate has
 * a **cost**, counted in the units of work it may do at most on any input:
 *
 * - a `matches` leaf costs `maxMatchInputLength` (65536): the longest string it may scan;
 * - every other node costs 1, and every JSON value in a `value` 1 more (deep equality walks them).
 *
 * A predicate may cost at most `maxCost` (327680 = 5 × 65536: four `matches` leaves at the default
 * input length and room for everything else; a fifth is refused). Checked at compile time, so a
 * too-expensive condition is refused at build and at install with `INVALID_PREDICATE`.
 *
 * Each hook is bounded that way, but a bundle may have many hooks. So at run time every evaluation
 * charges a {@link PredicateMeter}: a `matches` leaf the length it actually scans, other leaves their
 * fixed cost. The executor keeps one meter per bundle per chain holding `maxCost` units: a bundle's
 * conditions together cost at most that per chain, and one bundle's conditions never use up
 * another's. An evaluation that would overrun its meter stops with {@link PredicateBudgetExceeded}.
 *
 * @module
 */
import { RE2JS } from "re2js";
import { VcpError } from "../errors.js";
import { PREDICATE_OPERATORS, type CompiledPredicate, type ConditionFields, type PredicateMeter, type PredicateOperator } from "../model/predicate.js";

// The compiled forms are shared record types (model/predicate.ts): the plan and the profiles carry them.
export type { CompiledPredicate, ConditionFields, PredicateMeter } from "../model/predicate.js";
import { IDENTIFIER } from "../model/names.js";

/** Thrown by an evaluation that would overrun its {@link PredicateMeter}; the meter stays exhausted. */
export class PredicateBudgetExceeded extends Error {
  override readonly name = "PredicateBudgetExceeded";
}

/** Default {@link PredicateOptions.maxCost}: four `matches` leaves at the default input length, plus the rest. */
export const DEFAULT_PREDICATE_MAX_COST = 5 * 65_536;

// An evaluation without a meter is bounded by the compile-time cost alone.
const UNMETERED: PredicateMeter = { left: Number.POSITIVE_INFINITY };

/** Charge `cost` units; throws when the meter would go below zero. */
function charge(meter: PredicateMeter, cost: number): void {
  // SECURITY: checked before the work is done, so an exhausted meter stops the next leaf, not after it.
  if (meter.left < cost) {
    meter.left = 0;
    throw new PredicateBudgetExceeded(`condition evaluation needs ${cost} more cost units than its meter has left`);
  }
  meter.left -= cost;
}

/**
 * Limits applied by {@link compilePredicate}. All are counts; each defaults as documented.
 *
 * @example
 * ```ts
 * const strict: PredicateOptions = { maxMatchInputLength: 4096, maxDepth: 4 };
 * ```
 */
export interface PredicateOptions {
  /** Longest string (UTF-16 units) `matches` examines; longer strings make it false. Default 65536. */
  maxMatchInputLength?: number;
  /** Longest `matches` pattern, in characters. Default 1024. */
  maxPatternLength?: number;
  /** Most RE2 program instructions a `matches` pattern may compile to. Default 256. */
  maxProgramSize?: number;
  /** Deepest nesting of predicate nodes; the root is depth 1. Default 16. */
  maxDepth?: number;
  /** Most children of one compound. Default 64. */
  maxChildren?: number;
  /** Most nodes (leaves and compounds) in one predicate. Default 1024. */
  maxNodes?: number;
  /** Most elements of an `in` / `not_in` array. Default 1024. */
  maxInLength?: number;
  /** Deepest nesting of arrays/objects inside a `value`; a scalar is depth 0. Default 32. */
  maxValueDepth?: number;
  /** Most JSON values (counting every nested element) across all `value`s of a predicate. Default 16384. */
  maxValueNodes?: number;
  /**
   * Most cost units one predicate may have: each `matches` leaf costs `maxMatchInputLength`, every
   * other node 1, every JSON value in a `value` 1. Default 327680 ({@link DEFAULT_PREDICATE_MAX_COST}).
   */
  maxCost?: number;
}

const DEFAULTS = {
  maxMatchInputLength: 65_536,
  maxPatternLength: 1024,
  maxProgramSize: 256,
  maxDepth: 16,
  maxChildren: 64,
  maxNodes: 1024,
  maxInLength: 1024,
  maxValueDepth: 32,
  maxValueNodes: 16_384,
  maxCost: DEFAULT_PREDICATE_MAX_COST,
} as const satisfies Required<PredicateOptions>;

type Limits = { -readonly [K in keyof typeof DEFAULTS]: number };

const MAX_FIELD_LENGTH = 256;
const MAX_FIELD_SEGMENTS = 32;
const ROOT_FIELDS: ReadonlySet<string> = new Set(["context", "constitution", "event", "session", "chain_state"]);

/** VCP hooks (spec §4.4): the first segment is one of the HookInput's five parts. */
export const VCP_CONDITION_FIELDS: ConditionFields = Object.freeze({
  refuse: (keys: readonly string[]) =>
    ROOT_FIELDS.has(keys[0]!) ? undefined : "field must start with one of context, constitution, event, session, chain_state",
});
// SECURITY: these never name data; rejecting them keeps paths from even looking like prototype access.
const FORBIDDEN_SEGMENTS: ReadonlySet<string> = new Set(["__proto__", "prototype", "constructor"]);
const NODE_KEYS: ReadonlySet<string> = new Set(["field", "operator", "value", "combine", "children"]);
const OPERATORS: ReadonlySet<string> = new Set(PREDICATE_OPERATORS);
const CANONICAL_INDEX = /^(?:0|[1-9][0-9]{0,8})$/;

// ---------------------------------------------------------------------------------------------
// Compiled JSON values. A `value` is copied into this form at compile time, so the compiled
// predicate keeps no reference to the caller's object (later mutation cannot change it) and
// deep equality walks precomputed key lists instead of calling Object.keys per event.
// ---------------------------------------------------------------------------------------------

class JsonArray {
  constructor(readonly items: readonly JsonValue[]) {}
}
class JsonObject {
  constructor(
    readonly keys: readonly string[],
    readonly values: readonly JsonValue[],
  ) {}
}
type JsonScalar = null | boolean | number | string;
type JsonValue = JsonScalar | JsonArray | JsonObject;

/** Returned by the path walk when a field does not resolve; never a JSON value. */
const MISSING: unique symbol = Symbol("missing");

interface CompiledPath {
  readonly keys: readonly string[];
  /** The segment as an array index, or -1 when it is not a canonical index. */
  readonly indices: readonly number[];
}

// ---------------------------------------------------------------------------------------------
// Hot path
// ---------------------------------------------------------------------------------------------

/** Walk `path` from the HookInput. Own properties only; arrays by canonical index only. */
function resolve(input: object, path: CompiledPath): unknown {
  const { keys, indices } = path;
  let current: unknown = input;
  for (let i = 0; i < keys.length; i++) {
    if (typeof current !== "object" || current === null) return MISSING;
    if (Array.isArray(current)) {
      const index = indices[i]!;
      // SECURITY: own elements only; `length`, methods and inherited indices never resolve.
      if (index < 0 || index >= current.length || !Object.hasOwn(current, index)) return MISSING;
      current = current[index];
    } else {
      const key = keys[i]!;
      // SECURITY: own properties only, so nothing inherited (toString, __proto__, polluted keys) is read.
      if (!Object.hasOwn(current, key)) return MISSING;
      current = (current as Record<string, unknown>)[key];
    }
  }
  return current === undefined ? MISSING : current;
}

/** JSON deep equality of a compiled value and an input value. Recursion is bounded by `expected`. */
function jsonEquals(expected: JsonValue, actual: unknown): boolean {
  if (expected === null || typeof expected !== "object") return expected === actual;
  if (typeof actual !== "object" || actual === null) return false;
  if (expected instanceof JsonArray) {
    if (!Array.isArray(actual)) return false;
    const items = expected.items;
    if (actual.length !== items.length) return false;
    for (let i = 0; i < items.length; i++) {
      if (!jsonEquals(items[i]!, actual[i])) return false;
    }
    return true;
  }
  if (Array.isArray(actual)) return false;
  const { keys, values } = expected;
  let ownKeys = 0;
  for (const key in actual) {
    if (Object.hasOwn(actual, key)) ownKeys++;
  }
  if (ownKeys !== keys.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    if (!Object.hasOwn(actual, key)) return false;
    if (!jsonEquals(values[i]!, (actual as Record<string, unknown>)[key])) return false;
  }
  return true;
}

function isScalar(value: unknown): value is JsonScalar {
  return value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean";
}

// Every leaf and compound below is a closure built once by compilePredicate; evaluation creates none.

function compileEq(path: CompiledPath, expected: JsonValue, cost: number): CompiledPredicate {
  if (expected === null) {
    return (input, meter = UNMETERED) => {
      charge(meter, cost);
      const actual = resolve(input, path);
      return actual === null || actual === MISSING;
    };
  }
  if (typeof expected !== "object") {
    return (input, meter = UNMETERED) => {
      charge(meter, cost);
      return resolve(input, path) === expected;
    };
  }
  return (input, meter = UNMETERED) => {
    charge(meter, cost);
    return jsonEquals(expected, resolve(input, path));
  };
}

function compileIn(path: CompiledPath, members: readonly JsonValue[], cost: number): CompiledPredicate {
  // Scalars go in a Set (SameValueZero: agrees with === because no member can be NaN); arrays and
  // objects are compared one by one.
  const scalars = new Set<JsonScalar>();
  const structured: (JsonArray | JsonObject)[] = [];
  for (const member of members) {
    if (member === null || typeof member !== "object") scalars.add(member);
    else structured.push(member);
  }
  return (input, meter = UNMETERED) => {
    charge(meter, cost);
    const found = resolve(input, path);
    const actual = found === MISSING ? null : found;
    if (isScalar(actual)) return scalars.has(actual);
    if (typeof actual !== "object") return false;
    for (let i = 0; i < structured.length; i++) {
      if (jsonEquals(structured[i]!, actual)) return true;
    }
    return false;
  };
}

/** An order comparison costs its node and its value: 2 units. */
const ORDER_COST = 2;

function compileOrder(path: CompiledPath, operator: "gt" | "gte" | "lt" | "lte", bound: number | string): CompiledPredicate {
  const compare = compareWith(path, operator, bound);
  return (input, meter = UNMETERED) => {
    charge(meter, ORDER_COST);
    return compare(input);
  };
}

function compareWith(path: CompiledPath, operator: "gt" | "gte" | "lt" | "lte", bound: number | string): (input: object) => boolean {
  if (typeof bound === "number") {
    switch (operator) {
      case "gt":
        return (input) => {
          const v = resolve(input, path);
          return typeof v === "number" && Number.isFinite(v) && v > bound;
        };
      case "gte":
        return (input) => {
          const v = resolve(input, path);
          return typeof v === "number" && Number.isFinite(v) && v >= bound;
        };
      case "lt":
        return (input) => {
          const v = resolve(input, path);
          return typeof v === "number" && Number.isFinite(v) && v < bound;
        };
      case "lte":
        return (input) => {
          const v = resolve(input, path);
          return typeof v === "number" && Number.isFinite(v) && v <= bound;
        };
    }
  }
  // JavaScript's relational operators compare strings by UTF-16 code units.
  switch (operator) {
    case "gt":
      return (input) => {
        const v = resolve(input, path);
        return typeof v === "string" && v > bound;
      };
    case "gte":
      return (input) => {
        const v = resolve(input, path);
        return typeof v === "string" && v >= bound;
      };
    case "lt":
      return (input) => {
        const v = resolve(input, path);
        return typeof v === "string" && v < bound;
      };
    case "lte":
      return (input) => {
        const v = resolve(input, path);
        return typeof v === "string" && v <= bound;
      };
  }
}

function compileMatches(path: CompiledPath, regex: RE2JS, maxInput: number): CompiledPredicate {
  return (input, meter = UNMETERED) => {
    const v = resolve(input, path);
    // SECURITY: bounded input × bounded program ⇒ bounded time on the host thread, whatever the event holds.
    if (typeof v !== "string" || v.length > maxInput) {
      charge(meter, 1);
      return false;
    }
    // SECURITY: the scan is paid for before it runs: the string's length, from this bundle's meter.
    charge(meter, 1 + v.length);
    return regex.test(v);
  };
}

function compileAnd(children: readonly CompiledPredicate[]): CompiledPredicate {
  if (children.length === 1) return children[0]!;
  return (input, meter = UNMETERED) => {
    for (let i = 0; i < children.length; i++) {
      if (!children[i]!(input, meter)) return false;
    }
    return true;
  };
}

function compileOr(children: readonly CompiledPredicate[]): CompiledPredicate {
  if (children.length === 1) return children[0]!;
  return (input, meter = UNMETERED) => {
    for (let i = 0; i < children.length; i++) {
      if (children[i]!(input, meter)) return true;
    }
    return false;
  };
}

// ---------------------------------------------------------------------------------------------
// Compile time: validation of the untrusted, operator-written value
// ---------------------------------------------------------------------------------------------

interface Budget {
  nodes: number;
  values: number;
  /** Cost units so far (see "cost" in the module comment). */
  cost: number;
  /** Which field paths the input this predicate will see can have. */
  fields: ConditionFields;
}

/** Add `units` to the predicate's cost, refusing it where it first goes over `maxCost`. */
function spend(budget: Budget, units: number, path: string, limits: Limits): void {
  budget.cost += units;
  if (budget.cost > limits.maxCost) {
    fail(
      path,
      `a predicate may cost at most ${limits.maxCost} units (limit maxCost: each matches leaf costs maxMatchInputLength = ${limits.maxMatchInputLength}, every other node and every JSON value 1); it goes over here`,
    );
  }
}

/** Marks "no offending value to report", distinct from an offending `undefined`. */
const NOTHING: unique symbol = Symbol("nothing");

function fail(path: string, rule: string, received: unknown = NOTHING): never {
  if (received === NOTHING) {
    throw new VcpError("INVALID_PREDICATE", `Invalid predicate at ${path}: ${rule}`, { path, rule });
  }
  const shown = describeReceived(received);
  throw new VcpError("INVALID_PREDICATE", `Invalid predicate at ${path}: ${rule} (received ${shown})`, {
    path,
    rule,
    received: shown,
  });
}

/** A short, always-serializable rendering of an offending value for error details. */
function describeReceived(value: unknown): string {
  switch (typeof value) {
    case "string":
      return JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);
    case "number":
    case "boolean":
      return String(value);
    case "bigint":
      return `${value}n`;
    case "undefined":
      return "undefined";
    case "function":
      return "function";
    case "symbol":
      return "symbol";
    default:
      if (value === null) return "null";
      if (Array.isArray(value)) return `array(${value.length})`;
      return "object";
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}


function keyPath(base: string, key: string): string {
  return IDENTIFIER.regex.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`;
}

/**
 * Validate that `raw` is JSON and copy it into the compiled form. `ancestors` holds the arrays and
 * objects on the current branch, to name a cycle as such rather than as excessive depth.
 */
function compileJson(raw: unknown, path: string, depth: number, ancestors: object[], limits: Limits, budget: Budget): JsonValue {
  if (++budget.values > limits.maxValueNodes) {
    fail(path, `the values of a predicate may hold at most ${limits.maxValueNodes} JSON values in total`);
  }
  spend(budget, 1, path, limits);
  switch (typeof raw) {
    case "string":
    case "boolean":
      return raw;
    case "number":
      if (!Number.isFinite(raw)) fail(path, "numbers must be finite (NaN and Infinity are not JSON)", raw);
      return raw;
    case "object":
      break;
    default:
      fail(path, "must be a JSON value (null, boolean, finite number, string, array or plain object)", raw);
  }
  if (raw === null) return null;
  if (ancestors.includes(raw)) fail(path, "a value must not contain itself (cycle)", raw);
  if (depth >= limits.maxValueDepth) fail(path, `values may nest arrays and objects at most ${limits.maxValueDepth} deep`, raw);
  ancestors.push(raw);
  let compiled: JsonValue;
  if (Array.isArray(raw)) {
    const items: JsonValue[] = [];
    for (let i = 0; i < raw.length; i++) {
      const itemPath = `${path}[${i}]`;
      if (!Object.hasOwn(raw, i)) fail(itemPath, "arrays must not have holes (undefined is not JSON)");
      items.push(compileJson(raw[i], itemPath, depth + 1, ancestors, limits, budget));
    }
    compiled = new JsonArray(Object.freeze(items));
  } else {
    if (!isPlainObject(raw)) fail(path, "objects must be plain JSON objects, not class instances", raw);
    const keys = Object.keys(raw);
    const values: JsonValue[] = [];
    for (const key of keys) values.push(compileJson(raw[key], keyPath(path, key), depth + 1, ancestors, limits, budget));
    compiled = new JsonObject(Object.freeze(keys), Object.freeze(values));
  }
  ancestors.pop();
  return compiled;
}

function compileField(raw: unknown, path: string, fields: ConditionFields): CompiledPath {
  if (typeof raw !== "string") fail(path, "field must be a string dot path into the hook input", raw);
  if (raw.length === 0 || raw.length > MAX_FIELD_LENGTH) {
    fail(path, `field must be 1 to ${MAX_FIELD_LENGTH} characters long`, raw);
  }
  const keys = raw.split(".");
  if (keys.length > MAX_FIELD_SEGMENTS) fail(path, `field may have at most ${MAX_FIELD_SEGMENTS} segments`, raw);
  const indices: number[] = [];
  for (const key of keys) {
    if (key.length === 0) fail(path, "field segments must be non-empty (no leading, trailing or doubled dots)", raw);
    if (FORBIDDEN_SEGMENTS.has(key)) fail(path, `field must not use the segment "${key}"`, raw);
    indices.push(CANONICAL_INDEX.test(key) ? Number(key) : -1);
  }
  const refused = fields.refuse(keys);
  if (refused !== undefined) fail(path, refused, raw);
  return { keys: Object.freeze(keys), indices: Object.freeze(indices) };
}

function compilePattern(raw: unknown, path: string, limits: Limits): RE2JS {
  if (typeof raw !== "string") fail(path, "matches needs a string pattern (RE2 syntax)", raw);
  if (raw.length > limits.maxPatternLength) {
    fail(path, `pattern may be at most ${limits.maxPatternLength} characters`, raw);
  }
  let regex: RE2JS;
  try {
    regex = RE2JS.compile(raw);
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    fail(path, `pattern must be valid RE2 syntax: ${reason.slice(0, 200)}`, raw);
  }
  const size = regex.programSize();
  if (size > limits.maxProgramSize) {
    fail(path, `pattern compiles to ${size} RE2 instructions; at most ${limits.maxProgramSize} are allowed`, raw);
  }
  return regex;
}

function compileLeaf(node: Record<string, unknown>, path: string, limits: Limits, budget: Budget): CompiledPredicate {
  for (const key of ["field", "operator", "value"] as const) {
    if (!Object.hasOwn(node, key)) {
      const hint = key === "value" ? " (use value: null to compare with null)" : "";
      fail(`${path}.${key}`, `a leaf predicate requires field, operator and value${hint}`);
    }
  }
  const fieldPath = compileField(node.field, `${path}.field`, budget.fields);
  const operator = node.operator;
  if (typeof operator !== "string" || !OPERATORS.has(operator)) {
    fail(`${path}.operator`, `operator must be one of ${PREDICATE_OPERATORS.join(", ")}`, operator);
  }
  const op = operator as PredicateOperator;
  const valuePath = `${path}.value`;
  const raw = node.value;
  // What this leaf charges at run time: its node and its values (matches: what it scans instead).
  const valuesBefore = budget.values;
  const leafCost = () => 1 + budget.values - valuesBefore;
  switch (op) {
    case "eq": {
      const expected = compileJson(raw, valuePath, 0, [], limits, budget);
      return compileEq(fieldPath, expected, leafCost());
    }
    case "neq": {
      const eq = compileEq(fieldPath, compileJson(raw, valuePath, 0, [], limits, budget), leafCost());
      return (input, meter) => !eq(input, meter);
    }
    case "gt":
    case "gte":
    case "lt":
    case "lte": {
      if (!(typeof raw === "string" || (typeof raw === "number" && Number.isFinite(raw)))) {
        fail(valuePath, `${op} compares with a finite number or a string`, raw);
      }
      budget.values++;
      spend(budget, 1, valuePath, limits);
      return compileOrder(fieldPath, op, raw);
    }
    case "in":
    case "not_in": {
      if (!Array.isArray(raw)) fail(valuePath, `${op} needs an array of JSON values`, raw);
      if (raw.length > limits.maxInLength) {
        fail(valuePath, `${op} arrays may have at most ${limits.maxInLength} elements`, raw);
      }
      const members = compileJson(raw, valuePath, 0, [], limits, budget) as JsonArray;
      const isIn = compileIn(fieldPath, members.items, leafCost());
      return op === "in" ? isIn : (input, meter) => !isIn(input, meter);
    }
    case "matches":
      budget.values++;
      // Before the pattern is compiled: a predicate over its cost compiles no more regexes.
      spend(budget, limits.maxMatchInputLength, path, limits);
      return compileMatches(fieldPath, compilePattern(raw, valuePath, limits), limits.maxMatchInputLength);
  }
}

function compileNode(raw: unknown, path: string, depth: number, limits: Limits, budget: Budget): CompiledPredicate {
  if (!isPlainObject(raw)) fail(path, "a predicate must be a plain object", raw);
  if (depth > limits.maxDepth) fail(path, `predicates may nest at most ${limits.maxDepth} levels deep`);
  if (++budget.nodes > limits.maxNodes) fail(path, `a predicate may have at most ${limits.maxNodes} nodes`);
  spend(budget, 1, path, limits);
  for (const key of Object.keys(raw)) {
    if (!NODE_KEYS.has(key)) {
      fail(keyPath(path, key), "unknown key; a predicate node has only field, operator, value, combine and children");
    }
  }
  const isLeaf = Object.hasOwn(raw, "field") || Object.hasOwn(raw, "operator") || Object.hasOwn(raw, "value");
  const isCompound = Object.hasOwn(raw, "combine") || Object.hasOwn(raw, "children");
  if (isLeaf && isCompound) {
    fail(path, "a predicate is either a leaf (field, operator, value) or a compound (combine, children), not both");
  }
  if (isLeaf) return compileLeaf(raw, path, limits, budget);
  if (!isCompound) {
    fail(path, "a predicate must be a leaf (field, operator, value) or a compound (combine, children)");
  }
  const combine = raw.combine;
  if (!Object.hasOwn(raw, "combine")) fail(`${path}.combine`, "a compound predicate requires combine (and or or)");
  if (combine !== "and" && combine !== "or") fail(`${path}.combine`, "combine must be and or or", combine);
  if (!Object.hasOwn(raw, "children")) fail(`${path}.children`, "a compound predicate requires a children array");
  const children = raw.children;
  if (!Array.isArray(children)) fail(`${path}.children`, "children must be an array of predicates", children);
  if (children.length === 0) fail(`${path}.children`, "children must not be empty", children);
  if (children.length > limits.maxChildren) {
    fail(`${path}.children`, `children may have at most ${limits.maxChildren} predicates`, children);
  }
  const compiled: CompiledPredicate[] = [];
  for (let i = 0; i < children.length; i++) {
    const childPath = `${path}.children[${i}]`;
    if (!Object.hasOwn(children, i)) fail(childPath, "a predicate must be a plain object", undefined);
    compiled.push(compileNode(children[i], childPath, depth + 1, limits, budget));
  }
  Object.freeze(compiled);
  return combine === "and" ? compileAnd(compiled) : compileOr(compiled);
}

function resolveLimits(options: PredicateOptions | undefined): Limits {
  const limits: Limits = { ...DEFAULTS };
  if (options !== undefined) {
    for (const key of Object.keys(DEFAULTS) as (keyof Limits)[]) {
      const value = options[key];
      if (value !== undefined) limits[key] = value;
    }
  }
  return limits;
}

/**
 * Validate an operator-written predicate (spec §4.4) and compile it into a function evaluated per
 * event. All validation and all regex compilation happen here; the returned function only walks
 * paths and compares. The compiled function keeps no reference to `predicate`.
 *
 * @param predicate the raw, untrusted condition (parsed JSON or YAML)
 * @param options limits; see {@link PredicateOptions} for defaults
 * @param basePath how errors name the predicate's root, e.g. `"condition"` or `"hooks[3].condition"`
 * @param fields which field paths the input can have: VCP's HookInput roots by default
 * @throws VcpError `INVALID_PREDICATE` with `details.path`, `details.rule` and, for bad values, `details.received`
 *
 * @example
 * ```ts
 * const fires = compilePredicate({
 *   combine: "or",
 *   children: [
 *     { field: "event.severity", operator: "eq", value: "major" },
 *     { field: "event.severity", operator: "eq", value: "critical" },
 *   ],
 * });
 * fires({ context: {}, constitution: {}, event: { severity: "critical" }, session: {}, chain_state: {} }); // true
 * ```
 */
export function compilePredicate(predicate: unknown, options?: PredicateOptions, basePath = "condition", fields: ConditionFields = VCP_CONDITION_FIELDS): CompiledPredicate {
  const limits = resolveLimits(options);
  return compileNode(predicate, basePath, 1, limits, { nodes: 0, values: 0, cost: 0, fields });
}
