import { describe, expect, test } from "vitest";
import { compilePredicate, DEFAULT_PREDICATE_MAX_COST, PredicateBudgetExceeded, type PredicateMeter, type PredicateOptions } from "../../../src/chain/predicate.js";
import { VcpError } from "../../../src/errors.js";

/** The error compilePredicate throws for `predicate`; fails the test when it compiles. */
function compileError(predicate: unknown, options?: PredicateOptions, basePath?: string): VcpError {
  try {
    compilePredicate(predicate, options, basePath);
  } catch (err) {
    expect(err).toBeInstanceOf(VcpError);
    return err as VcpError;
  }
  throw new Error(`expected INVALID_PREDICATE for ${String(predicate)}`);
}

const leaf = (field: string, operator: string, value: unknown): Record<string, unknown> => ({ field, operator, value });
const nestArrays = (levels: number): unknown => {
  let v: unknown = [];
  for (let i = 1; i < levels; i++) v = [v];
  return v;
};
const nestCompounds = (levels: number): unknown => {
  let node: unknown = leaf("context.a", "eq", 1);
  for (let i = 0; i < levels; i++) node = { combine: "and", children: [node] };
  return node;
};
const cyclic: Record<string, unknown> = { a: 1 };
cyclic.self = cyclic;

// [description, predicate, options, expected details.path, rule pattern]
type BadCase = [string, unknown, PredicateOptions | undefined, string, RegExp];

