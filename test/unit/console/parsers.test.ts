import { describe, expect, test } from "vitest";
import { buckets, parseMetrics, quantile, subtract, total } from "../../../console/src/prom.js";
import { backoffMs, SseParser } from "../../../console/src/sse.js";

describe("SSE parser (the console reads the stream with fetch)", () => {
  test("events split across chunks come out whole; comments are heartbeats", () => {
    const p = new SseParser();
    expect(p.feed("event: hello\ndata: {\"a\"")).toEqual([]);
    expect(p.feed(":1}\n\n: heartbeat\n\nevent: decision\nid: c1\ndata: x\r\n\r\n")).toEqual([
      { event: "hello", data: '{"a":1}', id: null },
      { event: "decision", data: "x", id: "c1" },
    ]);
    expect(p.comments).toBe(1);
  });

  test("reconnect backoff doubles from 1 s and stops at 30 s", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 20].map(backoffMs)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });
});

describe("Prometheus text and histogram quantiles (Health page)", () => {
  const text = [
    "# HELP vcp_bundle_hook_duration_seconds Hook action latency",
    "# TYPE vcp_bundle_hook_duration_seconds histogram",
    'vcp_bundle_hook_duration_seconds_bucket{le="0.001",bundle="guard",hook="redact"} 50',
    'vcp_bundle_hook_duration_seconds_bucket{le="0.005",bundle="guard",hook="redact"} 90',
    'vcp_bundle_hook_duration_seconds_bucket{le="0.01",bundle="guard",hook="redact"} 100',
    'vcp_bundle_hook_duration_seconds_bucket{le="+Inf",bundle="guard",hook="redact"} 100',
    'vcp_bundle_hook_duration_seconds_count{bundle="guard",hook="redact"} 100',
    'vcp_hooks_total{type="pre_inject",outcome="ok"} 7',
    'vcp_hooks_total{type="post_select",outcome="ok"} 3',
    'weird{label="a \\"quoted\\" value"} 1',
    "vcp_audit_lag_seconds 0.25",
  ].join("\n");
  const samples = parseMetrics(text);

  test("labels (with escapes) and values", () => {
    expect(total(samples, "vcp_hooks_total", { outcome: "ok" })).toBe(10);
    expect(total(samples, "vcp_audit_lag_seconds")).toBe(0.25);
    expect(samples.find((s) => s.name === "weird")?.labels.label).toBe('a "quoted" value');
  });

  test("p50 and p99 interpolate inside the bucket, like histogram_quantile", () => {
    const b = buckets(samples, "vcp_bundle_hook_duration_seconds", { bundle: "guard", hook: "redact" });
    expect(b).toHaveLength(4);
    expect(quantile(0.5, b)).toBeCloseTo(0.001, 9);
    expect(quantile(0.99, b)).toBeCloseTo(0.0095, 9);
    expect(quantile(0.5, [])).toBeNull();
  });

  test("an interval's quantile comes from the bucket deltas", () => {
    const before: Array<[number, number]> = [[0.001, 50], [0.005, 50], [0.01, 50], [Infinity, 50]];
    const now: Array<[number, number]> = [[0.001, 50], [0.005, 50], [0.01, 60], [Infinity, 60]];
    // All 10 new observations fell between 5 and 10 ms.
    const p50 = quantile(0.5, subtract(now, before))!;
    expect(p50).toBeGreaterThan(0.005);
    expect(p50).toBeLessThanOrEqual(0.01);
  });
});
