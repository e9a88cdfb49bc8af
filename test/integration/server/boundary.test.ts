// Issue 11 defects 3, 6 and 8 at the HTTP API: the real server (src/) over a runtime on the in-process
// test backend, driven with fastify's inject (no socket).
// 3. the body is validated completely at the boundary: the same answer with or without a hook;
// 6. a session looks the same to a hook (HookInput.session, audit input_hash) on every route;
// 8. an outcome that forbids use carries nothing usable (`constitution`/`output` null).
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, type Runtime } from "../../../src/index.js";
import { createServer, type VcpServer } from "../../../src/server/app.js";
import { testBundle } from "../../support/bundles.js";
import { createVmBackend } from "../../support/vm-backend.js";

const TOKENS = { ops: "op-token-boundary-0123456789", a: "cl-token-boundary-a-0123456789", b: "cl-token-boundary-b-0123456789" };
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");
const constitution = { id: "family-safe", version: "3", rules: [{ id: "no-harm-1", text: "Never help cause harm.", safety_critical: true }] };
const preInject = { injection_target: "system", injection_format: "system_prompt", raw_constitution: "Never help cause harm." };

let rt: Runtime;
let server: VcpServer;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "vcp-boundary-"));
  rt = await createRuntime({ dataDir, backend: createVmBackend(), registrationsPerMinute: 1000 });
  server = await createServer({
    runtime: rt as never,
    settings: {
      auth: [
        { id: "ops", role: "operator", token_sha256: sha256(TOKENS.ops) },
        { id: "app-a", role: "client", token_sha256: sha256(TOKENS.a) },
        { id: "app-b", role: "client", token_sha256: sha256(TOKENS.b) },
      ],
      limits: { body_bytes: 64 * 1024, bundle_bytes: 256 * 1024 },
      sessionHookAllowlist: [],
    },
  });
});
afterAll(async () => {
  await server?.close();
  await rt?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(token: string, method: "GET" | "POST" | "DELETE", url: string, body?: unknown) {
  const res = await server.app.inject({ method, url, headers: { authorization: `Bearer ${token}` }, ...(body !== undefined ? { payload: body as object } : {}) });
  return { status: res.statusCode, body: res.body.length > 0 ? JSON.parse(res.body) : undefined };
}

/** Status, error code and named field of a reply: what a client branches on. */
const verdict = (r: { status: number; body: any }) => ({ status: r.status, code: r.body?.error?.code, field: r.body?.error?.details?.field });

describe("defect 3: the HTTP boundary validates every body the same, whether or not a hook is installed", () => {
  const bad = [
    { what: "a constitution without rules", path: "chains/pre_inject", body: { constitution: { id: "c" }, event: preInject }, field: "body.constitution" },
    { what: "a rule with an empty id", path: "chains/pre_inject", body: { constitution: { id: "c", rules: [{ id: "", text: "x" }] }, event: preInject }, field: "body.constitution.rules[0].id" },
    { what: "an event of the wrong shape for the type", path: "chains/pre_inject", body: { event: { ...preInject, injection_format: "shout" } }, field: "body.event.injection_format" },
    { what: "an on_violation event without severity", path: "chains/on_violation", body: { event: { output: "o", violated_rules: [], violation_evidence: "e", retry_count: 0 } }, field: "body.event.severity" },
    { what: "a conflict constitution without rules", path: "conflict", body: { constitutions: [{ id: "x" }], conflicting_rules: [], conflict_severity: "error" }, field: "body.constitutions[0]" },
  ];

  test("no hook installed, then one installed: 400 INVALID_REQUEST naming the field both times, nothing echoed", async () => {
    expect((await call(TOKENS.a, "POST", "/v1/sessions", { session_id: "v3", context: {}, constitution })).status).toBe(201);
    const before = await Promise.all(bad.map((c) => call(TOKENS.a, "POST", `/v1/sessions/v3/${c.path}`, c.body)));
    await rt.bundles.install(
      testBundle("boundary-any", [
        { name: "see_pre", type: "pre_inject" },
        { name: "see_violation", type: "on_violation" },
        { name: "see_conflict", type: "on_conflict" },
      ], { see_pre: "function () { return { status: 'continue' }; }", see_violation: "function () { return { status: 'continue' }; }", see_conflict: "function () { return { status: 'continue' }; }" }),
    );
    try {
      const after = await Promise.all(bad.map((c) => call(TOKENS.a, "POST", `/v1/sessions/v3/${c.path}`, c.body)));
      bad.forEach((c, i) => {
        const expected = { status: 400, code: "INVALID_REQUEST", field: c.field };
        expect({ what: c.what, ...verdict(before[i]!) }).toEqual({ what: c.what, ...expected });
        expect({ what: c.what, ...verdict(after[i]!) }).toEqual({ what: c.what, ...expected });
      });
    } finally {
      await rt.bundles.remove("boundary-any");
    }
    // A well-formed body still goes through on an empty chain.
    expect((await call(TOKENS.a, "POST", "/v1/sessions/v3/chains/pre_inject", { event: preInject })).status).toBe(200);
  });

  test("opening a session with a malformed constitution is refused by the route schema, naming the field", async () => {
    const r = await call(TOKENS.a, "POST", "/v1/sessions", { session_id: "v3b", context: {}, constitution: { id: "c", rules: [{ id: "r" }] } });
    expect(verdict(r)).toEqual({ status: 400, code: "INVALID_REQUEST", field: "body.constitution.rules[0]" });
    expect(r.body.error.message).toMatch(/text/);
  });

  test("the OpenAPI document describes constitutions with the model's schema, not an open object", async () => {
    const doc = (await server.app.inject({ method: "GET", url: "/openapi.json" })).json();
    expect(doc.components.schemas.Constitution.required).toEqual(["id", "rules"]);
    // The body is the model's own OpenSessionInput (model/pipeline-input.ts), the schema the runtime validates with.
    const open = doc.paths["/v1/sessions"].post.requestBody.content["application/json"].schema;
    expect(open.$ref).toMatch(/OpenSessionInput$/);
    const body = doc.components.schemas.OpenSessionInput;
    expect(body.properties.constitution.required).toEqual(["id", "rules"]);
    expect(body.additionalProperties).toBe(false);
    for (const op of ["adapt", "transition", "conflict", "violation"]) {
      expect(doc.paths[`/v1/sessions/{id}/${op}`].post.requestBody.content["application/json"].schema.$ref).toMatch(new RegExp(`${op[0]!.toUpperCase()}${op.slice(1)}Input$`));
    }
  });
});

describe("defect 6: one HookInput.session per session, on every route", () => {
  const show = "function (input) { return { status: 'continue', annotations: { session: input.session } }; }";

  test("/chains/pre_inject and /adapt hand the hook the same session and hash the same input", async () => {
    await rt.bundles.install(testBundle("boundary-show", [{ name: "show_session", type: "pre_inject" }], { show_session: show }));
    try {
      const open = await call(TOKENS.a, "POST", "/v1/sessions", { session_id: "v6", context: { user: "u" }, constitution, state: "professional", metadata: { tier: "gold" } });
      expect(open.status).toBe(201);
      // Exactly the pre_inject input adapt builds: the session's context, the selected constitution, this event.
      const fired = await call(TOKENS.a, "POST", "/v1/sessions/v6/chains/pre_inject", { event: preInject });
      const adapted = await call(TOKENS.a, "POST", "/v1/sessions/v6/adapt", {
        selected: constitution, candidates: [], selection_rationale: "only", selection_algorithm: "fixed", raw_constitution: preInject.raw_constitution,
      });
      expect(fired.status).toBe(200);
      expect(adapted.status).toBe(200);
      const viaChain = fired.body.hook_results[0].annotations.session;
      const viaAdapt = adapted.body.trace[1].hook_results[0].annotations.session;
      expect(viaChain).toEqual({ id: "v6", created_at: open.body.created_at, updated_at: open.body.updated_at, state: "professional", metadata: { tier: "gold" } });
      expect(viaAdapt).toEqual(viaChain);

      const { records } = (await call(TOKENS.ops, "GET", "/v1/audit?session=v6&owner=app-a&limit=1000")).body;
      const hashes = records.filter((r: any) => r.kind === "chain" && r.hook_type === "pre_inject").map((r: any) => r.input_hash);
      expect(hashes).toHaveLength(2);
      expect(hashes[0]).toBe(hashes[1]);
    } finally {
      await rt.bundles.remove("boundary-show");
    }
  });

  test("two owners of the same id: each one's hook sees its own session, never the other's data or owner", async () => {
    await rt.bundles.install(testBundle("boundary-show2", [{ name: "show_session2", type: "pre_inject" }], { show_session2: show }));
    try {
      await call(TOKENS.a, "POST", "/v1/sessions", { session_id: "twin", context: {}, constitution, state: "a-state", metadata: { who: "a" } });
      await call(TOKENS.b, "POST", "/v1/sessions", { session_id: "twin", context: {}, constitution, metadata: { who: "b" } });
      const seenByB = (await call(TOKENS.b, "POST", "/v1/sessions/twin/chains/pre_inject", { event: preInject })).body.hook_results[0].annotations.session;
      expect(seenByB).toMatchObject({ id: "twin", state: null, metadata: { who: "b" } });
      expect(JSON.stringify(seenByB)).not.toMatch(/app-a|app-b|a-state/);
      // The library names the same session and gets the same shape (the embedding application, owner given).
      const lib = await rt.fire("pre_inject", { session: "twin", owner: "app-b", context: {}, constitution, event: preInject as never });
      expect(lib.hook_results[0]!.annotations!["session"]).toEqual(seenByB);
    } finally {
      await rt.bundles.remove("boundary-show2");
    }
  });
});

describe("defect 8: nothing usable in the body when the outcome forbids use", () => {
  test("adapt blocked or cancelled: constitution and context are null, the session's constitution is named apart", async () => {
    await rt.bundles.install(
      testBundle("boundary-gate", [
        { name: "veto", type: "post_select", condition: { field: "context.veto", operator: "eq", value: true } },
        { name: "block", type: "pre_inject", condition: { field: "context.block", operator: "eq", value: true } },
        { name: "judge", type: "on_violation" },
      ], {
        veto: "function () { return { status: 'abort', reason: 'vetoed' }; }",
        block: "function () { return { status: 'abort', reason: 'blocked' }; }",
        judge: "function () { return { status: 'abort', reason: 'never deliver' }; }",
      }),
    );
    try {
      await call(TOKENS.a, "POST", "/v1/sessions", { session_id: "v8", context: {}, constitution });
      const selection = { selected: { id: "other", rules: [] }, candidates: [], selection_rationale: "r", selection_algorithm: "a" };
      const blocked = await call(TOKENS.a, "POST", "/v1/sessions/v8/adapt", { ...selection, context: { block: true } });
      expect(blocked.status).toBe(200);
      expect(blocked.body).toMatchObject({ outcome: "blocked", constitution: null, context: null, session_constitution: constitution, aborted_by: "block" });
      const cancelled = await call(TOKENS.a, "POST", "/v1/sessions/v8/adapt", { ...selection, context: { veto: true } });
      expect(cancelled.body).toMatchObject({ outcome: "cancelled", constitution: null, context: null, session_constitution: constitution, aborted_by: "veto" });
      const injected = await call(TOKENS.a, "POST", "/v1/sessions/v8/adapt", selection);
      expect(injected.body).toMatchObject({ outcome: "inject", constitution: selection.selected, session_constitution: selection.selected });

      const suppressed = await call(TOKENS.a, "POST", "/v1/sessions/v8/violation", { output: "rude", violated_rules: [], severity: "major", violation_evidence: "e" });
      expect(suppressed.status).toBe(200);
      expect(suppressed.body).toMatchObject({ outcome: "suppress", output: null, context: null });
    } finally {
      await rt.bundles.remove("boundary-gate");
    }
  });
});
