import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  assertInputBounds,
  DEFAULT_JSON_BOUNDS,
  jsonTextDepth,
  jsonTextExceeds,
  jsonValueDepth,
  resolveJsonBounds,
  serializeBounded,
} from "../../../src/model/json-bounds.js";
import { VcpError } from "../../../src/errors.js";

function nested(depth: number, kind: "object" | "array" = "object"): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = kind === "object" ? { d: v } : [v];
  return v;
}

function refusal(fn: () => unknown): VcpError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(VcpError);
    return err as VcpError;
  }
  throw new Error("expected a refusal");
}

describe("depth measures", () => {
  test.each([
    ["1", 0],
    ['"[[["', 0],
    ["{}", 1],
    ["[]", 1],
    ['{"a":[1,{"b":"]}"}]}', 3],
    ['{"a":"\\"[[[["}', 1],
    ['[[],[[]],{"x":[[]]}]', 4],
  ])("jsonTextDepth(%s) = %i", (text, depth) => {
    expect(jsonTextDepth(text, 64)).toBe(depth);
    expect(jsonValueDepth(JSON.parse(text), 64)).toBe(depth);
  });

  test("both stop one level past the limit instead of walking a hostile nesting to its end", () => {
    const text = "[".repeat(1_000_000) + "]".repeat(1_000_000);
    expect(jsonTextDepth(text, 64)).toBe(65);
    expect(jsonValueDepth(nested(1_000_000, "array"), 64)).toBe(65);
  });

  test("a cycle is infinitely deep, not a stack overflow", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    expect(jsonValueDepth(cyclic, 64)).toBe(65);
  });

  test("text and value depth agree on any JSON value", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
        const text = JSON.stringify(value);
        expect(jsonTextDepth(text, 100)).toBe(jsonValueDepth(JSON.parse(text), 100));
      }),
    );
  });

  test("jsonTextExceeds says what the scan says, also when brackets inside strings loosen its count", () => {
    // Fewer brackets than the limit (no scan), more brackets but shallow (scan), and deeper than the limit.
    const inStrings = JSON.stringify({ a: "[[[[{{{{", b: ["]]]]", { c: "{[{[" }] });
    for (const [text, limit] of [[inStrings, 2], [inStrings, 3], [inStrings, 40], ['[[[["x"]]]]', 3], ['[[[["x"]]]]', 4], ["{}", 0], ['"{"', 0]] as const) {
      expect(jsonTextExceeds(text, limit), `${text} > ${limit}`).toBe(jsonTextDepth(text, limit) > limit);
    }
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 0, max: 9 }), (value, limit) => {
        const text = JSON.stringify(value);
        expect(jsonTextExceeds(text, limit)).toBe(jsonTextDepth(text, limit) > limit);
      }),
    );
  });

  test("the scanner's source calls no method, so the isolate can run it after bundle code replaced built-ins", () => {
    const source = String(jsonTextDepth);
    expect(source).not.toMatch(/\.\s*(?!length\b)[A-Za-z_$][\w$]*\s*\(/);
    // Evaluated on its own (as the prelude embeds it), with String.prototype sabotaged.
    const fn = new Function(`"use strict"; return (${source});`)() as typeof jsonTextDepth;
    const saved = String.prototype.charCodeAt;
    try {
      String.prototype.charCodeAt = () => 0;
      expect(fn('{"a":[[1]]}', 64)).toBe(3);
    } finally {
      String.prototype.charCodeAt = saved;
    }
  });
});

describe("serializeBounded / assertInputBounds", () => {
  const bounds = resolveJsonBounds({ maxDepth: 8, maxBytes: 4096 });

  test("within bounds: returns the JSON text", () => {
    expect(serializeBounded("context", { a: nested(7) }, bounds)).toBe(JSON.stringify({ a: nested(7) }));
  });

  test.each([
    ["too deep", { a: nested(8) }, "max_depth", /context: nests arrays\/objects deeper than 8 levels \(limits\.json_depth\)/],
    ["6,000 deep (the review's fire attack)", nested(6000), "max_depth", /deeper than 8/],
    ["too large", { text: "x".repeat(5000) }, "max_bytes", /context: serializes to 5011 bytes, above the limit of 4096 \(limits\.input_bytes\)/],
    ["multi-byte characters count as bytes", { text: "é".repeat(2100) }, "max_bytes", /above the limit of 4096/],
    ["BigInt", { n: 1n }, "json", /context: must be JSON-serializable/],
    ["a throwing getter", { get boom() { throw new Error("nope"); } }, "json", /must be JSON-serializable \(nope\)/],
  ])("%s is INVALID_INPUT naming the field and the limit", (_what, value, rule, message) => {
    const err = refusal(() => serializeBounded("context", value, bounds));
    expect(err.code).toBe("INVALID_INPUT");
    expect(err.message).toMatch(message);
    expect(err.details).toMatchObject({ field: "context", rule });
  });

  test("a cycle is refused as too deep, before JSON.stringify sees it", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    expect(refusal(() => serializeBounded("metadata", cyclic, bounds)).details).toMatchObject({ field: "metadata", rule: "max_depth" });
  });

  test("a toJSON that returns something deeper than the object is caught on the text", () => {
    const sneaky = { toJSON: () => nested(50) };
    expect(refusal(() => serializeBounded("event", { sneaky }, bounds)).details).toMatchObject({ field: "event", rule: "max_depth" });
  });

  test("the fields' total is bounded too, and names every field's size", () => {
    const half = { t: "x".repeat(2500) };
    const err = refusal(() => assertInputBounds({ context: half, constitution: half, event: undefined }, bounds));
    expect(err.details).toMatchObject({ field: "input", rule: "max_bytes", sizes: { context: 2508, constitution: 2508 } });
  });

  test("defaults: depth 64, 1 MiB", () => {
    expect(DEFAULT_JSON_BOUNDS).toEqual({ maxDepth: 64, maxBytes: 1024 * 1024 });
  });

  test.each([
    [{ maxDepth: 1 }, "inputLimits.maxDepth"],
    [{ maxDepth: 5000 }, "inputLimits.maxDepth"],
    [{ maxBytes: 10 }, "inputLimits.maxBytes"],
    [{ maxBytes: 1.5 }, "inputLimits.maxBytes"],
  ])("resolveJsonBounds(%j) is INVALID_CONFIG naming %s", (options, field) => {
    const err = refusal(() => resolveJsonBounds(options));
    expect(err.code).toBe("INVALID_CONFIG");
    expect(err.details).toMatchObject({ field });
  });
});

test("the total counts UTF-8 bytes, not characters", () => {
  const bounds = resolveJsonBounds({ maxDepth: 8, maxBytes: 4096 });
  // Each field: 1,108 characters, 2,208 bytes (under the per-field limit); together over it.
  const field = { t: "é".repeat(1100) };
  expect(() => assertInputBounds({ context: field, constitution: field }, bounds)).toThrowError(/input: its fields serialize to 4416 bytes together/);
});

test("shared references cannot make the check itself explode: the walk has a node budget from maxBytes", () => {
  const bounds = resolveJsonBounds({ maxDepth: 64, maxBytes: 4096 });
  let dag: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < 40; i++) dag = { x: dag, y: dag }; // 2^40 nodes as JSON, 41 objects in memory
  // Without the budget this would walk (and JSON.stringify) 2^40 objects: the test would never end.
  expect(() => serializeBounded("context", dag, bounds)).toThrowError(/context: serializes to more than 4096 bytes/);
});