const BAD: BadCase[] = [
  // node shape
  ["root null", null, undefined, "condition", /plain object/],
  ["root array", [leaf("context.a", "eq", 1)], undefined, "condition", /plain object/],
  ["root string", "context.a == 1", undefined, "condition", /plain object/],
  ["class instance node", new (class Node {})(), undefined, "condition", /plain object/],
  ["empty node", {}, undefined, "condition", /leaf .*or a compound/],
  ["leaf and compound keys", { ...leaf("context.a", "eq", 1), combine: "and" }, undefined, "condition", /not both/],
  ["unknown key", { ...leaf("context.a", "eq", 1), op: "eq" }, undefined, "condition.op", /unknown key/],
  ["unknown non-identifier key", { ...leaf("context.a", "eq", 1), "a b": 1 }, undefined, 'condition["a b"]', /unknown key/],
  ["leaf without value", { field: "context.a", operator: "eq" }, undefined, "condition.value", /requires field, operator and value/],
  ["leaf without field", { operator: "eq", value: 1 }, undefined, "condition.field", /requires field, operator and value/],
  ["leaf without operator", { field: "context.a", value: 1 }, undefined, "condition.operator", /requires field, operator and value/],
  // field
  ["field not a string", leaf(5 as never, "eq", 1), undefined, "condition.field", /field must be a string/],
  ["field empty", leaf("", "eq", 1), undefined, "condition.field", /1 to 256 characters/],
  ["field over 256 chars", leaf(`context.${"a".repeat(250)}`, "eq", 1), undefined, "condition.field", /1 to 256 characters/],
  ["field with 33 segments", leaf(`context${".a".repeat(32)}`, "eq", 1), undefined, "condition.field", /at most 32 segments/],
  ["field doubled dot", leaf("context..a", "eq", 1), undefined, "condition.field", /segments must be non-empty/],
  ["field trailing dot", leaf("context.a.", "eq", 1), undefined, "condition.field", /segments must be non-empty/],
  ["field leading dot", leaf(".context.a", "eq", 1), undefined, "condition.field", /segments must be non-empty/],
  ["field __proto__", leaf("context.__proto__.x", "eq", 1), undefined, "condition.field", /"__proto__"/],
  ["field constructor", leaf("context.constructor", "eq", 1), undefined, "condition.field", /"constructor"/],
  ["field prototype", leaf("context.a.prototype", "eq", 1), undefined, "condition.field", /"prototype"/],
  ["field unknown root", leaf("ctx.dimensions", "eq", 1), undefined, "condition.field", /must start with one of context/],
  // operator
  ["unknown operator", leaf("context.a", "like", 1), undefined, "condition.operator", /operator must be one of eq, neq/],
  ["operator not a string", leaf("context.a", 1 as never, 1), undefined, "condition.operator", /operator must be one of/],
  // eq / neq values must be JSON
  ["value undefined", leaf("context.a", "eq", undefined), undefined, "condition.value", /must be a JSON value/],
  ["value NaN", leaf("context.a", "eq", Number.NaN), undefined, "condition.value", /finite/],
  ["value Infinity", leaf("context.a", "neq", Number.POSITIVE_INFINITY), undefined, "condition.value", /finite/],
  ["value function", leaf("context.a", "eq", () => 1), undefined, "condition.value", /must be a JSON value/],
  ["value bigint", leaf("context.a", "eq", 1n), undefined, "condition.value", /must be a JSON value/],
  ["value Date", leaf("context.a", "eq", new Date(0)), undefined, "condition.value", /plain JSON objects/],
  ["undefined inside array", leaf("context.a", "eq", { a: [1, undefined] }), undefined, "condition.value.a[1]", /must be a JSON value/],
  ["array hole", leaf("context.a", "eq", [1, , 2]), undefined, "condition.value[1]", /holes/],
  ["NaN under odd key", leaf("context.a", "eq", { "a b": Number.NaN }), undefined, 'condition.value["a b"]', /finite/],
  ["cyclic value", leaf("context.a", "eq", cyclic), undefined, "condition.value.self", /cycle/],
  ["value too deep (option)", leaf("context.a", "eq", nestArrays(3)), { maxValueDepth: 2 }, "condition.value[0][0]", /at most 2 deep/],
  ["value too deep (default 32)", leaf("context.a", "eq", nestArrays(33)), undefined, `condition.value${"[0]".repeat(32)}`, /at most 32 deep/],
  ["too many JSON values", leaf("context.a", "eq", [1, 2, 3]), { maxValueNodes: 3 }, "condition.value[2]", /at most 3 JSON values/],
  // ordering operators
  ["gt null", leaf("context.a", "gt", null), undefined, "condition.value", /gt compares with a finite number or a string/],
  ["gte boolean", leaf("context.a", "gte", true), undefined, "condition.value", /gte compares with a finite number or a string/],
  ["lt array", leaf("context.a", "lt", [1]), undefined, "condition.value", /lt compares with a finite number or a string/],
  ["lte NaN", leaf("context.a", "lte", Number.NaN), undefined, "condition.value", /lte compares with a finite number or a string/],
  ["gt -Infinity", leaf("context.a", "gt", Number.NEGATIVE_INFINITY), undefined, "condition.value", /finite number/],
  // in / not_in
  ["in scalar", leaf("context.a", "in", "a"), undefined, "condition.value", /in needs an array/],
  ["not_in null", leaf("context.a", "not_in", null), undefined, "condition.value", /not_in needs an array/],
  ["in too long", leaf("context.a", "in", [1, 2, 3]), { maxInLength: 2 }, "condition.value", /at most 2 elements/],
  ["in over default 1024", leaf("context.a", "in", Array.from({ length: 1025 }, (_, i) => i)), undefined, "condition.value", /at most 1024 elements/],
  ["not_in NaN element", leaf("context.a", "not_in", [1, Number.NaN]), undefined, "condition.value[1]", /finite/],
  // matches
  ["matches number", leaf("context.a", "matches", 5), undefined, "condition.value", /string pattern/],
  ["matches unbalanced", leaf("context.a", "matches", "(ab"), undefined, "condition.value", /valid RE2 syntax/],
  ["matches lookahead", leaf("context.a", "matches", "a(?=b)"), undefined, "condition.value", /valid RE2 syntax/],
  ["matches lookbehind", leaf("context.a", "matches", "(?<=a)b"), undefined, "condition.value", /valid RE2 syntax/],
  ["matches backreference", leaf("context.a", "matches", "(a)\\1"), undefined, "condition.value", /valid RE2 syntax/],
  ["matches repeat over 1000", leaf("context.a", "matches", "a{1001}"), undefined, "condition.value", /valid RE2 syntax/],
  ["pattern too long", leaf("context.a", "matches", "a".repeat(1025)), undefined, "condition.value", /at most 1024 characters/],
  ["pattern too long (option)", leaf("context.a", "matches", "abcd"), { maxPatternLength: 3 }, "condition.value", /at most 3 characters/],
  ["program too large", leaf("context.a", "matches", "(?:.*a){100}"), undefined, "condition.value", /RE2 instructions; at most 256/],
  // compounds
  ["combine xor", { combine: "xor", children: [leaf("context.a", "eq", 1)] }, undefined, "condition.combine", /combine must be and or or/],
  ["combine missing", { children: [leaf("context.a", "eq", 1)] }, undefined, "condition.combine", /requires combine/],
  ["children missing", { combine: "and" }, undefined, "condition.children", /requires a children array/],
  ["children object", { combine: "or", children: { 0: leaf("context.a", "eq", 1) } }, undefined, "condition.children", /children must be an array/],
  ["children empty", { combine: "and", children: [] }, undefined, "condition.children", /must not be empty/],
  ["too many children", { combine: "or", children: [1, 2, 3].map((n) => leaf("context.a", "eq", n)) }, { maxChildren: 2 }, "condition.children", /at most 2 predicates/],
  ["over 64 children", { combine: "or", children: Array.from({ length: 65 }, (_, n) => leaf("context.a", "eq", n)) }, undefined, "condition.children", /at most 64 predicates/],
  ["children hole", { combine: "and", children: [leaf("context.a", "eq", 1), , leaf("context.a", "eq", 1)] }, undefined, "condition.children[1]", /plain object/],
  ["child null", { combine: "and", children: [leaf("context.a", "eq", 1), null] }, undefined, "condition.children[1]", /plain object/],
  ["bad child value", { combine: "and", children: [leaf("context.a", "eq", 1), leaf("context.a", "gt", null)] }, undefined, "condition.children[1].value", /finite number or a string/],
  [
    "bad grandchild field",
    { combine: "or", children: [{ combine: "and", children: [leaf("context.a", "eq", 1), leaf("context.a", "eq", 2), leaf("context..b", "eq", 3)] }] },
    undefined,
    "condition.children[0].children[2].field",
    /non-empty/,
  ],
  ["nesting 17 deep", nestCompounds(16), undefined, `condition${".children[0]".repeat(16)}`, /at most 16 levels/],
  ["nesting (option)", nestCompounds(2), { maxDepth: 2 }, "condition.children[0].children[0]", /at most 2 levels/],
  ["too many nodes", { combine: "and", children: [leaf("context.a", "eq", 1), leaf("context.a", "eq", 2)] }, { maxNodes: 2 }, "condition.children[1]", /at most 2 nodes/],
];

