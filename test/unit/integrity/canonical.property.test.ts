import canonicalizeLib from "canonicalize";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { canonicalJson } from "../../../src/integrity/canonical.js";

// The `canonicalize` package (what canonicalJson used before it was written out) is the oracle: every
// digest, signature and audit hash computed before stays valid only if the bytes are identical.
const oracle = canonicalizeLib as unknown as (value: unknown) => string | undefined;

describe("canonicalJson (RFC 8785)", () => {
  test("byte-identical to the canonicalize package for every JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        expect(canonicalJson(value)).toBe(oracle(value));
      }),
      { numRuns: 2000 },
    );
  });

  test("byte-identical for full-Unicode strings and keys, including lone surrogates", () => {
    const text = fc.oneof(fc.string({ unit: "grapheme" }), fc.string({ unit: "binary" }), fc.string({ unit: "binary-ascii" }));
    const tree = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, text, fc.double(), fc.integer(), fc.boolean(), fc.constant(null), tie("array"), tie("object")),
      array: fc.array(tie("node"), { maxLength: 5 }),
      object: fc.dictionary(text, tie("node"), { maxKeys: 6 }),
    })).node;
    fc.assert(
      fc.property(tree, (value) => {
        if (containsNonFinite(value)) return; // refused, below
        expect(canonicalJson(value)).toBe(oracle(value));
      }),
      { numRuns: 2000 },
    );
  });

  test.each([
    ["key order by UTF-16 code units, not code points", { "\u{1F600}": 1, "\uFFFF": 2, é: 3, z: 4, a: 5, "": 6 }],
    ["RFC 8785 §3.2.2.3 numbers", [0, -0, 1e21, 1e-7, 5e-324, 1.7976931348623157e308, 0.1 + 0.2, -1.5e-10, 123456789012345680000]],
    ["escapes", ["\u0000\u001f\"\\/\b\f\n\r\t\u2028\u2029\u007f", "\uD800", "\uDFFF x \uD83D\uDE00"]],
    ["undefined members dropped, undefined items null, toJSON honoured", { a: undefined, b: [undefined, 1], c: new Date(0), d: { toJSON: () => ({ y: 1, x: 2 }) } }],
    ["nested", { b: { d: [{ z: 1, y: [] }, {}], c: null }, a: "x" }],
  ])("%s", (_name, value) => {
    expect(canonicalJson(value)).toBe(oracle(value));
  });

  test("refuses what has no canonical form, like the package", () => {
    expect(() => canonicalJson(Number.NaN)).toThrow("NaN is not allowed");
    expect(() => canonicalJson({ a: [Number.POSITIVE_INFINITY] })).toThrow("Infinity is not allowed");
    expect(() => canonicalJson({ a: 1n })).toThrow(TypeError);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
    // The package wrote `"f":undefined` here, which is not JSON.
    expect(() => canonicalJson({ f: () => 1 })).toThrow(TypeError);
  });
});

function containsNonFinite(value: unknown): boolean {
  if (typeof value === "number") return !Number.isFinite(value);
  if (Array.isArray(value)) return value.some(containsNonFinite);
  if (value !== null && typeof value === "object") return Object.values(value).some(containsNonFinite);
  return false;
}
