import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseGuestJson, parseHookResult } from "../../../src/model/result-json.js";
import { HookResultSchema } from "../../../src/model/result.js";

describe("parseHookResult", () => {
  test.each([
    ['{"status":"continue"}', true],
    ['{"status":"modify","modified_context":{"a":1}}', true],
    ['{"status":"abort","reason":"no"}', true],
    ['{"status":"abort"}', false],
    ['{"status":"abort","reason":""}', false],
    ['{"status":"stop"}', false],
    ['{"status":"continue","extra":1}', false],
    ['{"status":"modify","modified_constitution":{"id":"c","rules":[{"id":"r"}]}}', false],
    ["42", false],
    ["null", false],
    ["not json", false],
  ])("%s → valid %s", (text, valid) => {
    expect(parseHookResult(text).ok).toBe(valid);
  });

  test("the message names the offending field", () => {
    const parsed = parseHookResult('{"status":"continue","stauts":"typo"}');
    expect(parsed).toEqual({ ok: false, message: "result.stauts: is not a known field (spec §4.3)" });
    const abort = parseHookResult('{"status":"abort"}');
    expect(abort).toEqual({ ok: false, message: "result.reason: is required (spec §4.3)" });
  });

  // Issue 11 defect 9: a nullable field reported the failure of its `null` branch.
  test.each([
    ['{"status":"modify","modified_constitution":{"id":"c"}}', "result.modified_constitution.rules: is required"],
    ['{"status":"modify","modified_constitution":{"id":"c","rules":[{"id":"r","text":"t"},{"id":"r2"}]}}', "result.modified_constitution.rules[1].text: is required"],
    ['{"status":"modify","modified_constitution":{"id":"","rules":[]}}', "result.modified_constitution.id: must NOT have fewer than 1 characters"],
    ['{"status":"modify","modified_constitution":{"id":"c","rules":[],"signatures":[{"sig":7}]}}', "result.modified_constitution.signatures[0].sig: must be a string"],
    ['{"status":"modify","modified_constitution":"c"}', "result.modified_constitution: must be an object or null"],
    ['{"status":"modify","modified_context":[1]}', "result.modified_context: must be an object or null"],
    ['{"status":"modify","modified_context":{"a":1},"annotations":[]}', "result.annotations: must be an object"],
  ])("a nullable field names the real problem: %s", (text, message) => {
    expect(parseHookResult(text)).toEqual({ ok: false, message: `${message} (spec §4.3)` });
  });

  test("the ajv hot-path schema and the zod model agree on generated results", () => {
    const rule = fc.record({ id: fc.oneof(fc.constant(""), fc.string({ minLength: 1, maxLength: 4 })), text: fc.string({ maxLength: 4 }) }, { requiredKeys: [] });
    const arbitraryResult = fc.record(
      {
        status: fc.constantFrom("continue", "abort", "modify", "other"),
        modified_context: fc.oneof(fc.constant(null), fc.dictionary(fc.string({ maxLength: 3 }), fc.integer()), fc.constant(3)),
        modified_constitution: fc.oneof(fc.constant(null), fc.record({ id: fc.string({ maxLength: 3 }), rules: fc.array(rule, { maxLength: 2 }) }, { requiredKeys: [] })),
        reason: fc.oneof(fc.constant(""), fc.string({ maxLength: 5 }), fc.constant(7)),
        annotations: fc.oneof(fc.dictionary(fc.string({ maxLength: 3 }), fc.jsonValue()), fc.constant([])),
        stray: fc.constant(1),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(arbitraryResult, (value) => {
        const json = JSON.stringify(value);
        expect(parseHookResult(json).ok).toBe(HookResultSchema.safeParse(JSON.parse(json)).success);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("parseGuestJson", () => {
  test("drops __proto__ keys at any depth so no later merge can set a prototype", () => {
    const value = parseGuestJson('{"a":{"__proto__":{"polluted":true},"b":1},"__proto__":{"x":1}}') as Record<string, any>;
    expect(Object.hasOwn(value, "__proto__")).toBe(false);
    expect(Object.hasOwn(value.a, "__proto__")).toBe(false);
    expect(value.a.b).toBe(1);
    const merged = Object.assign({}, value.a);
    expect((merged as any).polluted).toBeUndefined();
    expect(({} as any).polluted).toBeUndefined();
  });
});