describe("compilePredicate validation", () => {
  test.each(BAD)("%s", (_name, predicate, options, path, rule) => {
    const err = compileError(predicate, options);
    expect(err.code).toBe("INVALID_PREDICATE");
    expect(err.details?.path).toBe(path);
    expect(err.details?.rule).toMatch(rule);
    expect(err.message).toContain(path);
    expect(err.message).toContain(err.details?.rule as string);
  });

  test("the limits at their maxima still compile", () => {
    expect(() => compilePredicate(nestCompounds(15))).not.toThrow();
    expect(() => compilePredicate(leaf(`context${".a".repeat(31)}`, "eq", 1))).not.toThrow();
    expect(() => compilePredicate(leaf(`context.${"a".repeat(248)}`, "eq", 1))).not.toThrow();
    expect(() => compilePredicate(leaf("context.a", "eq", nestArrays(32)))).not.toThrow();
    expect(() => compilePredicate(leaf("context.a", "in", Array.from({ length: 1024 }, (_, i) => i)))).not.toThrow();
    expect(() => compilePredicate(leaf("context.a", "matches", "a".repeat(200)))).not.toThrow();
    expect(() => compilePredicate({ combine: "and", children: Array.from({ length: 64 }, () => leaf("context.a", "eq", 1)) })).not.toThrow();
  });

  test("basePath prefixes every error path", () => {
    const err = compileError({ combine: "and", children: [leaf("context.a", "gt", null)] }, undefined, "hooks[2].condition");
    expect(err.details?.path).toBe("hooks[2].condition.children[0].value");
  });

  test("errors about a value report what was received, as plain serializable data", () => {
    const err = compileError(leaf("context.a", "gt", Number.NaN));
    expect(err.details?.received).toBe("NaN");
    expect(err.message).toContain("(received NaN)");
    const long = compileError(leaf("context.a", "matches", "(".repeat(300)));
    expect(long.details?.received).toMatch(/^"\(+…"$/);
    expect((long.details?.received as string).length).toBeLessThan(80);
    const roundTrip = VcpError.fromJSON(JSON.parse(JSON.stringify(err)) as never);
    expect(roundTrip.details).toEqual(err.details);
  });

  test("valid values of every operator compile", () => {
    for (const [operator, value] of [
      ["eq", null], ["eq", { a: [1, "x", null, true] }], ["neq", "x"], ["gt", 1.5], ["gte", "m"], ["lt", -3], ["lte", ""],
      ["in", []], ["in", [null, 1, "a", [1], { b: 2 }]], ["not_in", ["x"]], ["matches", ""], ["matches", "(?i)^ab+c$"],
    ] as const) {
      expect(typeof compilePredicate(leaf("event.x", operator, value))).toBe("function");
    }
  });
});

