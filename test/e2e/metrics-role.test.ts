// The `metrics` role: a Prometheus scraper's token reads GET /metrics and nothing else, and it never
// stands in for an operator or a client. Every operation the server documents is tried with it.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { call, settings, sha256, startHarness, TOKENS, type Harness } from "./helpers.js";

const METRICS_TOKEN = "mt-token-e2e-0123456789";
let h: Harness;

beforeAll(async () => {
  const base = settings();
  h = await startHarness({ settings: { ...base, auth: [...base.auth, { id: "prometheus", role: "metrics", token_sha256: sha256(METRICS_TOKEN) }] } });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

/** Every documented operation, its path parameters filled in (authentication comes before any parameter is checked). */
async function operations(): Promise<Array<{ method: string; path: string; secured: boolean }>> {
  const doc = (await call(h.url, "GET", "/openapi.json")).body as { paths: Record<string, Record<string, { security?: unknown[] }>> };
  return Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops)
      .filter(([method]) => ["get", "put", "post", "delete", "patch"].includes(method))
      .map(([method, op]) => ({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, "x"), secured: (op.security ?? []).length > 0 })),
  );
}

describe("a metrics token", () => {
  test("reads GET /metrics", async () => {
    const scraped = await call(h.url, "GET", "/metrics", { token: METRICS_TOKEN });
    expect(scraped.status).toBe(200);
    expect(scraped.text).toMatch(/^vcp_chains_total|^# HELP /m);
  });

  test("is refused 403 FORBIDDEN on every other route, naming its role", async () => {
    const ops = (await operations()).filter((o) => o.secured && !(o.method === "GET" && o.path === "/metrics"));
    expect(ops.length).toBeGreaterThan(20);
    const refusals = await Promise.all(ops.map(async (o) => {
      const r = await call(h.url, o.method, o.path, { token: METRICS_TOKEN, ...(o.method === "GET" || o.method === "DELETE" ? {} : { body: {} }) });
      return { op: `${o.method} ${o.path}`, status: r.status, code: r.body?.error?.code, message: r.body?.error?.message };
    }));
    for (const r of refusals) expect(r, r.op).toMatchObject({ status: 403, code: "FORBIDDEN", message: expect.stringMatching(/^a metrics token may not use /) });
  });

  test("GET /metrics is also the operator's, and still not the client's", async () => {
    expect((await call(h.url, "GET", "/metrics", { token: TOKENS.operator })).status).toBe(200);
    expect((await call(h.url, "GET", "/metrics", { token: TOKENS.client })).status).toBe(403);
  });

  test("the OpenAPI document says who may scrape", async () => {
    const doc = (await call(h.url, "GET", "/openapi.json")).body;
    expect(doc.components.securitySchemes.metrics).toMatchObject({ type: "http", scheme: "bearer" });
    expect(doc.paths["/metrics"].get.security).toEqual([{ operator: [] }, { metrics: [] }]);
  });
});
