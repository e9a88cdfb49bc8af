// Input bounds over HTTP (issue 10, finding 2): a deep or oversized input is a 400 with the error
// code INVALID_INPUT, from the runtime's own limit module, and changes nothing: no session, no chain
// in flight, nothing audited, and the server keeps serving. (Before, a deep context reached the audit
// hash first and came back as a 500.)
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GUARD_CODE, cl, constitution, events, guardManifest, op, signed, startHarness, type Harness } from "./helpers.js";

let h: Harness;

beforeAll(async () => {
  // input_bytes below the harness's 64 KiB body limit, so the runtime's size bound is reachable over HTTP.
  h = await startHarness({ runtime: { inputLimits: { maxBytes: 8192 } } });
  expect((await op(h, "PUT", "/v1/bundles/guard", signed(guardManifest(), GUARD_CODE))).status).toBe(201);
  expect((await cl(h, "POST", "/v1/sessions", { session_id: "live", context: { note: "hi" }, constitution })).status).toBe(201);
}, 60_000);
afterAll(async () => {
  await h?.close();
});

/** JSON text of an object nested `depth` levels (built as text: the test must not recurse either). */
const deepText = (depth: number) => `${'{"d":'.repeat(depth)}{}${"}".repeat(depth)}`;

async function raw(method: string, path: string, body: string) {
  const res = await fetch(`${h.url}${path}`, {
    method,
    headers: { authorization: "Bearer cl-token-e2e-0123456789", "content-type": "application/json" },
    body,
  });
  return { status: res.status, body: (await res.json()) as any };
}

async function unchanged(fn: () => Promise<void>) {
  const head = h.runtime.audit.head();
  const sessions = (await h.runtime.sessions.list()).map((s) => s.session_id).sort();
  await fn();
  expect(h.runtime.audit.head()).toEqual(head);
  expect((await h.runtime.sessions.list()).map((s) => s.session_id).sort()).toEqual(sessions);
  expect(h.runtime.status().sandbox).toMatchObject({ inFlight: 0, restarts: 0 });
  // Still serving: a normal chain on the same session and plan.
  const ok = await cl(h, "POST", "/v1/sessions/live/chains/pre_inject", { event: events.pre_inject });
  expect(ok.status).toBe(200);
  expect(ok.body.hook_results[0]).toMatchObject({ hook: "redact_pii", outcome: "ok" });
}

describe("deep and oversized inputs are 400 INVALID_INPUT and change nothing", () => {
  it.each([
    ["POST /v1/sessions/live/chains/pre_inject, context 6,000 deep", "/v1/sessions/live/chains/pre_inject", `{"context":${deepText(6000)},"constitution":${JSON.stringify(constitution)},"event":${JSON.stringify(events.pre_inject)}}`, "body"],
    ["POST /v1/sessions/live/chains/pre_inject, context 65 deep (caught by the runtime, naming the field)", "/v1/sessions/live/chains/pre_inject", `{"context":${deepText(64)},"event":${JSON.stringify(events.pre_inject)}}`, "context"],
    ["POST /v1/sessions, metadata 3,000 deep", "/v1/sessions", `{"session_id":"deep","context":{},"constitution":${JSON.stringify(constitution)},"metadata":${deepText(3000)}}`, "body"],
    ["POST /v1/sessions, context one level over", "/v1/sessions", `{"session_id":"deep","context":${deepText(64)},"constitution":${JSON.stringify(constitution)}}`, "context"],
    ["POST /v1/sessions/live/transition, metadata 65 deep", "/v1/sessions/live/transition", `{"to":"x","trigger":"t","metadata":${deepText(64)}}`, "metadata"],
    ["POST /v1/sessions/live/chains/pre_inject, 10 KB context over input_bytes", "/v1/sessions/live/chains/pre_inject", JSON.stringify({ context: { blob: "z".repeat(10_000) }, event: events.pre_inject }), "context"],
  ])("%s", async (_what, path, body, field) => {
    await unchanged(async () => {
      const r = await raw("POST", path, body);
      expect({ status: r.status, code: r.body?.error?.code }).toEqual({ status: 400, code: "INVALID_INPUT" });
      expect(r.body.error.details.field).toBe(field);
      expect(r.body.error.message).toMatch(/limits\.(json_depth|input_bytes)/);
    });
  });
});