const INPUT = {
  context: {
    dimensions: { safety_level: 7, name: "alpha", tags: ["a", "b"], nested: { x: 1, y: [1, { z: null }] }, nothing: null, zero: 0 },
    list: [10, 20, 30],
    keyed: { "0": "zero" },
    empty: {},
  },
  constitution: { id: "c1" },
  event: { severity: "major", previous_state: null, count: 3, text: "hello world", astral: "\u{1F600}", inf: Number.POSITIVE_INFINITY, nan: Number.NaN },
  session: { id: "s1" },
  chain_state: { seen: true },
};

type Case = [string, unknown, boolean];
const CASES: Case[] = [
  // eq / neq
  ["eq number", leaf("context.dimensions.safety_level", "eq", 7), true],
  ["eq number vs string", leaf("context.dimensions.safety_level", "eq", "7"), false],
  ["neq number vs string", leaf("context.dimensions.safety_level", "neq", "7"), true],
  ["eq string", leaf("event.severity", "eq", "major"), true],
  ["eq boolean", leaf("chain_state.seen", "eq", true), true],
  ["eq 0 and -0 (===)", leaf("context.dimensions.zero", "eq", -0), true],
  ["eq NaN in input never", leaf("event.nan", "eq", 0), false],
  ["neq NaN in input", leaf("event.nan", "neq", 0), true],
  ["missing eq null", leaf("context.absent", "eq", null), true],
  ["missing neq null", leaf("context.absent", "neq", null), false],
  ["present null eq null", leaf("event.previous_state", "eq", null), true],
  ["present null neq null (spec §9.3)", leaf("event.previous_state", "neq", null), false],
  ["present value neq null", leaf("event.severity", "neq", null), true],
  ["missing eq 0", leaf("context.absent", "eq", 0), false],
  ["missing neq 0", leaf("context.absent", "neq", 0), true],
  ["deep eq, key order ignored", leaf("context.dimensions.nested", "eq", { y: [1, { z: null }], x: 1 }), true],
  ["deep eq, input has an extra key", leaf("context.dimensions.nested", "eq", { x: 1 }), false],
  ["deep eq, value has an extra key", leaf("context.dimensions.nested", "eq", { x: 1, y: [1, { z: null }], w: 1 }), false],
  ["deep eq, nested null vs missing", leaf("context.dimensions.nested", "eq", { x: 1, y: [1, {}] }), false],
  ["deep eq, arrays by order", leaf("context.dimensions.tags", "eq", ["b", "a"]), false],
  ["deep eq, arrays equal", leaf("context.dimensions.tags", "eq", ["a", "b"]), true],
  ["deep eq, array vs index-keyed object", leaf("context.dimensions.tags", "eq", { 0: "a", 1: "b" }), false],
  ["deep eq, object vs array", leaf("context.keyed", "eq", ["zero"]), false],
  ["deep eq, empty object", leaf("context.empty", "eq", {}), true],
  ["deep eq, {} vs []", leaf("context.empty", "eq", []), false],
  ["deep eq, object vs scalar", leaf("context.dimensions.name", "eq", { 0: "a" }), false],
  // path walking
  ["array index", leaf("context.list.1", "eq", 20), true],
  ["array index 0", leaf("context.dimensions.tags.0", "eq", "a"), true],
  ["array index past end is missing", leaf("context.list.3", "eq", null), true],
  ["non-canonical index is missing", leaf("context.list.01", "eq", 20), false],
  ["negative index is missing", leaf("context.list.-1", "eq", null), true],
  ["array length is missing", leaf("context.list.length", "eq", 3), false],
  ["index into nested arrays and objects", leaf("context.dimensions.nested.y.1.z", "eq", null), true],
  ["digit key on a plain object", leaf("context.keyed.0", "eq", "zero"), true],
  ["inherited toString is missing", leaf("context.toString", "eq", null), true],
  ["inherited toString neq null is false", leaf("context.toString", "neq", null), false],
  ["inherited hasOwnProperty is missing", leaf("context.hasOwnProperty", "in", [null]), true],
  ["string length is missing", leaf("event.text.length", "eq", 11), false],
  ["string index is missing", leaf("session.id.0", "eq", "s"), false],
  ["step through a number is missing", leaf("context.dimensions.safety_level.x", "eq", null), true],
  ["step through null is missing", leaf("context.dimensions.nothing.x", "eq", null), true],
  ["whole root", leaf("constitution", "eq", { id: "c1" }), true],
  // ordering
  ["gte equal", leaf("context.dimensions.safety_level", "gte", 7), true],
  ["gt equal", leaf("context.dimensions.safety_level", "gt", 7), false],
  ["lt", leaf("context.dimensions.safety_level", "lt", 7.5), true],
  ["lte below", leaf("context.dimensions.safety_level", "lte", 6), false],
  ["gt negative", leaf("context.dimensions.zero", "gt", -1), true],
  ["string gt", leaf("context.dimensions.name", "gt", "alp"), true],
  ["string lt", leaf("context.dimensions.name", "lt", "b"), true],
  ["string lte equal", leaf("context.dimensions.name", "lte", "alpha"), true],
  ["UTF-16 code-unit order, not code points", leaf("event.astral", "lt", "\uFFFF"), true],
  ["number vs string bound", leaf("context.dimensions.safety_level", "gt", "1"), false],
  ["string vs number bound", leaf("context.dimensions.name", "lt", 100), false],
  ["numeric string vs number bound", leaf("session.id", "gte", 0), false],
  ["missing gt", leaf("context.absent", "gt", -1e308), false],
  ["missing lt", leaf("context.absent", "lt", 1e308), false],
  ["missing lt string", leaf("context.absent", "lt", "z"), false],
  ["null lt", leaf("context.dimensions.nothing", "lt", 1), false],
  ["null gte", leaf("context.dimensions.nothing", "gte", 0), false],
  ["boolean gt", leaf("chain_state.seen", "gt", 0), false],
  ["array gt", leaf("context.list", "gt", 0), false],
  ["Infinity in input is not finite", leaf("event.inf", "gt", 0), false],
  ["NaN in input lt", leaf("event.nan", "lt", 1e308), false],
  // in / not_in
  ["in", leaf("event.severity", "in", ["minor", "major"]), true],
  ["not_in member", leaf("event.severity", "not_in", ["minor", "major"]), false],
  ["in non-member", leaf("event.severity", "in", ["minor"]), false],
  ["not_in non-member", leaf("event.severity", "not_in", ["minor"]), true],
  ["in type-strict", leaf("event.count", "in", ["3", true]), false],
  ["in number", leaf("event.count", "in", ["3", 3]), true],
  ["boolean not in [1]", leaf("chain_state.seen", "in", [1]), false],
  ["missing in [null]", leaf("context.absent", "in", [null]), true],
  ["missing in [x]", leaf("context.absent", "in", ["x"]), false],
  ["missing not_in [x]", leaf("context.absent", "not_in", ["x"]), true],
  ["missing not_in [null]", leaf("context.absent", "not_in", [null]), false],
  ["in []", leaf("event.severity", "in", []), false],
  ["not_in []", leaf("event.severity", "not_in", []), true],
  ["deep in, key order ignored", leaf("context.dimensions.nested", "in", [1, { y: [1, { z: null }], x: 1 }]), true],
  ["array in, order matters", leaf("context.dimensions.tags", "in", [["b", "a"]]), false],
  ["array in", leaf("context.dimensions.tags", "in", ["a", ["a", "b"]]), true],
  ["object not in scalars", leaf("context.empty", "in", [null, 0, ""]), false],
  ["0 in [-0]", leaf("context.dimensions.zero", "in", [-0]), true],
  ["NaN in input is in nothing", leaf("event.nan", "in", [0, null]), false],
  // matches
  ["matches searches", leaf("event.text", "matches", "wor"), true],
  ["matches anchored start", leaf("event.text", "matches", "^wor"), false],
  ["matches anchored whole", leaf("event.text", "matches", "^hello world$"), true],
  ["matches inline flag", leaf("event.text", "matches", "(?i)HELLO"), true],
  ["matches empty pattern", leaf("event.text", "matches", ""), true],
  ["matches number is false", leaf("event.count", "matches", "3"), false],
  ["matches missing is false", leaf("context.absent", "matches", ".*"), false],
  ["matches null is false", leaf("event.previous_state", "matches", ".*"), false],
  ["matches array is false", leaf("context.dimensions.tags", "matches", "a"), false],
  ["matches astral with unicode class", leaf("event.astral", "matches", "^\\p{So}$"), true],
  // compounds
  ["and all true", { combine: "and", children: [leaf("event.count", "eq", 3), leaf("event.severity", "eq", "major")] }, true],
  ["and one false", { combine: "and", children: [leaf("event.count", "eq", 3), leaf("event.severity", "eq", "minor")] }, false],
  ["or one true", { combine: "or", children: [leaf("event.count", "eq", 4), leaf("event.severity", "eq", "major")] }, true],
  ["or none true", { combine: "or", children: [leaf("event.count", "eq", 4), leaf("event.severity", "eq", "minor")] }, false],
  ["single-child and", { combine: "and", children: [leaf("event.count", "eq", 4)] }, false],
  ["single-child or", { combine: "or", children: [leaf("event.count", "eq", 3)] }, true],
  [
    "spec §9.5 example",
    { combine: "or", children: [leaf("event.severity", "eq", "major"), leaf("event.severity", "eq", "critical")] },
    true,
  ],
  [
    "nested compounds",
    { combine: "and", children: [{ combine: "or", children: [leaf("event.count", "gt", 5), leaf("event.count", "lt", 4)] }, leaf("chain_state.seen", "eq", true)] },
    true,
  ],
  [
    "nested compounds false",
    { combine: "and", children: [{ combine: "or", children: [leaf("event.count", "gt", 5), leaf("event.count", "lt", 2)] }, leaf("chain_state.seen", "eq", true)] },
    false,
  ],
];

