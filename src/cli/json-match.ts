/**
 * JSON comparison for `vcp-hooks test` expectations and `vcp-hooks fire` traces: subset and exact
 * matching with readable mismatches, and the changed keys between two documents.
 *
 * Subset semantics (like vitest's toMatchObject): every key of the expected object must match the
 * actual value; arrays match element-wise and must have the same length; scalars compare with
 * `Object.is`-like equality. Three matchers may stand in for any expected value:
 *   { $matches: "<regex>" }   a string matching the regular expression
 *   { $absent: true }         the key is missing
 *   { $type: "string" | "number" | "boolean" | "object" | "array" | "null" }
 */
import { escapeControl } from "./common.js";

export interface Mismatch {
  /** Dot path from the document root, e.g. `context.user.email` or `rules[2].text`. */
  path: string;
  /** What was expected, in words (`"[email]"`, `a string matching /x/`, `no such key`). */
  expected: string;
  /** What was found, in words. */
  actual: string;
}

const MISSING = Symbol("missing");
type Actual = unknown | typeof MISSING;

/** Mismatches of `actual` against the subset `expected`; empty when it matches. */
export function matchSubset(expected: unknown, actual: unknown, path: string): Mismatch[] {
  const out: Mismatch[] = [];
  compare(expected, actual, path, false, out);
  return out;
}

/** Mismatches of `actual` against `expected` exactly (extra keys count); empty when equal. */
export function matchExact(expected: unknown, actual: unknown, path: string): Mismatch[] {
  const out: Mismatch[] = [];
  compare(expected, actual, path, true, out);
  return out;
}

function compare(expected: unknown, actual: Actual, path: string, exact: boolean, out: Mismatch[]): void {
  const matcher = asMatcher(expected);
  if (matcher !== undefined) {
    const problem = matcher(actual);
    if (problem !== undefined) out.push({ path, ...problem });
    return;
  }
  if (actual === MISSING) {
    out.push({ path, expected: show(expected), actual: "no such key" });
    return;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) {
      out.push({ path, expected: `an array ${show(expected)}`, actual: show(actual) });
      return;
    }
    if (actual.length !== expected.length) {
      out.push({ path, expected: `${expected.length} item(s) ${show(expected)}`, actual: `${actual.length} item(s) ${show(actual)}` });
      return;
    }
    expected.forEach((item, i) => compare(item, actual[i], `${path}[${i}]`, exact, out));
    return;
  }
  if (isObject(expected)) {
    if (!isObject(actual)) {
      out.push({ path, expected: `an object ${show(expected)}`, actual: show(actual) });
      return;
    }
    for (const [key, value] of Object.entries(expected)) {
      compare(value, Object.hasOwn(actual, key) ? actual[key] : MISSING, join(path, key), exact, out);
    }
    if (exact) {
      for (const key of Object.keys(actual)) {
        if (!Object.hasOwn(expected, key)) out.push({ path: join(path, key), expected: "no such key", actual: show(actual[key]) });
      }
    }
    return;
  }
  if (!jsonEqual(expected, actual)) out.push({ path, expected: show(expected), actual: show(actual) });
}

type Matcher = (actual: Actual) => { expected: string; actual: string } | undefined;

function asMatcher(expected: unknown): Matcher | undefined {
  if (!isObject(expected)) return undefined;
  const keys = Object.keys(expected);
  if (keys.length !== 1) return undefined;
  if (keys[0] === "$matches" && typeof expected["$matches"] === "string") {
    const re = new RegExp(expected["$matches"]);
    return (actual) =>
      typeof actual === "string" && re.test(actual) ? undefined : { expected: `a string matching ${String(re)}`, actual: actual === MISSING ? "no such key" : show(actual) };
  }
  if (keys[0] === "$absent" && expected["$absent"] === true) {
    return (actual) => (actual === MISSING ? undefined : { expected: "no such key", actual: show(actual) });
  }
  if (keys[0] === "$type" && typeof expected["$type"] === "string") {
    const want = expected["$type"];
    return (actual) => {
      if (actual === MISSING) return { expected: `a value of type ${want}`, actual: "no such key" };
      return typeName(actual) === want ? undefined : { expected: `a value of type ${want}`, actual: `${typeName(actual)} ${show(actual)}` };
    };
  }
  return undefined;
}

/** One changed key between two JSON documents (before/after of `vcp-hooks fire`). */
export interface Change {
  path: string;
  kind: "added" | "removed" | "changed";
  before?: unknown;
  after?: unknown;
}

/**
 * The keys that differ between `before` and `after`, descending into objects; lists of records with
 * an `id` (constitution rules) are compared by id, other lists item by item when their lengths are
 * equal and whole otherwise.
 */
export function changedKeys(before: unknown, after: unknown, path: string): Change[] {
  const out: Change[] = [];
  walk(before, after, path, out);
  return out;
}

function walk(before: unknown, after: unknown, path: string, out: Change[]): void {
  if (Array.isArray(before) && Array.isArray(after)) {
    // Lists of records with ids (constitution rules) are compared by id; equal-length lists item by item.
    const byId = (list: unknown[]) => (list.every((x) => isObject(x) && typeof x["id"] === "string") ? new Map(list.map((x) => [(x as { id: string }).id, x])) : undefined);
    const a = byId(before);
    const b = byId(after);
    if (a !== undefined && b !== undefined && a.size === before.length && b.size === after.length) {
      for (const [id, item] of a) {
        const p = `${path}[id=${id}]`;
        if (!b.has(id)) out.push({ path: p, kind: "removed", before: item });
        else walk(item, b.get(id), p, out);
      }
      for (const [id, item] of b) if (!a.has(id)) out.push({ path: `${path}[id=${id}]`, kind: "added", after: item });
      return;
    }
    if (before.length === after.length) {
      before.forEach((item, i) => walk(item, after[i], `${path}[${i}]`, out));
      return;
    }
  }
  if (isObject(before) && isObject(after)) {
    for (const key of Object.keys(before)) {
      const p = join(path, key);
      if (!Object.hasOwn(after, key)) out.push({ path: p, kind: "removed", before: before[key] });
      else walk(before[key], after[key], p, out);
    }
    for (const key of Object.keys(after)) {
      if (!Object.hasOwn(before, key)) out.push({ path: join(path, key), kind: "added", after: after[key] });
    }
    return;
  }
  if (!jsonEqual(before, after)) out.push({ path, kind: "changed", before, after });
}

/** Deep equality of JSON values (key order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  }
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/** A JSON value in one line, cut at `max` characters. */
export function show(value: unknown, max = 120): string {
  if (value === MISSING) return "no such key";
  let text: string;
  try {
    text = value === undefined ? "undefined" : JSON.stringify(value);
  } catch {
    text = String(value);
  }
  // JSON.stringify leaves DEL and C1 controls raw (and String() leaves everything): spell them out.
  text = escapeControl(text);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function join(path: string, key: string): string {
  const part = /^[A-Za-z_$][\w$-]*$/.test(key) ? key : JSON.stringify(key);
  return path === "" ? part : /^[A-Za-z_$]/.test(part) ? `${path}.${part}` : `${path}[${part}]`;
}
