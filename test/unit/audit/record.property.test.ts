import canonicalizeLib from "canonicalize";
import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createRedactor } from "../../../src/audit/redact.js";
import { GENESIS_HASH, INPUT_FIELDS, normalizeInput, prepareRecord, recordHash, sealPrepared, sealRecord, type AuditRecordInput } from "../../../src/audit/record.js";

// What sealing computed before it was assembled from prepared text: the record as one object, hashed
// through the canonicalize package, written with JSON.stringify. The stored bytes and hashes of every
// existing log depend on staying identical.
const oracle = canonicalizeLib as unknown as (value: unknown) => string;
function sealedTheOldWay(fields: Record<string, unknown>, seq: number, prev: string, ts: string): string {
  const unsealed = { seq, ts, ...fields, prev };
  const hash = `sha256:${createHash("sha256").update(oracle(unsealed)).digest("hex")}`;
  return `${JSON.stringify({ ...unsealed, hash })}\n`;
}

const text = fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.constantFrom("sha256:ab", "pre_inject", "é\u2028\"\\"));
const payload = fc.jsonValue({ maxDepth: 4 });
const input: fc.Arbitrary<AuditRecordInput> = fc
  .record(
    {
      kind: fc.constantFrom("hook", "chain", "registry", "approval_request", "approval_decision"),
      session: text, owner: text, chain_id: text, hook: text, hook_type: text, profile: text, profile_event: text, scope: text,
      bundle: text, bundle_digest: text, input_hash: text, status: text, outcome: text,
      duration_ms: fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.nat()),
      modification: fc.array(fc.record({ op: fc.constant("replace"), path: text, value: payload }), { maxLength: 3 }),
      provenance: fc.record({ parent_digest: text, digest: text }),
      annotations: payload, event: text, details: payload,
    },
    { requiredKeys: ["kind"] },
  ) as fc.Arbitrary<AuditRecordInput>;

describe("normalizeInput", () => {
  test("is exactly the JSON round trip of the known fields, whatever their values", () => {
    const odd = fc.oneof(
      fc.anything({ maxDepth: 2, withBoxedValues: true, withNullPrototype: true, withObjectString: true, withSparseArray: true, withDate: true }),
      fc.constantFrom(-0, Number.NaN, Number.POSITIVE_INFINITY, "\uD800", undefined, () => 1, Symbol("s"), { toJSON: () => undefined }, { toJSON: () => ({ b: 1, a: -0 }) }, new Date(0), new String("boxed")),
    );
    const fields = fc.dictionary(fc.constantFrom(...INPUT_FIELDS, "not_a_field", "seq", "hash"), odd, { maxKeys: 8 });
    fc.assert(
      fc.property(fields, (extra) => {
        const record = { ...extra, kind: "hook" } as unknown as AuditRecordInput;
        const known: Record<string, unknown> = {};
        for (const field of INPUT_FIELDS) if (record[field] !== undefined) known[field] = record[field];
        const expected = JSON.parse(JSON.stringify(known)) as Record<string, unknown>;
        const got = normalizeInput(record);
        expect(JSON.stringify(got)).toBe(JSON.stringify(expected));
        expect(got).toStrictEqual(expected);
      }),
      { numRuns: 3000 },
    );
  });

  test("refuses what JSON cannot carry", () => {
    expect(() => normalizeInput({ kind: "hook", details: { n: 1n } })).toThrow(TypeError);
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(() => normalizeInput({ kind: "hook", annotations: cycle })).toThrow(TypeError);
    expect(() => normalizeInput({ kind: "nope" } as unknown as AuditRecordInput)).toThrow(TypeError);
  });
});

