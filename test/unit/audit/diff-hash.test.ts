import jsonPatch from "fast-json-patch";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { diffForAudit, hashInput } from "../../../src/audit/index.js";
import { capAuditDiff } from "../../../src/audit/diff.js";

describe("diffForAudit (RFC 6902)", () => {
  test("a constitution edit becomes a minimal patch, not the full content", () => {
    const before = { id: "c", rules: [{ id: "r1", text: "a" }, { id: "r2", text: "b" }], context: { user: "x" } };
    const after = { id: "c", rules: [{ id: "r1", text: "a" }, { id: "r2", text: "B" }, { id: "r3", text: "c" }], context: { user: "x" } };
    const patch = diffForAudit(before, after);
    expect(patch).toHaveLength(2);
    expect(patch).toEqual(expect.arrayContaining([
      { op: "add", path: "/rules/2", value: { id: "r3", text: "c" } },
      { op: "replace", path: "/rules/1/text", value: "B" },
    ]));
    expect(JSON.stringify(patch)).not.toContain('"user"');
    expect(diffForAudit(before, structuredClone(before))).toEqual([]);
  });

  test("values in the patch are copies", () => {
    const after = { a: { deep: 1 } };
    const patch = diffForAudit({}, after);
    after.a.deep = 2;
    expect(patch).toEqual([{ op: "add", path: "/a", value: { deep: 1 } }]);
  });

  test("non-container or mismatched sides are one whole-document replace", () => {
    expect(diffForAudit("a", "b")).toEqual([{ op: "replace", path: "", value: "b" }]);
    expect(diffForAudit({ a: 1 }, [1])).toEqual([{ op: "replace", path: "", value: [1] }]);
    expect(diffForAudit(undefined, { a: 1 })).toEqual([{ op: "replace", path: "", value: { a: 1 } }]);
    expect(diffForAudit(3, 3)).toEqual([]);
  });

  test("property: applying the patch to before yields after", () => {
    // fast-json-patch's applier refuses `__proto__` paths (a safety feature), so the round trip is
    // checked on documents without that key.
    const doc = fc
      .oneof(fc.dictionary(fc.string(), fc.jsonValue({ maxDepth: 3 })), fc.array(fc.jsonValue({ maxDepth: 3 })))
      .filter((d) => !JSON.stringify(d).includes('"__proto__"'));
    fc.assert(
      fc.property(doc, doc, (before, after) => {
        const b = JSON.parse(JSON.stringify(before));
        const a = JSON.parse(JSON.stringify(after));
        const patch = diffForAudit(b, a);
        const patched = patch.length === 1 && patch[0]!.path === "" ? (patch[0] as { value: unknown }).value : jsonPatch.applyPatch(structuredClone(b), patch, false, false).newDocument;
        expect(patched).toEqual(a);
      }),
      { numRuns: 200 },
    );
  });
});

describe("hashInput", () => {
  test("sha256 of the RFC 8785 form: key order does not matter, the input is not in the hash", () => {
    const h = hashInput({ b: 1, a: "secret" });
    expect(h).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(hashInput({ a: "secret", b: 1 })).toBe(h);
    expect(hashInput({ a: "secret", b: 2 })).not.toBe(h);
    expect(h).not.toContain("secret");
  });

  test("with a key, an HMAC that differs per key", () => {
    const a = hashInput({ x: 1 }, "k1");
    expect(a).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(hashInput({ x: 1 }, "k2")).not.toBe(a);
    expect(a.slice(5)).not.toBe(hashInput({ x: 1 }).slice(7));
  });
});

describe("capAuditDiff", () => {
  test("a patch above the cap becomes one marker element before it leaves the worker", () => {
    const wide: Record<string, number> = {};
    for (let i = 0; i < 80_000; i++) wide[`k${i}`] = 0;
    expect(capAuditDiff(diffForAudit({ a: 1 }, wide))).toEqual([{ _truncated: true, ops: 80_001, bytes: -1 }]);
    const medium = diffForAudit({}, { text: "x".repeat(70_000) });
    expect(capAuditDiff(medium)).toEqual([{ _truncated: true, ops: 1, bytes: Buffer.byteLength(JSON.stringify(medium)) }]);
  });

  test("a patch under the cap is kept as is", () => {
    const patch = diffForAudit({ a: 1 }, { a: 2 });
    expect(capAuditDiff(patch)).toBe(patch);
  });
});
