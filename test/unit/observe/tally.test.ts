import { Counter, Histogram, Registry } from "prom-client";
import { expect, test } from "vitest";
import { TallyCounter, TallyHistogram } from "../../../src/observe/tally.js";

const BUCKETS = [0.00005, 0.001, 0.01, 1];

/** The same updates through prom-client and through the tallies: the scrape must not tell them apart. */
function both() {
  const prom = new Registry();
  const tally = new Registry();
  const p = {
    chains: new Counter({ name: "x_chains_total", help: "chains", labelNames: ["type", "status"], registers: [prom] }),
    hooks: new Counter({ name: "x_hooks_total", help: "hooks by \"bundle\"\\hook", labelNames: ["bundle", "hook", "outcome"], registers: [prom] }),
    seconds: new Histogram({ name: "x_seconds", help: "latency", labelNames: ["bundle", "hook"], buckets: BUCKETS, registers: [prom] }),
    one: new Histogram({ name: "x_one_seconds", help: "by type", labelNames: ["type"], buckets: BUCKETS, registers: [prom] }),
  };
  const t = {
    chains: new TallyCounter("x_chains_total", "chains", ["type", "status"], tally),
    hooks: new TallyCounter("x_hooks_total", "hooks by \"bundle\"\\hook", ["bundle", "hook", "outcome"], tally),
    seconds: new TallyHistogram("x_seconds", "latency", ["bundle", "hook"], BUCKETS, tally),
    one: new TallyHistogram("x_one_seconds", "by type", ["type"], BUCKETS, tally),
  };
  return { prom, tally, p, t };
}

test("tally counters and histograms scrape exactly as prom-client's for the same updates (text and JSON)", async () => {
  const { prom, tally, p, t } = both();
  const updates: Array<[string, string, string, number]> = [
    ["guard", "redact", "ok", 0.0004],
    ["guard", "redact", "ok", 0.00001],
    ["other", "slow", "timeout", 5],
    ["guard", "redact", "error", 0.01], // exactly on a bound: counted in that bucket
    ['we"ird\\', "line\nbreak", "ok", 1],
    ["guard", "scan", "ok", 0.002],
  ];
  for (const [bundle, hook, outcome, seconds] of updates) {
    p.hooks.inc({ bundle, hook, outcome });
    t.hooks.cell(bundle, hook, outcome).value++;
    p.seconds.observe({ bundle, hook }, seconds);
    t.seconds.cell(bundle, hook).observe(seconds);
    p.one.observe({ type: "pre_inject" }, seconds);
    t.one.cell("pre_inject").observe(seconds);
  }
  p.chains.inc({ type: "pre_inject", status: "completed" }, 3);
  t.chains.cell("pre_inject", "completed").value += 3;
  p.chains.inc({ type: "post_select", status: "aborted" });
  t.chains.cell("post_select", "aborted").value++;

  const text = await tally.metrics();
  expect(text).toBe(await prom.metrics());
  expect(text).toContain('x_seconds_bucket{le="0.01",bundle="guard",hook="redact"} 3');
  expect(text).toContain('x_seconds_bucket{le="+Inf",bundle="other",hook="slow"} 1');
  expect(await tally.getMetricsAsJSON()).toEqual(await prom.getMetricsAsJSON());
});

test("a series is created once per label tuple and keeps counting; reset empties it as prom-client's does", async () => {
  const { prom, tally, p, t } = both();
  const cell = t.chains.cell("pre_inject", "completed");
  expect(t.chains.cell("pre_inject", "completed")).toBe(cell);
  expect(t.chains.cell("pre_inject", "aborted")).not.toBe(cell);
  cell.value += 2;
  p.chains.inc({ type: "pre_inject", status: "completed" }, 2);
  p.chains.inc({ type: "pre_inject", status: "aborted" }, 0);
  expect(await tally.metrics()).toBe(await prom.metrics());
  tally.resetMetrics();
  prom.resetMetrics();
  expect(await tally.metrics()).toBe(await prom.metrics());
  expect(await tally.metrics()).not.toContain("x_chains_total{");
});

test("a histogram refuses a value that is not a finite number, like prom-client", () => {
  const { t } = both();
  expect(() => t.one.cell("pre_inject").observe(Number.NaN)).toThrow(TypeError);
  expect(() => new TallyCounter("x_bad", "no labels", [], new Registry())).toThrow(TypeError);
});