describe("compiled predicate semantics", () => {
  test.each(CASES)("%s", (_name, predicate, expected) => {
    expect(compilePredicate(predicate)(INPUT)).toBe(expected);
  });

  test("chain_state may be an accessor, and or/and stop at the deciding child", () => {
    let reads = 0;
    const input = {
      context: {},
      constitution: {},
      event: { severity: "major" },
      session: { id: "s" },
      get chain_state() {
        reads++;
        return { k: 1 };
      },
    };
    const or = compilePredicate({ combine: "or", children: [leaf("event.severity", "eq", "major"), leaf("chain_state.k", "eq", 1)] });
    const and = compilePredicate({ combine: "and", children: [leaf("event.severity", "eq", "minor"), leaf("chain_state.k", "eq", 1)] });
    const reads1 = compilePredicate(leaf("chain_state.k", "eq", 1));
    expect(or(input)).toBe(true);
    expect(and(input)).toBe(false);
    expect(reads).toBe(0);
    expect(reads1(input)).toBe(true);
    expect(reads).toBe(1);
  });

  test("inherited (e.g. prototype-polluted) properties never resolve", () => {
    const context = Object.create({ polluted: 1, dimensions: { level: 9 } }) as Record<string, unknown>;
    const input = { context, constitution: {}, event: {}, session: {}, chain_state: {} };
    expect(compilePredicate(leaf("context.polluted", "eq", 1))(input)).toBe(false);
    expect(compilePredicate(leaf("context.dimensions.level", "gt", 0))(input)).toBe(false);
    const rootless = Object.create({ event: { x: 1 } }) as object;
    expect(compilePredicate(leaf("event.x", "eq", 1))(rootless)).toBe(false);
  });

  test("an own property holding undefined is missing", () => {
    const input = { context: { u: undefined }, constitution: {}, event: {}, session: {}, chain_state: {} };
    expect(compilePredicate(leaf("context.u", "eq", null))(input)).toBe(true);
    expect(compilePredicate(leaf("context.u", "in", [null]))(input)).toBe(true);
    expect(compilePredicate(leaf("context", "eq", {}))(input)).toBe(false);
  });

  test("an own __proto__ key in data compares like any other key", () => {
    const data = JSON.parse('{"__proto__": {"x": 1}}') as unknown;
    const input = { context: { data }, constitution: {}, event: {}, session: {}, chain_state: {} };
    expect(compilePredicate(leaf("context.data", "eq", JSON.parse('{"__proto__": {"x": 1}}')))(input)).toBe(true);
    expect(compilePredicate(leaf("context.data", "eq", { x: 1 }))(input)).toBe(false);
    expect(compilePredicate(leaf("context.data", "eq", {}))(input)).toBe(false);
  });

  test("cyclic input data does not hang deep equality", () => {
    const context: Record<string, unknown> = { a: 1 };
    context.self = context;
    const input = { context, constitution: {}, event: {}, session: {}, chain_state: {} };
    expect(compilePredicate(leaf("context", "eq", { a: 1, self: { a: 1, self: {} } }))(input)).toBe(false);
    expect(compilePredicate(leaf("context.self.self.self.a", "eq", 1))(input)).toBe(true);
  });

  test("mutating the raw predicate after compiling changes nothing", () => {
    const raw = { combine: "or", children: [leaf("event.tags", "in", [["a"], "b"]), leaf("event.o", "eq", { k: 1 })] };
    const compiled = compilePredicate(raw);
    const input = { context: {}, constitution: {}, event: { tags: ["a"], o: { k: 2 } }, session: {}, chain_state: {} };
    expect(compiled(input)).toBe(true);
    raw.combine = "and";
    (((raw.children[0] as { value: unknown[] }).value[0]) as string[]).push("z");
    (raw.children[1] as { value: { k: number } }).value.k = 2;
    raw.children.length = 0;
    expect(compiled(input)).toBe(true);
  });
});

