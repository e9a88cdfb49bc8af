import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { compilePredicate } from "../../../src/chain/predicate.js";
import { VcpError } from "../../../src/errors.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Leaf = { field: string; operator: string; value: unknown };
type Node = Leaf | { combine: "and" | "or"; children: Node[] };

const json = fc.jsonValue({ maxDepth: 4 }) as fc.Arbitrary<Json>;

/** A HookInput whose slots are arbitrary JSON, so fields below hit values of every type. */
const hookInput = fc.record({
  context: fc.record({ a: json, b: fc.record({ c: json }), list: fc.array(json, { maxLength: 3 }) }, { requiredKeys: [] }),
  constitution: json,
  event: fc.oneof(json, fc.record({ x: json, s: fc.string() }, { requiredKeys: [] })),
  session: fc.record({ id: fc.string() }),
  chain_state: fc.dictionary(fc.constantFrom("k", "x", "a"), json),
});

const field = fc.constantFrom(
  "context.a",
  "context.b.c",
  "context.list.0",
  "context.list.2",
  "context.a.0",
  "context.a.x",
  "context.missing.q",
  "event.x",
  "event.s",
  "event",
  "constitution.id",
  "chain_state.k",
  "session.id",
);

const scalar = fc.oneof(fc.constant(null), fc.boolean(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 4 }));
const bound = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 4 }));
const pattern = fc.constantFrom("", "a", "^a", "a$", "(?i)x", "[0-9]+", "^$", "(a|b)*c", "\\pL");

const leafArb: fc.Arbitrary<Leaf> = fc.oneof(
  fc.record({ field, operator: fc.constantFrom("eq", "neq"), value: fc.oneof(scalar, json) }),
  fc.record({ field, operator: fc.constantFrom("gt", "gte", "lt", "lte"), value: bound }),
  fc.record({ field, operator: fc.constantFrom("in", "not_in"), value: fc.array(fc.oneof(scalar, json), { maxLength: 4 }) }),
  fc.record({ field, operator: fc.constant("matches"), value: pattern }),
);

const nodeArb: fc.Arbitrary<Node> = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    leafArb,
    fc.record({ combine: fc.constantFrom("and" as const, "or" as const), children: fc.array(tie("node"), { minLength: 1, maxLength: 3 }) }),
  ),
})).node;

/** Raw values that are predicate-shaped but often wrong, to reach the deep validation paths. */
const nearPredicate: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small" },
    json,
    fc.record(
      {
        field: fc.oneof(field, fc.string(), json),
        operator: fc.oneof(fc.constantFrom("eq", "neq", "gt", "gte", "lt", "lte", "in", "not_in", "matches"), json),
        value: fc.oneof(json, pattern, fc.string()),
      },
      { requiredKeys: [] },
    ),
    fc.record(
      {
        combine: fc.oneof(fc.constantFrom("and", "or"), json),
        children: fc.oneof(fc.array(tie("node"), { maxLength: 3 }), json),
        extra: json,
      },
      { requiredKeys: [] },
    ),
  ),
})).node;

// Semantics, not limits: the cost cap (tested in predicate.test.ts) would refuse random trees with many matches leaves.
const SEMANTICS_ONLY = { maxCost: Number.MAX_SAFE_INTEGER };
const eval1 = (node: unknown, input: object): boolean => compilePredicate(node, SEMANTICS_ONLY)(input);