describe("sealing a prepared record", () => {
  test("the line and hash are byte-identical to sealing the whole record object", () => {
    fc.assert(
      fc.property(input, fc.integer({ min: 1, max: 2 ** 40 }), fc.date({ noInvalidDate: true }), (record, seq, date) => {
        const fields = normalizeInput(record);
        const ts = date.toISOString();
        const prev = seq === 1 ? GENESIS_HASH : `sha256:${"c".repeat(64)}`;
        const { line, hash } = sealPrepared(prepareRecord(fields), seq, prev, ts);
        expect(line).toBe(sealedTheOldWay(fields, seq, prev, ts));
        // What a verifier does: parse the line back and hash it without `hash`.
        const parsed = JSON.parse(line) as Record<string, unknown>;
        expect(parsed.hash).toBe(hash);
        expect(recordHash(parsed)).toBe(hash);
      }),
      { numRuns: 1000 },
    );
  });

  test("JSON texts of the payload values handed over by the writer give the same line and hash as writing them again", () => {
    // The writer passes JSON.stringify(redact(value)) and hashes JSON.parse of it: prepareRecord writes
    // that text into the line instead of serializing the parsed value a second time.
    const redact = createRedactor({ keys: ["password", "authorization"] });
    const odd = fc.oneof(payload, fc.anything({ maxDepth: 3, withBoxedValues: true, withNullPrototype: true, withSparseArray: true, withDate: true }), fc.constantFrom(-0, "\uD800x", [undefined, 1], { password: "p", n: -0, "2": 1, b: 2, "1": 0 }));
    fc.assert(
      fc.property(input, odd, odd, (record, annotations, details) => {
        const fields = normalizeInput({ ...record, annotations, details } as AuditRecordInput);
        const texts: Record<string, string> = {};
        for (const key of ["annotations", "details", "modification"] as const) {
          if (!(key in fields)) continue;
          texts[key] = JSON.stringify(redact(fields[key]) ?? null);
          fields[key] = JSON.parse(texts[key]!);
        }
        const reused = sealPrepared(prepareRecord(fields, texts), 9, GENESIS_HASH, "2026-11-26T08:00:00.000Z");
        expect(reused).toStrictEqual(sealPrepared(prepareRecord(fields), 9, GENESIS_HASH, "2026-11-26T08:00:00.000Z"));
        expect(reused.line).toBe(sealedTheOldWay(fields, 9, GENESIS_HASH, "2026-11-26T08:00:00.000Z"));
      }),
      { numRuns: 1000 },
    );
  });

  test("a field the writer does not know is written to the line as JSON.stringify writes it, and not hashed, as before", () => {
    const fields = { kind: "hook", not_a_field: { b: 1, a: [undefined, -0] }, skipped: undefined } as Record<string, unknown>;
    const prepared = prepareRecord(fields);
    expect(`{${prepared.json}}`).toBe(JSON.stringify(fields));
    expect(prepared.canonical.join("")).toBe('"kind":"hook"');
  });

  test("every input field is hashed: changing any one changes the hash", () => {
    const base = normalizeInput({ kind: "hook", session: "s", owner: "o", chain_id: "c", hook: "h", hook_type: "pre_inject", profile: "p", profile_event: "e", scope: "global", bundle: "b", bundle_digest: "d", input_hash: "i", status: "continue", outcome: "ok", duration_ms: 1, modification: [], provenance: { parent_digest: "a", digest: "b" }, annotations: { a: 1 }, event: "x", details: { r: null } });
    const sealed = (fields: Record<string, unknown>) => sealRecord(fields, 7, GENESIS_HASH, new Date(0).toISOString()).line;
    const hashes = new Set([sealed(base)]);
    for (const field of INPUT_FIELDS) hashes.add(sealed({ ...base, [field]: field === "duration_ms" ? 2 : "changed" }));
    expect(hashes.size).toBe(INPUT_FIELDS.length + 1);
    // …and so are the writer's own seq, ts and prev.
    expect(sealRecord(base, 8, GENESIS_HASH, new Date(0).toISOString()).line).not.toBe(sealed(base));
    expect(sealRecord(base, 7, GENESIS_HASH, new Date(1).toISOString()).line).not.toBe(sealed(base));
    expect(sealRecord(base, 7, `sha256:${"1".repeat(64)}`, new Date(0).toISOString()).line).not.toBe(sealed(base));
  });
});