describe("matches is bounded", () => {
  const at = (s: string) => ({ context: {}, constitution: {}, event: { s }, session: {}, chain_state: {} });
  const attack = `${"a".repeat(65_535)}!`;
  const allA = "a".repeat(65_536);

  // Classic catastrophic-backtracking patterns: RE2 answers in linear time, so only the boolean is asserted.
  test.each([
    ["(a+)+$", attack, false],
    ["(a+)+$", allA, true],
    ["(a|aa)+$", attack, false],
    ["(a|aa)+$", allA, true],
    ["^(a+)+b", allA, false],
    ["(.*a){20}", allA, true],
    ["(.*a){20}!", allA, false],
    ["(.*a){20}!", attack, true],
    ["(\\w+\\s?)+$", attack, false],
  ] as const)("%s on a 64 KiB attacker string", (pattern, subject, expected) => {
    expect(subject.length).toBeLessThanOrEqual(65_536);
    expect(compilePredicate(leaf("event.s", "matches", pattern))(at(subject))).toBe(expected);
  });

  test("a string over maxMatchInputLength is false even when the pattern would match", () => {
    expect(compilePredicate(leaf("event.s", "matches", "a"))(at("a".repeat(65_537)))).toBe(false);
    const capped = compilePredicate(leaf("event.s", "matches", "^a+$"), { maxMatchInputLength: 5 });
    expect(capped(at("aaaaa"))).toBe(true);
    expect(capped(at("aaaaaa"))).toBe(false);
  });
});

