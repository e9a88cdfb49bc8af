// Request ids, readiness and refusal logging: what an operator needs to answer "why did this call fail?".
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime } from "../../src/index.js";
import { createServer } from "../../src/server/app.js";
import { call, settings, TOKENS } from "./helpers.js";

const lines: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    for (const line of chunk.toString("utf8").split("\n").filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
    done();
  },
});

let runtime: Awaited<ReturnType<typeof createRuntime>>;
let server: Awaited<ReturnType<typeof createServer>>;
let url: string;

beforeAll(async () => {
  runtime = await createRuntime({ requireSignatures: false, audit: false, sandbox: { threads: 1 } } as never);
  server = await createServer({ runtime: runtime as never, settings: settings(), logger: pino({ level: "info" }, sink) as never });
  url = await server.listen("127.0.0.1", 0);
});

afterAll(async () => {
  await server?.close();
  await runtime?.close();
});

describe("observability over HTTP", () => {
  test("X-Request-Id: a well-formed one is echoed, anything else replaced by a fresh id", async () => {
    const mine = await fetch(`${url}/healthz`, { headers: { "x-request-id": "trace-abc.123" } });
    expect(mine.headers.get("x-request-id")).toBe("trace-abc.123");
    const hostile = await fetch(`${url}/healthz`, { headers: { "x-request-id": "bad id\twith spaces" } });
    expect(hostile.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    const none = await fetch(`${url}/v1/bundles`);
    expect(none.status).toBe(401);
    expect(none.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  test("GET /readyz is 200 while the sandbox serves", async () => {
    const ready = await call(url, "GET", "/readyz");
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready" });
  });

  test("every line logged for a request carries its id under one key, request_id", async () => {
    lines.length = 0;
    await fetch(`${url}/v1/bundles`, { headers: { authorization: "Bearer wrong-token-123", "x-request-id": "req-key-1" } });
    await new Promise((r) => setTimeout(r, 50));
    const ofRequest = lines.filter((l) => JSON.stringify(l).includes("req-key-1"));
    expect(ofRequest.length).toBeGreaterThan(0);
    for (const line of ofRequest) {
      // fastify's default label is reqId; our own calls once added req_id beside it.
      expect(Object.keys(line).filter((k) => /^req(uest)?_?id$/i.test(k))).toEqual(["request_id"]);
      expect(line["request_id"]).toBe("req-key-1");
    }
  });

  test("401/403/413 refusals are logged at info with the request id and route, never the token", async () => {
    lines.length = 0;
    const res = await fetch(`${url}/v1/bundles`, { headers: { authorization: "Bearer wrong-token-123", "x-request-id": "req-refused-1" } });
    expect(res.status).toBe(401);
    await call(url, "GET", "/v1/bundles", { token: TOKENS.client }); // 403: clients may not list bundles
    await new Promise((r) => setTimeout(r, 50));
    const refused = lines.filter((l) => l["msg"] === "request refused");
    expect(refused).toEqual(expect.arrayContaining([
      expect.objectContaining({ level: 30, status: 401, code: "UNAUTHENTICATED", request_id: "req-refused-1", route: "/v1/bundles" }),
      expect.objectContaining({ level: 30, status: 403, code: "FORBIDDEN", principal: "app" }),
    ]));
    expect(JSON.stringify(lines)).not.toContain("wrong-token-123");
  });
});

describe("Retry-After", () => {
  test("a rate-limited registry change is 429 RATE_LIMITED with Retry-After from the limiter", async () => {
    const { startHarness, op, signed, guardManifest, GUARD_CODE } = await import("./helpers.js");
    const h = await startHarness({ runtime: { registrationsPerMinute: 1 } });
    try {
      expect((await op(h, "PUT", "/v1/bundles/guard", signed(guardManifest(), GUARD_CODE))).status).toBe(201);
      const limited = await op(h, "PUT", "/v1/bundles/guard", signed(guardManifest({ version: "1.0.1" }), GUARD_CODE));
      expect(limited.status).toBe(429);
      expect(limited.body.error.code).toBe("RATE_LIMITED");
      const seconds = Number(limited.headers.get("retry-after"));
      expect(Number.isInteger(seconds) && seconds >= 1 && seconds <= 60).toBe(true);
    } finally {
      await h.close();
    }
  });
});
