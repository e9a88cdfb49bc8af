import { describe, expect, test } from "vitest";
import { z } from "zod";
import { compileFromZod, describeSchemaError } from "../../../src/model/json-schema.js";

// Issue 11 defect 9: a union's failure was reported as its first branch's ("must be null").
describe("describeSchemaError", () => {
  const Inner = z.object({ id: z.string().min(1), tags: z.array(z.string()) }).strict();
  const Schema = z.object({
    maybe: Inner.nullable().optional(),
    either: z.union([z.string(), z.object({ matches: z.string() }).strict()]).optional(),
    nested: z.array(Inner.nullable()).optional(),
    kind: z.literal("x").optional(),
  });
  const validate = compileFromZod(Schema);
  const problem = (value: unknown) => {
    expect(validate(value)).toBe(false);
    return describeSchemaError(validate.errors, "input", value);
  };

  test.each([
    [{ maybe: { id: "a" } }, "input.maybe.tags", "is required"],
    [{ maybe: { id: "a", tags: [1] } }, "input.maybe.tags[0]", "must be a string"],
    [{ maybe: { id: "a", tags: [], extra: 1 } }, "input.maybe.extra", "is not a known field"],
    [{ maybe: 7 }, "input.maybe", "must be an object or null"],
    [{ either: { matches: 3 } }, "input.either.matches", "must be a string"],
    [{ either: 3 }, "input.either", "must be a string or an object"],
    [{ nested: [null, { id: "" , tags: [] }] }, "input.nested[1].id", "must NOT have fewer than 1 characters"],
    [{ kind: "y" }, "input.kind", 'must be "x"'],
    [{ "a/b": 1, maybe: { id: "a", tags: [], "c~d": 1 } }, 'input.maybe["c~d"]', "is not a known field"],
  ])("%j → %s: %s", (value, field, rule) => {
    expect(problem(value)).toEqual({ field, rule });
  });

  test("an object key made of digits is a key, not an index", () => {
    const Keyed = z.object({ map: z.record(z.string(), z.number()) });
    const v = compileFromZod(Keyed);
    const value = { map: { "0": "zero" } };
    expect(v(value)).toBe(false);
    expect(describeSchemaError(v.errors, "x", value)).toEqual({ field: 'x.map["0"]', rule: "must be a number" });
  });
});