describe("predicate properties", () => {
  test("neq is exactly !eq", () => {
    fc.assert(
      fc.property(field, json, hookInput, (f, value, input) => {
        expect(eval1({ field: f, operator: "neq", value }, input)).toBe(!eval1({ field: f, operator: "eq", value }, input));
      }),
    );
  });

  test("not_in is exactly !in", () => {
    fc.assert(
      fc.property(field, fc.array(json, { maxLength: 5 }), hookInput, (f, value, input) => {
        expect(eval1({ field: f, operator: "not_in", value }, input)).toBe(!eval1({ field: f, operator: "in", value }, input));
      }),
    );
  });

  test("in [v] is eq v", () => {
    fc.assert(
      fc.property(field, json, hookInput, (f, value, input) => {
        expect(eval1({ field: f, operator: "in", value: [value] }, input)).toBe(eval1({ field: f, operator: "eq", value }, input));
      }),
    );
  });

  test("and [p] and or [p] are p", () => {
    fc.assert(
      fc.property(nodeArb, hookInput, (p, input) => {
        const direct = eval1(p, input);
        expect(eval1({ combine: "and", children: [p] }, input)).toBe(direct);
        expect(eval1({ combine: "or", children: [p] }, input)).toBe(direct);
      }),
    );
  });

  test("or of eq/neq leaves is the negated and of their negations (De Morgan)", () => {
    const eqLeaf = fc.record({ field, operator: fc.constantFrom("eq", "neq"), value: json });
    fc.assert(
      fc.property(fc.array(eqLeaf, { minLength: 1, maxLength: 4 }), hookInput, (leaves, input) => {
        const negated = leaves.map((l) => ({ ...l, operator: l.operator === "eq" ? "neq" : "eq" }));
        expect(eval1({ combine: "or", children: leaves }, input)).toBe(!eval1({ combine: "and", children: negated }, input));
      }),
    );
  });

  test("eq is reflexive: any JSON value placed at a path equals itself", () => {
    fc.assert(
      fc.property(fc.jsonValue() as fc.Arbitrary<Json>, fc.constantFrom("context.p", "event.p.q", "chain_state.p.0.r"), (value, f) => {
        // A separate copy, so equality is structural, not by reference.
        const copy = JSON.parse(JSON.stringify(value)) as Json;
        const [root, ...rest] = f.split(".") as [string, ...string[]];
        let slot: Json = copy;
        for (let i = rest.length - 1; i >= 0; i--) slot = rest[i] === "0" ? [slot] : { [rest[i]!]: slot };
        const input: Record<string, Json> = { context: {}, constitution: {}, event: {}, session: {}, chain_state: {} };
        input[root] = slot;
        expect(eval1({ field: f, operator: "eq", value }, input)).toBe(true);
        expect(eval1({ field: f, operator: "neq", value }, input)).toBe(false);
        expect(eval1({ field: f, operator: "in", value: [value] }, input)).toBe(true);
      }),
    );
  });

  test("gt/lt are antisymmetric on numbers and agree with JavaScript's order", () => {
    const num = fc.double({ noNaN: true, noDefaultInfinity: true });
    fc.assert(
      fc.property(num, num, (a, b) => {
        const input = { context: { n: a }, constitution: {}, event: {}, session: {}, chain_state: {} };
        const at = (operator: string) => eval1({ field: "context.n", operator, value: b }, input);
        expect(at("gt") && at("lt")).toBe(false);
        expect(at("gt")).toBe(a > b);
        expect(at("lt")).toBe(a < b);
        expect(at("gte")).toBe(at("gt") || at("eq"));
        expect(at("lte")).toBe(!at("gt"));
        // Swapping the sides swaps gt and lt.
        const swapped = { context: { n: b }, constitution: {}, event: {}, session: {}, chain_state: {} };
        expect(eval1({ field: "context.n", operator: "lt", value: a }, swapped)).toBe(at("gt"));
      }),
    );
  });

  test("gt/lt on strings follow UTF-16 code-unit order", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (a, b) => {
        const input = { context: { s: a }, constitution: {}, event: {}, session: {}, chain_state: {} };
        expect(eval1({ field: "context.s", operator: "gt", value: b }, input)).toBe(a > b);
        expect(eval1({ field: "context.s", operator: "lte", value: b }, input)).toBe(a <= b);
      }),
    );
  });

  test("compile either succeeds or throws VcpError INVALID_PREDICATE, for any JSON-ish input", () => {
    const raw = fc.oneof(nearPredicate, fc.jsonValue(), fc.anything({ maxDepth: 3 }));
    fc.assert(
      fc.property(raw, (candidate) => {
        try {
          expect(typeof compilePredicate(candidate)).toBe("function");
        } catch (err) {
          expect(err).toBeInstanceOf(VcpError);
          const e = err as VcpError;
          expect(e.code).toBe("INVALID_PREDICATE");
          expect(String(e.details?.path)).toMatch(/^condition/);
          expect(typeof e.details?.rule).toBe("string");
        }
      }),
      { numRuns: 500 },
    );
  });

  test("valid predicates compile and evaluate to a boolean on any JSON input, without throwing", () => {
    fc.assert(
      fc.property(nodeArb, fc.oneof(hookInput, fc.jsonValue().filter((v) => typeof v === "object" && v !== null)), (p, input) => {
        expect(typeof eval1(p, input as object)).toBe("boolean");
      }),
      { numRuns: 500 },
    );
  });
});
