import { describe, expect, test } from "vitest";
import { changedKeys, jsonEqual, matchExact, matchSubset } from "../../../src/cli/json-match.js";

describe("matchSubset", () => {
  test.each([
    ["equal scalars", { a: 1 }, { a: 1, b: 2 }, []],
    ["nested subset", { u: { n: "x" } }, { u: { n: "x", m: 1 } }, []],
    ["arrays element-wise", [{ id: "a" }], [{ id: "a", t: 1 }], []],
    ["$matches", { h: { $matches: "^sha256:" } }, { h: "sha256:ab" }, []],
    ["$absent", { h: { $absent: true } }, { g: 1 }, []],
    ["$type", { n: { $type: "number" }, a: { $type: "array" }, z: { $type: "null" } }, { n: 3, a: [], z: null }, []],
  ])("%s matches", (_name, expected, actual, mismatches) => {
    expect(matchSubset(expected, actual, "x")).toEqual(mismatches);
  });

  test("a mismatch names the path, the expected and the actual value", () => {
    expect(matchSubset({ user: { note: "[email]" } }, { user: { note: "a@b.org" } }, "context")).toEqual([
      { path: "context.user.note", expected: '"[email]"', actual: '"a@b.org"' },
    ]);
    expect(matchSubset({ rules: [{ id: "a" }] }, { rules: [{ id: "a" }, { id: "b" }] }, "c")[0]).toMatchObject({ path: "c.rules", expected: expect.stringContaining("1 item(s)") });
    expect(matchSubset({ k: 1 }, {}, "c")).toEqual([{ path: "c.k", expected: "1", actual: "no such key" }]);
    expect(matchSubset({ h: { $absent: true } }, { h: 1 }, "a")).toEqual([{ path: "a.h", expected: "no such key", actual: "1" }]);
    expect(matchSubset({ h: { $matches: "^x" } }, { h: "y" }, "a")[0]?.expected).toBe("a string matching /^x/");
    expect(matchSubset({ "odd key": 1 }, { "odd key": 2 }, "a")[0]?.path).toBe('a["odd key"]');
  });
});

describe("matchExact", () => {
  test("extra keys are mismatches; key order does not matter", () => {
    expect(matchExact({ a: 1, b: { c: 2 } }, { b: { c: 2 }, a: 1 }, "x")).toEqual([]);
    expect(matchExact({ a: 1 }, { a: 1, b: 2 }, "x")).toEqual([{ path: "x.b", expected: "no such key", actual: "2" }]);
  });
});

describe("changedKeys", () => {
  test("reports added, removed and changed keys with before and after", () => {
    expect(changedKeys({ a: 1, b: { c: "x" }, gone: true }, { a: 1, b: { c: "y" }, d: [1] }, "context")).toEqual([
      { path: "context.b.c", kind: "changed", before: "x", after: "y" },
      { path: "context.gone", kind: "removed", before: true },
      { path: "context.d", kind: "added", after: [1] },
    ]);
  });

  test("lists of records with ids are compared by id", () => {
    const before = { rules: [{ id: "a", text: "1" }, { id: "b", text: "2" }] };
    const after = { rules: [{ id: "a", text: "1!" }, { id: "c", text: "3" }] };
    expect(changedKeys(before, after, "constitution")).toEqual([
      { path: "constitution.rules[id=a].text", kind: "changed", before: "1", after: "1!" },
      { path: "constitution.rules[id=b]", kind: "removed", before: { id: "b", text: "2" } },
      { path: "constitution.rules[id=c]", kind: "added", after: { id: "c", text: "3" } },
    ]);
  });

  test("no change, no entries", () => {
    expect(changedKeys({ a: [1, 2], b: null }, { b: null, a: [1, 2] }, "x")).toEqual([]);
    expect(jsonEqual({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBe(true);
    expect(jsonEqual([1], [1, 2])).toBe(false);
  });
});
