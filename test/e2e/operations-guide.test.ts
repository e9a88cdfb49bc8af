// docs/operations.md and deploy/prometheus/alerts.yaml tell an operator which metrics to alert on. This
// test is the one place that holds them to the truth: every metric name they write must be a family in
// the /metrics of a running `vcp-hooks serve` (a real process on a real redis-server, with an audit sink and retention,
// so the store and sink families exist), so a renamed metric fails here instead of silently never
// firing. The rules must pass `promtool check rules` and their unit tests (`promtool test rules`), and
// every link of the guide and every runbook link of the rules must land on a heading of the guide.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startReplicas, type ReplicaSet } from "../support/replicas.js";

const ROOT = resolve(import.meta.dirname, "../..");
const GUIDE_PATH = join(ROOT, "docs/operations.md");
const ALERTS_PATH = join(ROOT, "deploy/prometheus/alerts.yaml");
const ALERT_TESTS_PATH = join(ROOT, "deploy/prometheus/alerts.test.yaml");

/**
 * A metric name as the guide and the rules write one: our `vcp_` families and the stock `process_` /
 * `nodejs_` ones. Not a name: a token prefix such as `vcp_op_…` or `vcp_cl_$(…)` (a name never ends in
 * `_`), or a family pattern such as `vcp_audit_sink_*` (checked by METRIC_PREFIX instead).
 */
const METRIC_NAME = /\b(?:vcp|process|nodejs)_[a-z0-9_]*[a-z0-9]\b(?![_…*$])/g;
/** `vcp_audit_sink_*`: at least one family must start with the part before `*`. */
const METRIC_PREFIX = /\b((?:vcp|process|nodejs)_[a-z0-9_]*_)\*/g;
/** Sample suffixes of a histogram's (or summary's) family. */
const SAMPLE_SUFFIX = /_(?:bucket|sum|count)$/;

let set: ReplicaSet;
let receiver: Server;
/** Family name → type, from the `# TYPE` lines of the exposition. */
let families = new Map<string, string>();

beforeAll(async () => {
  // The audit sink's receiver: acknowledges everything (its families exist as soon as a sink is configured).
  receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () => res.end());
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const port = (receiver.address() as { port: number }).port;
  set = await startReplicas({ count: 1, config: { audit: { fsync: "batch", sink: { url: `http://127.0.0.1:${port}/v1/logs`, format: "otlp" }, retention: { max_segments: 100 } } } });
  const [replica] = set.replicas;
  const metrics = await replica!.request("GET", "/metrics", { token: set.tokens.operator });
  expect(metrics.status).toBe(200);
  families = new Map([...metrics.text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}, 120_000);

afterAll(async () => {
  await set?.close();
  await new Promise((r) => receiver?.close(r));
});

/** Whether `name` is a family of the exposition or a sample of one (`…_bucket` of a histogram). */
function exposed(name: string): boolean {
  if (families.has(name)) return true;
  const base = name.replace(SAMPLE_SUFFIX, "");
  return base !== name && ["histogram", "summary"].includes(families.get(base) ?? "");
}

function metricNames(text: string): string[] {
  return [...new Set([...text.matchAll(METRIC_NAME)].map((m) => m[0]))].sort();
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const headings = [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((m) => m[1]!);
  return new Set(headings.map((h) => h.toLowerCase().replace(/[^a-z0-9 -]/g, "").replace(/ /g, "-")));
}

describe("docs/operations.md and deploy/prometheus/alerts.yaml against a running server", () => {
  test("the exposition has the store and audit-sink families (the server under test is the full one)", () => {
    expect(families.get("vcp_store_connected")).toBe("gauge");
    expect(families.get("vcp_audit_sink_lag_seconds")).toBe("gauge");
  });

  test.each([
    ["docs/operations.md", GUIDE_PATH, 30],
    ["deploy/prometheus/alerts.yaml", ALERTS_PATH, 25],
    ["deploy/prometheus/alerts.test.yaml", ALERT_TESTS_PATH, 5],
  ])("every metric name in %s is exposed by serve", (_file, path, atLeast) => {
    const names = metricNames(readFileSync(path, "utf8"));
    // A floor, so that a broken pattern cannot make this test pass by finding nothing.
    expect(names.length).toBeGreaterThanOrEqual(atLeast);
    expect(names.filter((name) => !exposed(name))).toEqual([]);
  });

  test("every family pattern (vcp_…_*) in the guide matches at least one exposed family", () => {
    const prefixes = [...new Set([...readFileSync(GUIDE_PATH, "utf8").matchAll(METRIC_PREFIX)].map((m) => m[1]!))];
    expect(prefixes.filter((prefix) => ![...families.keys()].some((family) => family.startsWith(prefix)))).toEqual([]);
  });

  test("promtool accepts the rules and their unit tests pass", () => {
    // Absent promtool is a failure, not a skip: .ci/run installs it (Debian package `prometheus`).
    const check = spawnSync("promtool", ["check", "rules", ALERTS_PATH], { encoding: "utf8" });
    expect(check.error, "promtool not found: apt-get install prometheus").toBeUndefined();
    expect(`${check.stdout}${check.stderr}`).toMatch(/SUCCESS: \d+ rules found/);
    expect(check.status).toBe(0);
    const unit = spawnSync("promtool", ["test", "rules", ALERT_TESTS_PATH], { encoding: "utf8" });
    expect(`${unit.stdout}${unit.stderr}`).toContain("SUCCESS");
    expect(unit.status).toBe(0);
  });

  test("the guide opens with the deploy checklist, and its links and the rules' runbooks land on headings", () => {
    const guide = readFileSync(GUIDE_PATH, "utf8");
    // An operator looking for "deploy to production" finds it first.
    expect(guide.match(/^## .+$/m)?.[0]).toBe("## Deploy to production");
    const known = anchors(guide);
    const guideLinks = [...guide.matchAll(/\]\(#([^)]+)\)/g)].map((m) => m[1]!);
    const runbooks = [...readFileSync(ALERTS_PATH, "utf8").matchAll(/docs\/operations\.md#([a-z0-9-]+)/g)].map((m) => m[1]!);
    expect(guideLinks.length + runbooks.length).toBeGreaterThan(10);
    expect([...new Set([...guideLinks, ...runbooks])].filter((anchor) => !known.has(anchor))).toEqual([]);
  });

  test("the README links the guide", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme.includes("(docs/operations.md)"), "README.md has no link to docs/operations.md").toBe(true);
  });
});
