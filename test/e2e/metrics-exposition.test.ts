// GET /metrics as Prometheus' own tooling reads it: `promtool check metrics` (Debian package
// `prometheus`, installed by .ci/run) must find nothing to complain about in our families, and the
// operator's numbers (sandbox host RSS/CPU, audit bytes and fsync latency, rate-limit refusals, build
// info, the decision-log sink's lag) are there with real values.
import { spawnSync } from "node:child_process";
import { createServer as createHttpServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createAuditSinkMetrics, startAuditSink, type AuditSink } from "../../src/index.js";
import { createServer } from "../../src/server/app.js";
import { cl, constitution, events, guardManifest, GUARD_CODE, op, settings, signed, startHarness, TOKENS, type Harness } from "./helpers.js";

let h: Harness;
let receiver: Server;
let sink: AuditSink;
let receiverUp = false;
let metricsText = "";

beforeAll(async () => {
  // A receiver that is down at first: the sink falls behind, and its lag must show.
  receiver = createHttpServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.statusCode = receiverUp ? 200 : 503;
      res.end();
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const port = (receiver.address() as { port: number }).port;
  h = await startHarness({ runtime: { maxSessionsPerOwner: 1 } });
  sink = startAuditSink({ path: `${h.dataDir}/audit/audit.jsonl`, cursorFile: `${h.dataDir}/audit/sink.cursor`, url: `http://127.0.0.1:${port}/`, intervalMs: 50, maxBackoffMs: 200 });
  const sinkMetrics = createAuditSinkMetrics(sink.stats);
  // The harness's server has no sink; a second server on the same runtime carries its metrics, as serve does.
  const server = await createServer({ runtime: h.runtime as never, settings: settings(), buildInfo: { version: "9.9.9", commit: "abc123", "isolated-vm": "7.0.1" }, extraMetrics: [sinkMetrics.text] });
  const url = await server.listen("127.0.0.1", 0);
  const closeHarness = h.close;
  h = { ...h, url, close: async () => { await sink.close(); await server.close(); await closeHarness(); } };
}, 60_000);

afterAll(async () => {
  await h?.close();
  await new Promise((r) => receiver?.close(r));
});

describe("GET /metrics", () => {
  test("after traffic: host, audit, refusal, build and sink families carry values", async () => {
    expect((await op(h, "PUT", "/v1/bundles/guard", signed(guardManifest(), GUARD_CODE))).status).toBe(201);
    const opened = await cl(h, "POST", "/v1/sessions", { session_id: "m1", context: { user: "u" }, constitution });
    expect(opened.status).toBe(201);
    expect((await cl(h, "POST", "/v1/sessions/m1/chains/pre_inject", { event: events.pre_inject })).status).toBe(200);
    // One session per client: the second is 429 SESSION_LIMIT, counted as a rate-limit refusal.
    const refused = await cl(h, "POST", "/v1/sessions", { session_id: "m2", context: { user: "u" }, constitution });
    expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 429, code: "SESSION_LIMIT" });
    // Let the sink try (and fail) against the stopped receiver.
    await until(() => sink.stats().failures > 0);
    metricsText = (await op(h, "GET", "/metrics")).text;

    expect(metricsText).toMatch(/^vcp_sandbox_host_resident_memory_bytes [1-9]\d{6,}$/m); // a live Node process: > 1 MB
    expect(metricsText).toMatch(/^vcp_sandbox_host_cpu_seconds_total \d/m);
    expect(metricsText).toMatch(/^vcp_audit_bytes_total [1-9]/m);
    expect(metricsText).toMatch(/^vcp_audit_fsync_duration_seconds_count [1-9]/m);
    expect(metricsText).toMatch(/^vcp_audit_write_failures_total 0$/m);
    expect(metricsText).toContain('vcp_rate_limit_refusals_total{reason="SESSION_LIMIT"} 1');
    expect(metricsText).toContain(`vcp_build_info{version="9.9.9",commit="abc123",node="${process.versions.node}",v8="${process.versions.v8}",isolated_vm="7.0.1"} 1`);
    expect(metricsText).toMatch(/^vcp_audit_sink_lag_records [1-9]/m);
    expect(metricsText).toMatch(/^vcp_audit_sink_failures_total [1-9]/m);
    expect(metricsText).toMatch(/^vcp_audit_sink_dropped_records_total 0$/m);
    expect(metricsText).toMatch(/^vcp_sandbox_quarantined_bundles 0$/m);
    expect(metricsText).toMatch(/^vcp_sandbox_slow_bundles 0$/m);
    // A bundle's traffic by profile: the one chain above ran guard's hook (native VCP: profile "vcp").
    expect(metricsText).toContain('vcp_bundle_chains_total{bundle="guard",profile="vcp"} 1');
    // The stock Node families under their stock names (any dashboard for a Node service reads them).
    for (const family of ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds", "process_open_fds", "nodejs_eventloop_lag_seconds", "nodejs_heap_size_used_bytes", "nodejs_gc_duration_seconds", "nodejs_version_info"]) {
      expect(metricsText).toMatch(new RegExp(`^# TYPE ${family} `, "m"));
    }
    expect(metricsText).not.toMatch(/vcp_server_/);

    // The receiver comes back: the sink catches up and its lag goes to 0.
    receiverUp = true;
    await until(() => sink.stats().lag_records === 0 && sink.stats().shipped_records > 0);
    const after = (await op(h, "GET", "/metrics")).text;
    expect(after).toMatch(/^vcp_audit_sink_lag_records 0$/m);
    expect(after).toMatch(/^vcp_audit_sink_lag_seconds 0$/m);
  }, 60_000);

  test("promtool check metrics finds no problem at all: no gauge named _total, in our families or the stock ones", () => {
    expect(metricsText).not.toBe("");
    const promtool = spawnSync("promtool", ["check", "metrics"], { input: metricsText, encoding: "utf8" });
    // Absent promtool is a failure, not a skip: .ci/run installs it (Debian package `prometheus`).
    expect(promtool.error, "promtool not found: apt-get install prometheus").toBeUndefined();
    expect(`${promtool.stdout}${promtool.stderr}`.split("\n").filter((line) => line.trim() !== "")).toEqual([]);
    expect(promtool.status).toBe(0);
    // What promtool says about a gauge named like a counter, so the check above is known to bite.
    const bad = spawnSync("promtool", ["check", "metrics"], { input: "# HELP x_total A gauge.\n# TYPE x_total gauge\nx_total 1\n", encoding: "utf8" });
    expect(`${bad.stdout}${bad.stderr}`).toMatch(/x_total non-counter metrics should not have "_total" suffix/);
  });

  test("Content-Type is the text exposition format", async () => {
    const res = await fetch(`${h.url}/metrics`, { headers: { authorization: `Bearer ${TOKENS.operator}` } });
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  });
});

async function until(check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}
