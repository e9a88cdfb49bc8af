import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { compareHooks } from "../../../src/registry/ordering.js";

type Key = { priority: number; scope: "deployment" | "session"; seq: number };

/** Hooks as a registry produces them: any priority and scope, unique seq. */
const hooksArb = fc
  .uniqueArray(
    fc.record({
      priority: fc.integer({ min: 0, max: 100 }),
      scope: fc.constantFrom("deployment" as const, "session" as const),
      seq: fc.nat({ max: 10_000 }),
    }),
    { selector: (h) => h.seq, maxLength: 40 },
  )
  .map((hooks): Key[] => hooks);
const hookArb = fc.record({
  priority: fc.integer({ min: 0, max: 100 }),
  scope: fc.constantFrom("deployment" as const, "session" as const),
  seq: fc.nat({ max: 50 }),
});

const sign = (n: number) => Math.sign(n) + 0;

describe("compareHooks (spec §5.1, §6.1, DESIGN §4.2)", () => {
  test.each<[string, Key, Key, "a first" | "b first"]>([
    ["higher priority first", { priority: 100, scope: "session", seq: 9 }, { priority: 0, scope: "deployment", seq: 1 }, "a first"],
    ["lower priority later", { priority: 49, scope: "deployment", seq: 1 }, { priority: 50, scope: "session", seq: 2 }, "b first"],
    ["equal priority: deployment before session", { priority: 50, scope: "session", seq: 1 }, { priority: 50, scope: "deployment", seq: 2 }, "b first"],
    ["equal priority: deployment before session, either way", { priority: 50, scope: "deployment", seq: 9 }, { priority: 50, scope: "session", seq: 1 }, "a first"],
    ["equal priority and scope: registration order", { priority: 50, scope: "session", seq: 3 }, { priority: 50, scope: "session", seq: 4 }, "a first"],
    ["equal priority and scope: later registered runs later", { priority: 7, scope: "deployment", seq: 12 }, { priority: 7, scope: "deployment", seq: 2 }, "b first"],
  ])("%s", (_name, a, b, expected) => {
    expect(sign(compareHooks(a, b))).toBe(expected === "a first" ? -1 : 1);
    expect(sign(compareHooks(b, a))).toBe(expected === "a first" ? 1 : -1);
  });

  test("a mixed chain sorts as the spec's example", () => {
    const hooks: (Key & { name: string })[] = [
      { name: "s50", priority: 50, scope: "session", seq: 1 },
      { name: "d50-late", priority: 50, scope: "deployment", seq: 5 },
      { name: "d100", priority: 100, scope: "deployment", seq: 4 },
      { name: "d50", priority: 50, scope: "deployment", seq: 2 },
      { name: "s75", priority: 75, scope: "session", seq: 3 },
      { name: "s50-late", priority: 50, scope: "session", seq: 6 },
    ];
    expect(hooks.sort(compareHooks).map((h) => h.name)).toEqual(["d100", "s75", "d50", "d50-late", "s50", "s50-late"]);
  });

  test("property: antisymmetric and reflexive-zero", () => {
    fc.assert(
      fc.property(hookArb, hookArb, (a, b) => {
        // Summed, not negated: -sign(0) is -0, which toBe (Object.is) tells apart from 0 (a flake when two hooks tie).
        expect(sign(compareHooks(a, b)) + sign(compareHooks(b, a))).toBe(0);
        expect(compareHooks(a, a)).toBe(0);
      }),
    );
  });

  test("property: transitive", () => {
    fc.assert(
      fc.property(hookArb, hookArb, hookArb, (a, b, c) => {
        if (compareHooks(a, b) <= 0 && compareHooks(b, c) <= 0) expect(compareHooks(a, c)).toBeLessThanOrEqual(0);
      }),
    );
  });

  test("property: total on registry hooks — distinct seqs never compare equal", () => {
    fc.assert(
      fc.property(hookArb, hookArb, (a, b) => {
        fc.pre(a.seq !== b.seq);
        expect(compareHooks(a, b)).not.toBe(0);
      }),
    );
  });

  test("property: the sorted chain does not depend on the order hooks arrive in", () => {
    fc.assert(
      fc.property(hooksArb.chain((hooks) => fc.tuple(fc.constant(hooks), fc.shuffledSubarray(hooks, { minLength: hooks.length }))), ([hooks, shuffled]) => {
        expect([...shuffled].sort(compareHooks)).toEqual([...hooks].sort(compareHooks));
      }),
    );
  });

  test("property: sorted chain is priority-descending, deployment-first at equal priority, then by seq", () => {
    fc.assert(
      fc.property(hooksArb, (hooks) => {
        const sorted = [...hooks].sort(compareHooks);
        for (let i = 1; i < sorted.length; i++) {
          const prev = sorted[i - 1]!;
          const cur = sorted[i]!;
          expect(prev.priority).toBeGreaterThanOrEqual(cur.priority);
          if (prev.priority === cur.priority) {
            expect(prev.scope === "session" && cur.scope === "deployment").toBe(false);
            if (prev.scope === cur.scope) expect(prev.seq).toBeLessThan(cur.seq);
          }
        }
      }),
    );
  });

  test("property: stable — among hooks with equal priority and scope, registration order is kept", () => {
    fc.assert(
      fc.property(hooksArb, (hooks) => {
        const sorted = [...hooks].sort(compareHooks);
        const bySeq = [...hooks].sort((a, b) => a.seq - b.seq);
        for (const p of new Set(hooks.map((h) => `${h.priority}/${h.scope}`))) {
          const group = (list: Key[]) => list.filter((h) => `${h.priority}/${h.scope}` === p).map((h) => h.seq);
          expect(group(sorted)).toEqual(group(bySeq));
        }
      }),
    );
  });
});
