import { describe, expect, test } from "vitest";
import type { Constitution, Rule } from "../../../src/model/constitution.js";
import type { RuleConflict } from "../../../src/model/events.js";
import { applyConflictStrategy, compositionBase, highestPriority, mostRestrictive } from "../../../src/pipeline/strategies.js";

const r = (id: string, safety_critical?: boolean): Rule => ({ id, text: `text of ${id}`, ...(safety_critical ? { safety_critical } : {}) });
const c = (id: string, rules: Rule[], extra: Record<string, unknown> = {}): Constitution => ({ id, version: "1", rules, ...extra });
const conflict = (a: Rule, b: Rule, conflict_type: RuleConflict["conflict_type"] = "contradiction"): RuleConflict => ({ rule_a: a, rule_b: b, conflict_type });
const ids = (constitution: Constitution) => constitution.rules.map((x) => x.id);

describe("mostRestrictive", () => {
  const cases: Array<{ name: string; constitutions: Constitution[]; conflicts: RuleConflict[]; kept: string[]; dropped: string[] }> = [
    {
      name: "a contradiction keeps the safety-critical rule, whatever the order",
      constitutions: [c("a", [r("a1"), r("a2")]), c("b", [r("b1", true)])],
      conflicts: [conflict(r("a2"), r("b1", true))],
      kept: ["a1", "b1"],
      dropped: ["a2"],
    },
    {
      name: "neither safety-critical: the rule of the constitution listed first wins",
      constitutions: [c("a", [r("a1")]), c("b", [r("b1")])],
      conflicts: [conflict(r("b1"), r("a1"))],
      kept: ["a1"],
      dropped: ["b1"],
    },
    {
      name: "both rules in one constitution: rule_a wins",
      constitutions: [c("a", [r("x"), r("y")]), c("b", [r("z")])],
      conflicts: [conflict(r("y"), r("x"))],
      kept: ["y", "z"],
      dropped: ["x"],
    },
    {
      name: "ambiguity and priority_tie keep both rules (every coexisting constraint is kept)",
      constitutions: [c("a", [r("a1")]), c("b", [r("b1"), r("b2")])],
      conflicts: [conflict(r("a1"), r("b1"), "ambiguity"), conflict(r("a1"), r("b2"), "priority_tie")],
      kept: ["a1", "b1", "b2"],
      dropped: [],
    },
    {
      name: "a rule that loses any contradiction is dropped even if it won another",
      constitutions: [c("a", [r("a1")]), c("b", [r("b1")]), c("d", [r("d1")])],
      conflicts: [conflict(r("b1"), r("d1")), conflict(r("a1"), r("b1"))],
      kept: ["a1"],
      dropped: ["d1", "b1"],
    },
    {
      name: "rules with the same id are one rule (first occurrence kept); a rule held by no constitution drops nothing",
      constitutions: [c("a", [r("shared"), r("a1")]), c("b", [{ id: "shared", text: "other text" }, r("b1")])],
      conflicts: [conflict(r("ghost"), r("b1")), conflict(r("b1"), r("ghost"))],
      kept: ["shared", "a1", "b1"],
      dropped: [],
    },
  ];
  test.each(cases)("$name", ({ constitutions, conflicts, kept, dropped }) => {
    const result = mostRestrictive(constitutions, conflicts);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(ids(result.constitution)).toEqual(kept);
    expect(result.dropped.sort()).toEqual([...dropped].sort());
    expect(result.constitution.id).toBe(`composed:${constitutions.map((x) => x.id).join("+")}`);
    expect(result.constitution.signatures).toBeUndefined();
  });

  test("the first occurrence's text is kept for a shared rule id", () => {
    const result = mostRestrictive([c("a", [r("shared")]), c("b", [{ id: "shared", text: "other text" }])], []);
    expect(result.ok && result.constitution.rules[0]!.text).toBe("text of shared");
  });

  test("a contradiction between two safety-critical rules fails: neither may be dropped", () => {
    const result = mostRestrictive([c("a", [r("a1", true)]), c("b", [r("b1", true)])], [conflict(r("a1", true), r("b1", true))]);
    expect(result).toEqual({ ok: false, reason: expect.stringContaining("safety-critical rules 'a1' and 'b1'") });
  });

  test("safety_critical is read from the constitution's copy of the rule, not the conflict's", () => {
    const result = mostRestrictive([c("a", [r("a1")]), c("b", [r("b1", true)])], [conflict(r("a1", true), r("b1"))]);
    expect(result.ok && ids(result.constitution)).toEqual(["b1"]);
  });

  test("a safety-critical rule named by a conflict but held by no constitution cannot knock out a real rule", () => {
    const result = mostRestrictive([c("a", [r("a1")])], [conflict(r("phantom", true), r("a1"))]);
    expect(result.ok && ids(result.constitution)).toEqual(["a1"]);
  });
});

describe("highestPriority", () => {
  test("the constitution with the highest numeric priority wins whole, signatures kept", () => {
    const signed = c("b", [r("b1")], { priority: 9, signatures: [{ key_id: "k", sig: "s" }] });
    const result = highestPriority([c("a", [r("a1")], { priority: 3 }), signed, c("d", [r("d1")], { priority: 5 })]);
    expect(result).toEqual({ ok: true, constitution: signed, dropped: ["a1", "d1"] });
  });

  test("ties go to the constitution listed first", () => {
    const result = highestPriority([c("a", [], { priority: 4 }), c("b", [], { priority: 4 })]);
    expect(result.ok && result.constitution.id).toBe("a");
  });

  test("constitutions without a numeric priority rank below those with one; none at all ⇒ first listed", () => {
    expect(highestPriority([c("a", []), c("b", [], { priority: -5 }), c("d", [], { priority: "99" })]).ok && "b").toBe("b");
    const none = highestPriority([c("a", []), c("b", [])]);
    expect(none.ok && none.constitution.id).toBe("a");
  });
});

describe("applyConflictStrategy and compositionBase", () => {
  test("reject always fails", () => {
    expect(applyConflictStrategy("reject", [c("a", [r("a1")])], [])).toMatchObject({ ok: false, reason: expect.stringContaining("reject") });
  });

  test("each strategy name dispatches to its strategy", () => {
    const constitutions = [c("a", [r("a1")], { priority: 1 }), c("b", [r("b1")], { priority: 2 })];
    const conflicts = [conflict(r("a1"), r("b1"))];
    expect(applyConflictStrategy("most_restrictive", constitutions, conflicts)).toEqual(mostRestrictive(constitutions, conflicts));
    expect(applyConflictStrategy("highest_priority", constitutions, conflicts)).toEqual(highestPriority(constitutions));
  });

  test("the composition base holds every rule in no conflict, deduplicated, in constitution order", () => {
    const base = compositionBase(
      [c("a", [r("a1"), r("a2")]), c("b", [r("a1"), r("b1"), r("b2")])],
      [conflict(r("a2"), r("b1"), "ambiguity")],
    );
    expect(base).toMatchObject({ id: "composed:a+b", composed_from: ["a", "b"], composition_strategy: "base" });
    expect(ids(base)).toEqual(["a1", "b2"]);
  });
});
