import { describe, expect, test } from "vitest";
import { assertComparable, compareReports, renderComparison } from "../../../bench/sandbox/compare.js";
import { makeCase, makeReport, notContained } from "./sandbox-fixtures.js";

const cpu = makeCase("cpu-loop", "resource-exhaustion");
const oom = makeCase("set-rehash-oom", "process-killers");

describe("compareReports", () => {
  test("identical reports ⇒ unchanged", () => {
    const cmp = compareReports(makeReport([cpu, oom]), makeReport([cpu, oom]));
    expect(cmp.unchanged).toBe(true);
    expect(cmp.changed).toEqual([]);
    expect(renderComparison(cmp)).toContain("No case was added, removed or changed");
  });

  test("a new case is listed, and a new not-contained case is a regression", () => {
    const added = notContained(makeCase("bigint-cpu", "resource-exhaustion"), "outcome error");
    const cmp = compareReports(makeReport([cpu]), makeReport([cpu, added]));
    expect(cmp.new_cases).toEqual([{ key: "resource-exhaustion/bigint-cpu", contained: false }]);
    expect(cmp.regressions).toEqual(["resource-exhaustion/bigint-cpu"]);
    expect(cmp.unchanged).toBe(false);
  });

  test("a removed case is listed", () => {
    const cmp = compareReports(makeReport([cpu, oom]), makeReport([cpu]));
    expect(cmp.removed_cases).toEqual(["process-killers/set-rehash-oom"]);
    expect(cmp.new_cases).toEqual([]);
  });

  test("a changed outcome is reported with before and after, and a flip to not contained is a regression", () => {
    const now = notContained(makeCase("cpu-loop", "resource-exhaustion", { observed: { ...cpu.observed, outcome: "crashed", error_class: "HostCrash" } }), "outcome crashed");
    const cmp = compareReports(makeReport([cpu]), makeReport([now]));
    const change = cmp.changed.find((c) => c.key === "resource-exhaustion/cpu-loop");
    expect(change?.changes).toEqual(
      expect.arrayContaining([
        { field: "contained", before: true, after: false },
        { field: "outcome", before: "timeout", after: "crashed" },
        { field: "error_class", before: "Timeout", after: "HostCrash" },
      ]),
    );
    expect(cmp.regressions).toEqual(["resource-exhaustion/cpu-loop"]);
    expect(cmp.fixed).toEqual([]);
  });

  test("a case that became contained is listed as fixed", () => {
    const before = notContained(oom, "wedged");
    const cmp = compareReports(makeReport([before]), makeReport([oom]));
    expect(cmp.fixed).toEqual(["process-killers/set-rehash-oom"]);
    expect(cmp.regressions).toEqual([]);
  });

  test("a latency delta beyond both thresholds is reported; noise below them is not", () => {
    const slower = makeCase("cpu-loop", "resource-exhaustion", { background: { ...cpu.background!, p99_ms: 30, p99_ratio: 15 } });
    const cmp = compareReports(makeReport([cpu]), makeReport([slower]));
    expect(cmp.latency).toEqual([{ key: "resource-exhaustion/cpu-loop", metric: "bg_p99_ms", before: 3, after: 30, delta_ms: 27, ratio: 10 }]);
    expect(cmp.changed).toEqual([]);

    const noisy = makeCase("cpu-loop", "resource-exhaustion", { background: { ...cpu.background!, p99_ms: 7 } }); // +4 ms: below the 5 ms floor
    expect(compareReports(makeReport([cpu]), makeReport([noisy])).latency).toEqual([]);
  });

  test("a delta smaller than a run's own quiet-baseline p99 is noise", () => {
    const slower = makeCase("cpu-loop", "resource-exhaustion", { background: { ...cpu.background!, p99_ms: 30 } });
    const noisyRun = makeReport([slower], { baseline: { window_ms: 3000, samples: 1000, p50_ms: 1, p99_ms: 40, errors: 0, error_kinds: {} } });
    const cmp = compareReports(makeReport([cpu]), noisyRun);
    expect(cmp.noise_floor_ms.p99).toBe(40);
    expect(cmp.latency).toEqual([]);
  });

  test("a slower return of control is a latency delta", () => {
    const slow = makeCase("cpu-loop", "resource-exhaustion", { control: { regained_ms: 2100, recovered_ms: 2200, wedged: false } });
    const cmp = compareReports(makeReport([cpu]), makeReport([slow]));
    expect(cmp.latency.map((d) => d.metric)).toEqual(["regained_ms"]);
    expect(renderComparison(cmp)).toMatch(/\| resource-exhaustion\/cpu-loop \| regained_ms \| 210 ms \| 2100 ms \| \+1890 ms \| 10×/);
  });

  test("the rendered comparison lists regressions before new and changed cases", () => {
    const now = notContained(makeCase("cpu-loop", "resource-exhaustion"), "outcome crashed");
    const md = renderComparison(compareReports(makeReport([cpu]), makeReport([now, makeCase("new-one", "process-killers")])));
    expect(md.indexOf("## Newly not contained (1)")).toBeLessThan(md.indexOf("## New cases (1)"));
    expect(md).toContain("- **resource-exhaustion/cpu-loop**");
    expect(md).toContain("- process-killers/new-one: contained");
  });
});

describe("assertComparable", () => {
  test("accepts a report and rejects other JSON or another schema version", () => {
    expect(() => assertComparable(makeReport([cpu]), "a.json")).not.toThrow();
    expect(() => assertComparable({ bench: "perf" }, "perf.json")).toThrow(/not a sandbox bench report/);
    expect(() => assertComparable({ ...makeReport([cpu]), version: 99 }, "old.json")).toThrow(/version 99/);
  });
});
