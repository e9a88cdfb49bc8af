/**
 * 60 MB bodies that the server will refuse anyway: without a token to a route that does not exist
 * and to a DELETE route, with Content-Length and chunked, and with a client token to a DELETE route
 * (bodyless routes had no body limit). Limits apply before parsing, on every route, authenticated or
 * not (DESIGN §6.5): each must be answered from the headers (or stopped at the body limit) without
 * the server reading the body, so its memory does not grow by the body size.
 */
import { Checks, type Scenario } from "../scenario.js";
import { TENANT_TOKENS, send, sendHugeBody, startTenantServer } from "../http-tenants.js";

const BODY = 60 * 1024 * 1024;
/** Loopback socket buffers hold a few MB; a server that reads the body takes all 60. */
const MAX_SENT = 24 * 1024 * 1024;
/** RSS growth allowed over all attempts: far below one copy of the body. */
const MAX_RSS_GROWTH = 40 * 1024 * 1024;

const ATTEMPTS: ReadonlyArray<{ name: string; method: string; path: string; declared: boolean; token?: string; status: number; code: string }> = [
  { name: "unknown route, no token, Content-Length", method: "POST", path: "/v1/no-such-route", declared: true, status: 404, code: "NOT_FOUND" },
  { name: "unknown route, no token, chunked", method: "POST", path: "/v1/no-such-route", declared: false, status: 404, code: "NOT_FOUND" },
  { name: "DELETE, no token, Content-Length", method: "DELETE", path: "/v1/sessions/s1", declared: true, status: 401, code: "UNAUTHENTICATED" },
  { name: "DELETE, no token, chunked", method: "DELETE", path: "/v1/sessions/s1", declared: false, status: 401, code: "UNAUTHENTICATED" },
  { name: "DELETE, client token, Content-Length", method: "DELETE", path: "/v1/sessions/s1", declared: true, token: TENANT_TOKENS.b, status: 413, code: "PAYLOAD_TOO_LARGE" },
  { name: "DELETE, client token, chunked", method: "DELETE", path: "/v1/sessions/s1", declared: false, token: TENANT_TOKENS.b, status: 413, code: "PAYLOAD_TOO_LARGE" },
  { name: "GET, client token, Content-Length", method: "GET", path: "/v1/sessions/s1", declared: true, token: TENANT_TOKENS.b, status: 413, code: "PAYLOAD_TOO_LARGE" },
  // fastify never reads a GET body: the route answers and the connection is closed instead of drained.
  { name: "GET, client token, chunked", method: "GET", path: "/v1/sessions/s1", declared: false, token: TENANT_TOKENS.b, status: 404, code: "SESSION_NOT_FOUND" },
];

export const scenario: Scenario = {
  id: "http-unauthenticated-huge-body",
  category: "tenant-isolation",
  title: "60 MB bodies to an unknown route and to DELETE/GET routes, with and without a token",
  expected: "401/404/413 from the headers or at the body limit; the server reads at most the socket buffers and its RSS does not grow by the body size",
  async run() {
    const checks = new Checks();
    const t = await startTenantServer();
    let servedAfter = false;
    const observed: string[] = [];
    try {
      global.gc?.();
      const rssBefore = process.memoryUsage().rss;
      let rssPeak = rssBefore;
      for (const a of ATTEMPTS) {
        const out = await sendHugeBody(t.url, a.method, a.path, { totalBytes: BODY, declared: a.declared, ...(a.token !== undefined ? { token: a.token } : {}) });
        rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
        observed.push(`${a.name}: ${out.status} after ${(out.sentBeforeAnswer / 1048576).toFixed(1)} MB`);
        checks.check(out.status === a.status && out.code === a.code, `${a.name}: answered ${out.status} ${out.code ?? ""}, expected ${a.status} ${a.code}`);
        checks.check(out.sentBeforeAnswer <= MAX_SENT, `${a.name}: the server took ${(out.sentBeforeAnswer / 1048576).toFixed(1)} MB of a body it refused before answering`);
      }
      const growth = rssPeak - rssBefore;
      observed.push(`RSS +${(growth / 1048576).toFixed(0)} MB`);
      checks.check(growth <= MAX_RSS_GROWTH, `server RSS grew by ${(growth / 1048576).toFixed(0)} MB while refusing the bodies`);
      const healthy = await send(t.url, "GET", "/healthz", null);
      const opened = await send(t.url, "POST", "/v1/sessions", TENANT_TOKENS.a, { context: {}, constitution: { id: "c", version: "1", rules: [] } });
      servedAfter = healthy.status === 200 && opened.status === 201;
    } finally {
      await t.close();
    }
    return checks.outcome(observed.join("; "), servedAfter);
  },
};