describe("predicate cost (maxCost)", () => {
  const matchesLeaves = (n: number, field = "event.s") => Array.from({ length: n }, (_, i) => leaf(field, "matches", `needle-${i}$`));
  const at = (s: string) => ({ context: {}, constitution: {}, event: { s }, session: {}, chain_state: {} });

  test("four matches leaves at the default input length fit; a fifth is refused where it goes over, naming the limit", () => {
    expect(DEFAULT_PREDICATE_MAX_COST).toBe(327_680);
    expect(() => compilePredicate({ combine: "or", children: matchesLeaves(4) })).not.toThrow();
    const err = compileError({ combine: "or", children: matchesLeaves(5) });
    expect(err.code).toBe("INVALID_PREDICATE");
    expect(err.details?.path).toBe("condition.children[4]");
    expect(err.details?.rule).toMatch(/at most 327680 units \(limit maxCost: each matches leaf costs maxMatchInputLength = 65536/);
  });

  test("a thousand matches leaves spread over nested compounds are refused before their patterns are compiled", () => {
    // 16 `or`s of 62 leaves each: under maxNodes (1024) and maxChildren (64), far over maxCost.
    const wide = { combine: "and", children: Array.from({ length: 16 }, () => ({ combine: "or", children: matchesLeaves(62) })) };
    const started = performance.now();
    const err = compileError(wide);
    expect(err.details?.path).toBe("condition.children[0].children[4]");
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test("the cost follows maxMatchInputLength: a runtime that reads shorter strings may have more matches leaves", () => {
    expect(() => compilePredicate({ combine: "or", children: matchesLeaves(60) }, { maxMatchInputLength: 4096 })).not.toThrow();
    expect(compileError({ combine: "or", children: matchesLeaves(5) }, { maxCost: 100_000, maxMatchInputLength: 20_000 }).details?.rule).toMatch(/at most 100000 units/);
  });

  test("other nodes and values count one unit each", () => {
    const big = leaf("context.a", "in", Array.from({ length: 1000 }, (_, i) => i));
    // 1 node + 1 array + 1000 elements = 1002 units.
    expect(() => compilePredicate(big, { maxCost: 1002 })).not.toThrow();
    expect(compileError(big, { maxCost: 1001 }).details?.path).toBe("condition.value[999]");
  });

  test("at run time a meter is charged what is actually scanned, and an evaluation that would overrun it throws before scanning", () => {
    const fires = compilePredicate({ combine: "or", children: matchesLeaves(4) });
    const meter: PredicateMeter = { left: 100_000 };
    // Each leaf scans the 40,000-character string: the third would overrun 100,000 units.
    expect(() => fires(at("x".repeat(40_000)), meter)).toThrow(PredicateBudgetExceeded);
    expect(meter.left).toBe(0);
    // A short field costs little: the same meter size evaluates it many times.
    const small: PredicateMeter = { left: 100_000 };
    for (let i = 0; i < 100; i++) expect(fires(at("needle-3"), small)).toBe(true);
    expect(small.left).toBeGreaterThan(90_000);
    // Without a meter the compile-time cap is the bound.
    expect(fires(at("x".repeat(40_000)))).toBe(false);
  });
});
