// deploy/monitoring against the real server: every metric the Grafana dashboard names exists in GET
// /metrics of a server with every optional family on (a Redis store, an audit sink), and the
// ServiceMonitor scrapes the Service of deploy/k8s with the metrics token the pods are given. (The
// alert rules, deploy/prometheus/alerts.yaml, are held to the exposition by operations-guide.test.ts.)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import YAML from "yaml";
import { createAuditSinkMetrics, startAuditSink, type AuditSink } from "../../src/index.js";
import { createServer, type VcpServer } from "../../src/server/app.js";
import { startRedisServer, type RedisServerHandle } from "../support/redis-server.js";
import { call, settings, startHarness, TOKENS, type Harness } from "./helpers.js";

type Obj = Record<string, any>;
const DIR = "deploy/monitoring";
/** Series Prometheus makes itself for each target, not the server. */
const PROMETHEUS_SERIES = new Set(["up"]);

let redis: RedisServerHandle;
let h: Harness;
let sink: AuditSink;
let server: VcpServer;
let exposition = "";

beforeAll(async () => {
  redis = await startRedisServer();
  h = await startHarness({ runtime: { store: { kind: "redis", url: redis.url, prefix: "monitoring" } } });
  sink = startAuditSink({ path: join(h.dataDir, "audit", "audit.jsonl"), cursorFile: join(h.dataDir, "audit", "sink.cursor"), url: "http://127.0.0.1:9/unreachable", intervalMs: 50, maxBackoffMs: 200 });
  server = await createServer({ runtime: h.runtime as never, settings: settings(), extraMetrics: [createAuditSinkMetrics(sink.stats).text] });
  const url = await server.listen("127.0.0.1", 0);
  exposition = (await call(url, "GET", "/metrics", { token: TOKENS.operator })).text;
}, 120_000);

afterAll(async () => {
  await sink?.close();
  await server?.close();
  await h?.close();
  await redis?.close();
}, 60_000);

/** Every series name the exposition can have: each family, and a histogram's _bucket/_sum/_count. */
function seriesNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === "histogram") for (const suffix of ["_bucket", "_sum", "_count"]) names.add(`${name}${suffix}`);
    if (type === "summary") for (const suffix of ["_sum", "_count"]) names.add(`${name}${suffix}`);
  }
  return names;
}

/** The metric names in a PromQL expression: label matchers and strings removed, then every name of ours or the stock ones. */
function metricNames(expr: string): string[] {
  const bare = expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').replace(/\{[^}]*\}/g, "");
  return [...bare.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)].map((m) => m[0]).filter((name) => /^(vcp_|process_|nodejs_)/.test(name) || PROMETHEUS_SERIES.has(name));
}

function dashboardExprs(): string[] {
  const dashboard = JSON.parse(readFileSync(join(DIR, "grafana-dashboard.json"), "utf8")) as Obj;
  const panels: Obj[] = (dashboard.panels as Obj[]).flatMap((p) => [p, ...((p.panels as Obj[] | undefined) ?? [])]);
  return panels.flatMap((p) => ((p.targets as Obj[] | undefined) ?? []).map((t) => t.expr as string));
}

describe("deploy/monitoring", () => {
  test("the server exposes every family the assets need (a Redis store and an audit sink turn the optional ones on)", () => {
    const names = seriesNames(exposition);
    for (const family of ["vcp_store_command_errors_total", "vcp_bundle_chains_total", "vcp_audit_sink_lag_seconds", "process_cpu_seconds_total", "nodejs_eventloop_lag_p99_seconds"]) expect(names.has(family), family).toBe(true);
  });

  test("every metric the Grafana dashboard names exists in the exposition", () => {
    const exprs = dashboardExprs();
    expect(exprs.length).toBeGreaterThan(25);
    const named = new Set(exprs.flatMap(metricNames));
    expect(named.size).toBeGreaterThan(30);
    const known = seriesNames(exposition);
    expect([...named].filter((name) => !known.has(name) && !PROMETHEUS_SERIES.has(name))).toEqual([]);
  });

  test("the dashboard is a Grafana dashboard: a uid, a Prometheus datasource variable, every query on it", () => {
    const dashboard = JSON.parse(readFileSync(join(DIR, "grafana-dashboard.json"), "utf8")) as Obj;
    expect(dashboard).toMatchObject({ uid: "vcp-hooks", title: "vcp-hooks", schemaVersion: expect.any(Number) });
    expect(dashboard.templating.list).toEqual(expect.arrayContaining([expect.objectContaining({ name: "datasource", type: "datasource", query: "prometheus" })]));
    const queried = (dashboard.panels as Obj[]).filter((p) => p.type !== "row");
    for (const panel of queried) expect(panel.datasource, panel.title).toEqual({ type: "prometheus", uid: "${datasource}" });
    expect(new Set(queried.map((p) => p.id)).size).toBe(queried.length);
  });

  test("the ServiceMonitor scrapes deploy/k8s's Service on /metrics with the pods' metrics token", () => {
    const monitor = YAML.parse(readFileSync(join(DIR, "servicemonitor.yaml"), "utf8")) as Obj;
    const k8s = (file: string) => YAML.parse(readFileSync(join("deploy/k8s", file), "utf8")) as Obj;
    const service = k8s("service.yaml");
    const secret = k8s("secret.yaml");
    const container = k8s("deployment.yaml").spec.template.spec.containers[0];
    expect(monitor).toMatchObject({ apiVersion: "monitoring.coreos.com/v1", kind: "ServiceMonitor" });
    expect(Object.entries(monitor.spec.selector.matchLabels).every(([k, v]) => service.metadata.labels[k] === v)).toBe(true);
    const [endpoint] = monitor.spec.endpoints as Obj[];
    expect((service.spec.ports as Obj[]).map((p) => p.name)).toContain(endpoint!.port);
    expect(endpoint).toMatchObject({ path: "/metrics", authorization: { type: "Bearer", credentials: { name: secret.metadata.name } } });
    const key = endpoint!.authorization.credentials.key as string;
    expect(Object.keys(secret.stringData)).toContain(key);
    // The same Secret key is the token of the config's metrics principal in every pod.
    const config = YAML.parse(k8s("configmap.yaml").data["vcp.yaml"] as string) as Obj;
    const scraper = (config.auth as Obj[]).find((entry) => entry.role === "metrics");
    expect(scraper, "vcp.yaml has a metrics principal").toBeDefined();
    const env = (container.env as Obj[]).find((e) => e.name === scraper!.token_env);
    expect(env?.valueFrom?.secretKeyRef).toEqual({ name: secret.metadata.name, key });
    const kustomization = YAML.parse(readFileSync(join(DIR, "kustomization.yaml"), "utf8")) as Obj;
    expect(kustomization.resources).toEqual(["servicemonitor.yaml"]);
    // The alert rules (deploy/prometheus/alerts.yaml, checked by test/e2e/operations-guide.test.ts) select this job.
    expect(readFileSync("deploy/prometheus/alerts.yaml", "utf8")).toContain(`up{job="${service.metadata.name}"}`);
    expect(kustomization.configMapGenerator[0].files).toEqual(["grafana-dashboard.json"]);
  });
});
