import { describe, expect, test } from "vitest";
import { exitCodeOf, orderNotContainedFirst, renderMarkdown, summarize } from "../../../bench/sandbox/report.js";
import { classifyError, inferRecycle } from "../../../bench/sandbox/run-case.js";
import { makeCase, makeReport, notContained } from "./sandbox-fixtures.js";

describe("verdict", () => {
  test("every case contained ⇒ PASS, exit 0", () => {
    const report = makeReport([makeCase("cpu-loop", "resource-exhaustion"), makeCase("set-oom", "process-killers")]);
    expect(report.summary).toMatchObject({ total: 2, contained: 2, not_contained: 0, verdict: "PASS" });
    expect(exitCodeOf(report)).toBe(0);
  });

  test("one not-contained case ⇒ FAIL, exit 1, and it is named", () => {
    const cases = [makeCase("cpu-loop", "resource-exhaustion"), notContained(makeCase("bigint-cpu", "resource-exhaustion"), "outcome error, expected timeout")];
    const report = makeReport(cases);
    expect(report.summary).toMatchObject({ total: 2, contained: 1, not_contained: 1, verdict: "FAIL", not_contained_ids: ["resource-exhaustion/bigint-cpu"] });
    expect(exitCodeOf(report)).toBe(1);
  });

  test("a wedged case counts as not contained and as wedged", () => {
    const wedged = notContained(makeCase("set-rehash-oom", "process-killers", { control: { regained_ms: null, recovered_ms: null, wedged: true } }), "runtime wedged");
    const s = summarize([wedged]);
    expect(s.wedged).toBe(1);
    expect(exitCodeOf({ cases: [wedged] })).toBe(1);
  });

  test("process restarts and background errors are summed", () => {
    const a = makeCase("a", "process-killers", { recycled: { expected: "process", observed: "process", basis: "measured", process_restarts: 1 } });
    const b = makeCase("b", "process-killers", { background: { window_ms: 1, samples: 1, p50_ms: 1, p99_ms: 1, errors: 7, error_kinds: { "hook:crashed": 7 }, p50_ratio: 1, p99_ratio: 1 } });
    expect(summarize([a, b])).toMatchObject({ process_restarts: 1, background_errors: 7 });
  });
});

describe("markdown", () => {
  const cases = [
    makeCase("a-first-alphabetically", "resource-exhaustion"),
    notContained(makeCase("z-last-alphabetically", "resource-exhaustion"), "outcome crashed, expected error"),
    makeCase("giant-string-split", "process-killers"),
  ];
  const md = renderMarkdown(makeReport(cases));

  test("the verdict line says FAIL with the count", () => {
    expect(md.split("\n")[0]).toBe("# Sandbox bench — FAIL: 1 of 3 cases NOT contained");
  });

  test("the not-contained section comes before everything else and lists the case with why", () => {
    const section = md.indexOf("## Not contained");
    expect(section).toBeGreaterThan(0);
    expect(section).toBeLessThan(md.indexOf("## Summary"));
    expect(section).toBeLessThan(md.indexOf("## Environment"));
    const listed = md.indexOf("resource-exhaustion/z-last-alphabetically");
    expect(listed).toBeGreaterThan(section);
    expect(listed).toBeLessThan(md.indexOf("## Summary"));
    expect(md).toContain("outcome crashed, expected error");
  });

  test("in a category table the not-contained row comes first", () => {
    const table = md.slice(md.indexOf("## Resource exhaustion"));
    expect(table.indexOf("| z-last-alphabetically |")).toBeGreaterThan(0);
    expect(table.indexOf("| z-last-alphabetically |")).toBeLessThan(table.indexOf("| a-first-alphabetically |"));
  });

  test("an uncovered category is listed as not yet covered, not silently dropped", () => {
    expect(md).toContain("## Integrity\n\nNot yet covered: not yet covered: no checker");
  });

  test("nothing failing ⇒ 'None.' under Not contained", () => {
    const ok = renderMarkdown(makeReport([makeCase("a", "resource-exhaustion")]));
    expect(ok).toContain("## Not contained\n\nNone.");
    expect(ok.split("\n")[0]).toContain("PASS");
  });

  test("a pipe in a reason does not break the table row", () => {
    const withPipe = renderMarkdown(makeReport([notContained(makeCase("p", "resource-exhaustion"), "error does not match /a|b/")]));
    const row = withPipe.split("\n").find((l) => l.startsWith("| resource-exhaustion/p |"));
    expect(row).toContain("/a\\|b/");
  });

  test("orderNotContainedFirst keeps category order among equals", () => {
    const order = orderNotContainedFirst([makeCase("x", "process-killers"), makeCase("y", "resource-exhaustion"), notContained(makeCase("z", "process-killers"), "r")]);
    expect(order.map((c) => c.id)).toEqual(["z", "y", "x"]);
  });
});

describe("error class and recycle inference", () => {
  test.each([
    ["timeout", "anything", null, "Timeout"],
    ["error", "RangeError: Maximum call stack size exceeded", null, "RangeError"],
    ["error", "Isolate was disposed during execution due to memory limit", null, "MemoryLimit"],
    ["crashed", "bundle quarantined after it crashed the sandbox", null, "Quarantined"],
    ["crashed", "the sandbox host exited", null, "HostCrash"],
    ["capability_denied", "session trust may not modify", null, "TrustGate"],
    [null, "bad predicate", "INVALID_PREDICATE", "INVALID_PREDICATE"],
    ["ok", undefined, null, null],
  ] as const)("%s %s ⇒ %s", (outcome, error, code, expected) => {
    expect(classifyError(outcome, error, code)).toBe(expected);
  });

  test("a restart is measured; memory-limit errors and timeouts are inferred isolate recycles", () => {
    expect(inferRecycle("crashed", "x", 1)).toEqual({ observed: "process", basis: "measured" });
    expect(inferRecycle("error", "Isolate was disposed during execution due to memory limit", 0)).toEqual({ observed: "isolate", basis: "inferred" });
    expect(inferRecycle("timeout", null, 0)).toEqual({ observed: "isolate", basis: "inferred" });
    expect(inferRecycle("ok", null, 0)).toEqual({ observed: "none", basis: "inferred" });
  });
});
