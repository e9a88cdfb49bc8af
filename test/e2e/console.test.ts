// The operator console's server side end to end: static page and its headers, the live decisions
// stream (auth, content, redaction, shutdown) and the security report, on a real runtime and server.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, constitution, events, signed, TOKENS } from "./helpers.js";
import { CONSOLE_CODE, consoleManifest, openStream, startConsoleHarness, XSS, type ConsoleHarness } from "./console-helpers.js";

let h: ConsoleHarness;
beforeAll(async () => {
  h = await startConsoleHarness();
});
afterAll(async () => {
  await h?.close();
});

describe("GET /console", () => {
  it("serves the page without a token, with CSP default-src 'self' and no external asset", async () => {
    const r = await call(h.url, "GET", "/console");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/html/);
    expect(r.headers.get("content-security-policy")).toMatch(/^default-src 'self'/);
    expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    expect(r.text).toContain('<script type="module" src="/console/app.js">');
    expect(r.text).not.toMatch(/https?:\/\//);
    const js = await call(h.url, "GET", "/console/app.js");
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(js.headers.get("content-security-policy")).toMatch(/^default-src 'self'/);
    // The bundle never writes markup from data: no innerHTML anywhere in the console.
    expect(js.text).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
  });

  it("a page path gets the page; an unknown file is 404 NOT_FOUND", async () => {
    expect((await call(h.url, "GET", "/console/decisions")).text).toContain("/console/app.js");
    const missing = await call(h.url, "GET", "/console/nope.js");
    expect({ status: missing.status, code: missing.body?.error?.code }).toEqual({ status: 404, code: "NOT_FOUND" });
    const traversal = await call(h.url, "GET", "/console/..%2F..%2Fpackage.json");
    expect(traversal.status).toBe(404);
  });
});

describe("GET /v1/decisions/stream", () => {
  it("refuses a missing token (401) and a client token (403)", async () => {
    const none = await call(h.url, "GET", "/v1/decisions/stream");
    expect({ status: none.status, code: none.body?.error?.code }).toEqual({ status: 401, code: "UNAUTHENTICATED" });
    const client = await call(h.url, "GET", "/v1/decisions/stream", { token: TOKENS.client });
    expect({ status: client.status, code: client.body?.error?.code }).toEqual({ status: 403, code: "FORBIDDEN" });
  });

  it("streams each chain with per-hook outcome, duration, annotations (secrets redacted) and the modification diff", async () => {
    const install = await call(h.url, "PUT", "/v1/bundles/console-demo", { token: TOKENS.operator, raw: JSON.stringify(signed(consoleManifest(), CONSOLE_CODE)), contentType: "application/vnd.vcp.bundle+json" });
    expect(install.status).toBe(201);
    const stream = await openStream(h.url, TOKENS.operator, "?session=e2e-console");
    try {
      expect(stream.res.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expect(await stream.next("hello")).toMatchObject({ max_events_per_second: 50, filter: { session: "e2e-console" } });
      // Another session's chain is filtered out server-side.
      for (const session of ["someone-else", "e2e-console"]) {
        const opened = await call(h.url, "POST", "/v1/sessions", { token: TOKENS.client, body: { session_id: session, context: { note: "mail ana@example.org" }, constitution } });
        expect(opened.status).toBe(201);
        const fired = await call(h.url, "POST", `/v1/sessions/${session}/chains/pre_inject`, { token: TOKENS.client, body: { event: events.pre_inject } });
        expect(fired.status).toBe(200);
      }
      const d = await stream.next("decision");
      expect(d).toMatchObject({ type: "pre_inject", session_id: "e2e-console", owner: "app", status: "completed" });
      expect(d.hooks).toHaveLength(1);
      expect(d.hooks[0]).toMatchObject({ hook: "redact_note", bundle: "console-demo", status: "modify", outcome: "ok" });
      expect(typeof d.hooks[0].duration_ms).toBe("number");
      expect(d.hooks[0].annotations.label).toBe(XSS);
      expect(d.hooks[0].annotations.seen).toBe("Bearer [REDACTED]");
      expect(d.hooks[0].modification).toEqual([{ op: "replace", path: "/context/note", value: "mail [email]" }]);
    } finally {
      stream.close();
    }
  });

  it("server shutdown ends an open stream instead of waiting for it", async () => {
    const own = await startConsoleHarness({ stream: { heartbeatMs: 60_000 } });
    const stream = await openStream(own.url, TOKENS.operator);
    await stream.next("hello");
    const ended = stream.ended();
    await own.close();
    expect(await ended).toBe(true);
  });
});

describe("GET /v1/console/security-report", () => {
  it("404 with how to make one until the bench has run; then the report, and report.html as a script-free download", async () => {
    const before = await call(h.url, "GET", "/v1/console/security-report", { token: TOKENS.operator });
    expect({ status: before.status, code: before.body?.error?.code }).toEqual({ status: 404, code: "NOT_FOUND" });
    expect(before.body.error.message).toContain("npm run bench:sandbox");
    writeFileSync(join(h.reportDir, "report.json"), JSON.stringify({ summary: { verdict: "PASS" } }));
    writeFileSync(join(h.reportDir, "report.html"), "<!doctype html><p>report</p>");
    const after = await call(h.url, "GET", "/v1/console/security-report", { token: TOKENS.operator });
    expect(after.status).toBe(200);
    expect(after.body.summary.verdict).toBe("PASS");
    const html = await call(h.url, "GET", "/v1/console/security-report.html", { token: TOKENS.operator });
    expect(html.status).toBe(200);
    expect(html.headers.get("content-security-policy")).toMatch(/^default-src 'none'.*sandbox/);
    expect(html.headers.get("content-disposition")).toMatch(/^attachment/);
    const client = await call(h.url, "GET", "/v1/console/security-report", { token: TOKENS.client });
    expect(client.status).toBe(403);
  });
});
