// HTTP API end to end (DESIGN §6.2): real sandbox, real server on an ephemeral loopback port.
// Every refusal asserts the status AND the error code, and that nothing changed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  GUARD_CODE,
  TOKENS,
  call,
  cl,
  constitution,
  events,
  guardManifest,
  keys,
  op,
  settings,
  sha256,
  signed,
  startHarness,
  type Harness,
} from "./helpers.js";

let h: Harness;
const has = (name: string) => typeof (h.runtime as any)[name] === "function";
const hasSessions = () => typeof (h.runtime as any).sessions?.open === "function";

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

/** Registry and bundle state a refused request must leave untouched. */
async function snapshot() {
  const bundles = await op(h, "GET", "/v1/bundles");
  const hooks = await op(h, "GET", "/v1/hooks");
  expect(bundles.status).toBe(200);
  expect(hooks.status).toBe(200);
  // `errors` records refused install attempts by design; everything else must stay as it was.
  const stable = bundles.body.bundles.map(({ errors: _errors, ...rest }: any) => rest);
  return { bundles: stable, hooks: hooks.body.hooks.map((x: any) => `${x.scope}:${x.type}:${x.name}:${x.priority}:${x.action?.digest ?? ""}`) };
}

function expectError(reply: { status: number; body: any }, status: number, code: string) {
  expect({ status: reply.status, code: reply.body?.error?.code }).toEqual({ status, code });
  expect(typeof reply.body.error.message).toBe("string");
}

describe("ops routes", () => {
  it("GET /healthz needs no token", async () => {
    const r = await call(h.url, "GET", "/healthz");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: "ok" });
  });

  it("GET /openapi.json documents every route with its schemas", async () => {
    const r = await call(h.url, "GET", "/openapi.json");
    expect(r.status).toBe(200);
    expect(r.body.openapi).toMatch(/^3\./);
    const paths = Object.keys(r.body.paths);
    for (const p of [
      "/healthz",
      "/metrics",
      "/v1/status",
      "/v1/bundles",
      "/v1/bundles/{name}",
      "/v1/hooks",
      "/v1/sessions",
      "/v1/sessions/{id}",
      "/v1/sessions/{id}/hooks",
      "/v1/sessions/{id}/chains/{type}",
      "/v1/sessions/{id}/adapt",
      "/v1/sessions/{id}/transition",
      "/v1/sessions/{id}/conflict",
      "/v1/sessions/{id}/violation",
      "/v1/audit",
      "/v1/audit/head",
    ]) {
      expect(paths).toContain(p);
    }
    expect(r.body.paths["/v1/bundles/{name}"].put.requestBody).toBeDefined();
    expect(r.body.paths["/v1/sessions/{id}/chains/{type}"].post.responses["200"]).toBeDefined();
    expect(r.body.components.securitySchemes.operator.scheme).toBe("bearer");
    // Generated clients name methods after operationIds: every operation has one, unique, and a declared tag.
    const operations = Object.values(r.body.paths as Record<string, Record<string, { operationId?: string; tags?: string[] }>>).flatMap((p) => Object.values(p));
    const ids = operations.map((o) => o.operationId);
    expect(ids.every((id) => typeof id === "string" && /^[a-z][A-Za-z]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    const declared = new Set((r.body.tags as Array<{ name: string }>).map((t) => t.name));
    expect(operations.every((o) => (o.tags ?? []).every((t) => declared.has(t)))).toBe(true);
    expect(r.body.paths["/v1/sessions/{id}"].get.operationId).toBe("getSession");
  });

  it("GET /openapi.json: servers, text/plain metrics, and per status the closed enum of error codes from the error table", async () => {
    const { errorStatusTable } = await import("../../src/server/errors.js");
    const r = await call(h.url, "GET", "/openapi.json");
    expect(r.body.servers).toEqual([{ url: h.url, description: expect.any(String) }]);
    expect(Object.keys(r.body.paths["/metrics"].get.responses["200"].content)).toEqual(["text/plain"]);
    const schemas = r.body.components.schemas;
    // Every code of the table is in exactly the enum of its status, and in no other.
    for (const [code, status] of errorStatusTable()) {
      expect(schemas[`VcpError${status}`].properties.error.properties.code.enum, code).toContain(code);
    }
    const inEnums = Object.keys(schemas).filter((k) => /^VcpError\d{3}$/.test(k)).flatMap((k) => schemas[k].properties.error.properties.code.enum);
    expect(inEnums.sort()).toEqual([...errorStatusTable().keys()].sort());
    expect(schemas.VcpError429.properties.error.properties.code.enum).toEqual(["APPROVAL_LIMIT", "RATE_LIMITED", "SESSION_LIMIT", "STREAM_LIMIT"]);
    // A route names the statuses it answers, each with its own schema.
    const open = r.body.paths["/v1/sessions"].post.responses;
    expect(Object.keys(open).sort()).toEqual(["201", "400", "401", "403", "409", "413", "415", "429", "500", "503"]);
    expect(open["429"].content["application/json"].schema.$ref).toBe("#/components/schemas/VcpError429");
    // Hook results say why a hook was skipped: the outcome is a closed enum, skip reasons included.
    expect(schemas.HookExecution.properties.outcome.enum).toEqual(expect.arrayContaining(["skipped_predicate", "skipped_disabled", "skipped_deadline"]));
    expect(schemas.HookExecution.properties.bundle_digest.type).toBe("string");
  });

  it("GET /metrics is Prometheus text for the operator", async () => {
    const r = await op(h, "GET", "/metrics");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(r.text).toMatch(/# TYPE vcp_http_requests_total counter/);
    expect(r.text).toMatch(/# TYPE process_resident_memory_bytes gauge/);
    if (typeof (h.runtime as any).metrics === "function") expect(r.text).toMatch(/# TYPE vcp_chains_total counter/);
    // runtime and server registries are concatenated: no metric may be declared twice
    const types = r.text.split("\n").filter((l) => l.startsWith("# TYPE "));
    expect(new Set(types).size).toBe(types.length);
  });
});

describe("authentication and roles", () => {
  it("no token → 401 UNAUTHENTICATED", async () => {
    expectError(await call(h.url, "GET", "/v1/bundles"), 401, "UNAUTHENTICATED");
    expectError(await call(h.url, "POST", "/v1/sessions", { body: { context: {}, constitution } }), 401, "UNAUTHENTICATED");
  });
  it("wrong token → 401 UNAUTHENTICATED, with a WWW-Authenticate challenge", async () => {
    const r = await call(h.url, "GET", "/v1/bundles", { token: "not-a-real-token" });
    expectError(r, 401, "UNAUTHENTICATED");
    expect(r.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expectError(await call(h.url, "GET", "/v1/status", { token: `${TOKENS.operator}x` }), 401, "UNAUTHENTICATED");
  });
  it("a malformed Authorization header → 401", async () => {
    const res = await fetch(`${h.url}/v1/bundles`, { headers: { authorization: `Basic ${TOKENS.operator}` } });
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("UNAUTHENTICATED");
  });
  it("client token on operator routes → 403 FORBIDDEN", async () => {
    const before = await snapshot();
    expectError(await cl(h, "GET", "/v1/bundles"), 403, "FORBIDDEN");
    expectError(await cl(h, "PUT", "/v1/bundles/guard", signed(guardManifest(), GUARD_CODE)), 403, "FORBIDDEN");
    expectError(await cl(h, "DELETE", "/v1/bundles/guard"), 403, "FORBIDDEN");
    expectError(await cl(h, "GET", "/v1/audit"), 403, "FORBIDDEN");
    expectError(await cl(h, "GET", "/v1/status"), 403, "FORBIDDEN");
    expectError(await cl(h, "GET", "/metrics"), 403, "FORBIDDEN");
    expect(await snapshot()).toEqual(before);
  });
  it("operator token opening a session → 403 FORBIDDEN; on an existing session's routes it acts like its owner (DESIGN §6.5)", async () => {
    expectError(await op(h, "POST", "/v1/sessions", { context: {}, constitution }), 403, "FORBIDDEN");
    // Operators see every session: for one that does not exist they get what its owner would get.
    expectError(await op(h, "POST", "/v1/sessions/s1/chains/pre_inject", { event: events.pre_inject }), 404, "SESSION_NOT_FOUND");
    expectError(await op(h, "POST", "/v1/sessions/s1/hooks", { bundle: "guard", hook: "session_observer" }), 404, "SESSION_NOT_FOUND");
    expectError(await op(h, "DELETE", "/v1/sessions/s1"), 404, "SESSION_NOT_FOUND");
  });
  it("unknown route → 404 NOT_FOUND in the error shape", async () => {
    expectError(await op(h, "GET", "/v1/nope"), 404, "NOT_FOUND");
  });

  it("a known path with a wrong method → 405 METHOD_NOT_ALLOWED with Allow, before authentication", async () => {
    const r = await call(h.url, "PATCH", "/v1/bundles/guard");
    expectError(r, 405, "METHOD_NOT_ALLOWED");
    expect(r.headers.get("allow")).toBe("DELETE, GET, HEAD, PUT");
    const chain = await call(h.url, "GET", "/v1/sessions/s1/chains/pre_inject", { token: TOKENS.client });
    expectError(chain, 405, "METHOD_NOT_ALLOWED");
    expect(chain.headers.get("allow")).toBe("POST");
    // A path no route has stays 404, whatever the method.
    expectError(await call(h.url, "PATCH", "/v1/bundles/guard/extra"), 404, "NOT_FOUND");
  });
});

describe("bundle upload", () => {
  it("a signed bundle installs: 201 {bundle, version, digest, hooks}", async () => {
    const artifact = signed(guardManifest(), GUARD_CODE);
    const r = await op(h, "PUT", "/v1/bundles/guard", artifact);
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ bundle: "guard", version: "1.0.0", digest: artifact.digest, unchanged: false });
    expect(r.body.hooks).toEqual(["redact_pii", "audit_selection", "gate_transition", "resolve_conflict", "judge_violation"]);
    const list = await op(h, "GET", "/v1/bundles");
    expect(list.body.bundles.map((b: any) => b.bundle)).toEqual(["guard"]);
    // Metrics can say which bundle is installed, by whom it was signed, and count the install.
    const metrics = (await op(h, "GET", "/metrics")).text;
    expect(metrics).toContain(`vcp_bundle_info{bundle="guard",version="1.0.0",digest="${artifact.digest}",trust="deployment",signed_by="ops"} 1`);
    expect(metrics).toMatch(/vcp_bundle_changes_total\{result="installed"\} [1-9]/);
    const one = await op(h, "GET", "/v1/bundles/guard");
    expect(one.status).toBe(200);
    expect(one.body.digest).toBe(artifact.digest);
    const chain = await op(h, "GET", "/v1/hooks?type=pre_inject");
    expect(chain.body.hooks.map((x: any) => x.name)).toEqual(["redact_pii"]);
  });

  const refusals: Array<[string, () => { path?: string; body?: unknown; raw?: string; contentType?: string }, number, string]> = [
    [
      "tampered (code changed after signing)",
      () => {
        const a = signed(guardManifest({ version: "1.1.0" }), GUARD_CODE);
        return { body: { ...a, code: a.code.replace("state forbidden", "state allowed!") } };
      },
      400,
      "DIGEST_MISMATCH",
    ],
    ["unsigned (signatures stripped)", () => ({ body: { ...signed(guardManifest({ version: "1.1.0" }), GUARD_CODE), signatures: [] } }), 403, "UNSIGNED_BUNDLE"],
    ["signed by a key not in the keyring", () => ({ body: signed(guardManifest({ version: "1.1.0" }), GUARD_CODE, keys.stranger, "stranger") }), 403, "SIGNATURE_INVALID"],
    ["signed under a keyring id with the wrong key", () => ({ body: signed(guardManifest({ version: "1.1.0" }), GUARD_CODE, keys.stranger, "ops") }), 403, "SIGNATURE_INVALID"],
    ["over-privileged (trust system, key max deployment)", () => ({ body: signed(guardManifest({ version: "1.1.0", trust: "system" }), GUARD_CODE) }), 403, "TRUST_EXCEEDS_KEY"],
    ["over-privileged (trust deployment, key max session)", () => ({ body: signed(guardManifest({ version: "1.1.0" }), GUARD_CODE, keys.low, "low") }), 403, "TRUST_EXCEEDS_KEY"],
    [
      "oversized (body over limits.bundle_bytes)",
      () => ({ body: signed(guardManifest({ version: "1.1.0" }), `${GUARD_CODE}\n/*${"x".repeat(400 * 1024)}*/`) }),
      413,
      "PAYLOAD_TOO_LARGE",
    ],
    ["path and manifest name differ", () => ({ path: "/v1/bundles/other", body: signed(guardManifest({ version: "1.1.0" }), GUARD_CODE) }), 400, "INVALID_BUNDLE"],
    ["not an artifact", () => ({ body: { manifest: guardManifest(), code: GUARD_CODE } }), 400, "INVALID_BUNDLE"],
    ["malformed JSON", () => ({ raw: '{"format": "vcp-bundle/1", ' }), 400, "MALFORMED_JSON"],
    ["__proto__ key", () => ({ raw: '{"format":"vcp-bundle/1","__proto__":{"x":1}}' }), 400, "MALFORMED_JSON"],
    ["text/plain body", () => ({ raw: "hello", contentType: "text/plain" }), 415, "UNSUPPORTED_MEDIA_TYPE"],
    [
      "a hook name that another bundle owns",
      () => ({
        path: "/v1/bundles/copycat",
        body: signed({ bundle: "copycat", version: "1.0.0", trust: "deployment", hooks: [{ name: "redact_pii", type: "pre_inject", action: "redact", priority: 50, timeout_ms: 1000 }] }, GUARD_CODE),
      }),
      409,
      "DUPLICATE_HOOK",
    ],
  ];

  for (const [name, make, status, code] of refusals) {
    it(`refuses ${name}: ${status} ${code}, nothing changes`, async () => {
      const before = await snapshot();
      const req = make();
      const r = await call(h.url, "PUT", req.path ?? "/v1/bundles/guard", { token: TOKENS.operator, ...(req.raw !== undefined ? { raw: req.raw } : { body: req.body }), ...(req.contentType ? { contentType: req.contentType } : {}) });
      expectError(r, status, code);
      expect(await snapshot()).toEqual(before);
    });
  }

  it("accepts the bundle media type application/vnd.vcp.bundle+json; the installed digest again is 200 unchanged: true, a no-op", async () => {
    const before = await snapshot();
    const r = await call(h.url, "PUT", "/v1/bundles/guard", { token: TOKENS.operator, body: signed(guardManifest(), GUARD_CODE), contentType: "application/vnd.vcp.bundle+json" });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ bundle: "guard", unchanged: true });
    expect(await snapshot()).toEqual(before);
  });

  it("GET and DELETE of an unknown bundle → 404 UNKNOWN_BUNDLE", async () => {
    const before = await snapshot();
    expectError(await op(h, "GET", "/v1/bundles/missing"), 404, "UNKNOWN_BUNDLE");
    expectError(await op(h, "DELETE", "/v1/bundles/missing"), 404, "UNKNOWN_BUNDLE");
    expect(await snapshot()).toEqual(before);
  });

  it("GET /v1/status shows the bundle's revision and activation, and per-hook counters", async () => {
    const r = await op(h, "GET", "/v1/status");
    expect(r.status).toBe(200);
    const guard = r.body.bundles.find((b: any) => b.bundle === "guard");
    expect(guard.digest).toMatch(/^sha256:/);
    expect(Date.parse(guard.activated_at)).not.toBeNaN();
    expect(Array.isArray(guard.errors ?? [])).toBe(true);
    expect(r.body.hooks.find((x: any) => x.hook === "redact_pii")).toMatchObject({ calls: expect.any(Number), errors: 0, timeouts: 0 });
    expect(typeof r.body.registry_revision).toBe("number");
    expect(r.body.server).toBeDefined();
  });
});

describe("sessions and events", () => {
  const context = { note: "mail ana@example.org", dimensions: { data_sensitivity: 8 } };

  it("unknown type → 400 UNKNOWN_HOOK_TYPE", async () => {
    expectError(await cl(h, "POST", "/v1/sessions/s1/chains/pre_flight", { context, constitution, event: {} }), 400, "UNKNOWN_HOOK_TYPE");
    expectError(await op(h, "GET", "/v1/hooks?type=pre_flight"), 400, "UNKNOWN_HOOK_TYPE");
  });

  it("malformed JSON on an event route → 400 MALFORMED_JSON", async () => {
    expectError(await call(h.url, "POST", "/v1/sessions/s1/chains/pre_inject", { token: TOKENS.client, raw: "{not json" }), 400, "MALFORMED_JSON");
  });

  it("a body over limits.body_bytes → 413 PAYLOAD_TOO_LARGE", async () => {
    expectError(await cl(h, "POST", "/v1/sessions/s1/chains/pre_inject", { context: { blob: "x".repeat(70 * 1024) }, constitution, event: events.pre_inject }), 413, "PAYLOAD_TOO_LARGE");
  });

  it("a chunked body over the limit → 413 PAYLOAD_TOO_LARGE", async () => {
    const big = JSON.stringify({ context: { blob: "x".repeat(70 * 1024) }, constitution, event: events.pre_inject });
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const res = await fetch(`${h.url}/v1/sessions/s1/chains/pre_inject`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKENS.client}`, "content-type": "application/json" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("PAYLOAD_TOO_LARGE");
  });

  it("a body missing `event` → 400 INVALID_REQUEST naming the field", async () => {
    const r = await cl(h, "POST", "/v1/sessions/s1/chains/pre_inject", { context, constitution });
    expectError(r, 400, "INVALID_REQUEST");
    expect(r.text).toMatch(/event/);
  });

  it("unknown session → 404 SESSION_NOT_FOUND", async ({ skip }) => {
    if (!hasSessions()) skip();
    const before = await snapshot();
    expectError(await cl(h, "POST", "/v1/sessions/nobody/chains/pre_inject", { event: events.pre_inject }), 404, "SESSION_NOT_FOUND");
    expectError(await cl(h, "GET", "/v1/sessions/nobody"), 404, "SESSION_NOT_FOUND");
    expectError(await cl(h, "DELETE", "/v1/sessions/nobody"), 404, "SESSION_NOT_FOUND");
    expectError(await cl(h, "POST", "/v1/sessions/nobody/hooks", { bundle: "guard", hook: "session_observer" }), 404, "SESSION_NOT_FOUND");
    for (const opName of ["adapt", "transition", "conflict", "violation"]) {
      const body = opName === "transition" ? { to: "x", trigger: "t" } : opName === "conflict" ? { constitutions: [constitution], conflicting_rules: [], conflict_severity: "warning" } : opName === "violation" ? { output: "o", violated_rules: [], severity: "minor", violation_evidence: "e" } : { selected: constitution, candidates: [constitution], selection_rationale: "r", selection_algorithm: "a" };
      expectError(await cl(h, "POST", `/v1/sessions/nobody/${opName}`, body), 404, "SESSION_NOT_FOUND");
    }
    expect(await snapshot()).toEqual(before);
  });

  it("POST /v1/sessions → 201; chains run against the session's context", async ({ skip }) => {
    if (!hasSessions()) skip();
    const r = await cl(h, "POST", "/v1/sessions", { session_id: "s1", context, constitution, state: "professional" });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ session_id: "s1", state: "professional" });
    expectError(await cl(h, "POST", "/v1/sessions", { session_id: "s1", context, constitution }), 409, "SESSION_EXISTS");
    const got = await cl(h, "GET", "/v1/sessions/s1");
    expect(got.status).toBe(200);
    expect(got.body.context).toEqual(context);

    const fired = await cl(h, "POST", "/v1/sessions/s1/chains/pre_inject", { event: events.pre_inject });
    expect(fired.status).toBe(200);
    expect(fired.body).toMatchObject({ type: "pre_inject", status: "completed", aborted_by: null });
    expect(fired.body.context.note).toBe("mail [email]");
    // the v1 wire shape (DESIGN §6.2) plus the decision record (issue 25): audit-only fields such as the modification diff stay out
    expect(Object.keys(fired.body)).toEqual(["chain_id", "type", "status", "reason", "aborted_by", "context", "constitution", "cascade_failure", "hook_results", "duration_ms", "decision"]);
    expect(fired.body.decision).toMatchObject({ profile: "vcp", event: "pre_inject", outcome: "modify", decided_by: { hook: "redact_pii", bundle: "guard" }, changes: [{ hook: "redact_pii", op: "replace", path: "/context/note" }] });
    expect(fired.body.hook_results[0].modification).toBeUndefined();
    expect(fired.body.hook_results).toEqual([expect.objectContaining({ hook: "redact_pii", bundle: "guard", status: "modify", outcome: "ok", annotations: { redacted: true } })]);
    // Which revision decided, as in the library's result and the audit record.
    const installed = (await op(h, "GET", "/v1/bundles/guard")).body.digest;
    expect(fired.body.hook_results[0].bundle_digest).toBe(installed);

    const overridden = await cl(h, "POST", "/v1/sessions/s1/chains/post_select", { context: { note: "x" }, event: events.post_select });
    expect(overridden.status).toBe(200);
    expect(overridden.body.hook_results[0]).toMatchObject({ hook: "audit_selection", annotations: { selected: "family-safe" } });
  });

  it("a 256-character session id works in paths", async ({ skip }) => {
    if (!hasSessions()) skip();
    const id = "s".repeat(256);
    expect((await cl(h, "POST", "/v1/sessions", { session_id: id, context, constitution })).status).toBe(201);
    expect((await cl(h, "GET", `/v1/sessions/${id}`)).status).toBe(200);
    expect((await cl(h, "DELETE", `/v1/sessions/${id}`)).status).toBe(204);
  });

  it("an invalid event → 400 INVALID_REQUEST naming the field (the boundary checks it, hook or no hook)", async ({ skip }) => {
    if (!hasSessions()) skip();
    const r = await cl(h, "POST", "/v1/sessions/s1/chains/pre_inject", { event: { injection_target: "system" } });
    expectError(r, 400, "INVALID_REQUEST");
    expect(r.body.error.details.field).toBe("body.event.injection_format");
    expect(r.body.error.message).toMatch(/injection_format/);
  });

  it("session hook allowlist: allowlisted 201, others 403 SESSION_HOOK_NOT_ALLOWED, unknown 404", async ({ skip }) => {
    if (!hasSessions()) skip();
    const before = await snapshot();
    const sessionChain = async () => (await op(h, "GET", "/v1/hooks?type=pre_inject&session=s1")).body.hooks.map((x: any) => `${x.scope}:${x.name}`);
    const chainBefore = await sessionChain();
    // on the runtime's list but not the server's (narrowed live): refused by the server
    expectError(await cl(h, "POST", "/v1/sessions/s1/hooks", { bundle: "guard", hook: "unlisted_observer" }), 403, "SESSION_HOOK_NOT_ALLOWED");
    expectError(await cl(h, "POST", "/v1/sessions/s1/hooks", { bundle: "guard", hook: "redact_pii" }), 403, "SESSION_HOOK_NOT_ALLOWED");
    expect(await sessionChain()).toEqual(chainBefore);
    expect(await snapshot()).toEqual(before);

    const r = await cl(h, "POST", "/v1/sessions/s1/hooks", { bundle: "guard", hook: "session_observer" });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: "session_observer", scope: "session", trust: "session" });
    expect(await sessionChain()).toEqual(["deployment:redact_pii", "session:session_observer"]);
    expectError(await cl(h, "POST", "/v1/sessions/s1/hooks", { bundle: "guard", hook: "session_observer" }), 409, "DUPLICATE_HOOK");
    const fired = await cl(h, "POST", "/v1/sessions/s1/chains/pre_inject", { event: events.pre_inject });
    expect(fired.body.hook_results.map((x: any) => x.hook)).toEqual(["redact_pii", "session_observer"]);
  });

  it("POST /v1/sessions/{id}/adapt → inject with the redacted context", async ({ skip }) => {
    if (!has("adapt")) skip();
    const r = await cl(h, "POST", "/v1/sessions/s1/adapt", { selected: constitution, candidates: [constitution], selection_rationale: "best", selection_algorithm: "score" });
    expect(r.status).toBe(200);
    expect(r.body.outcome).toBe("inject");
    expect(r.body.context.note).toBe("mail [email]");
    expect(r.body.trace.map((t: any) => t.type)).toEqual(["post_select", "pre_inject"]);
  });

  it("POST /v1/sessions/{id}/transition → transitioned, and blocked by an abort", async ({ skip }) => {
    if (!has("transition")) skip();
    const ok = await cl(h, "POST", "/v1/sessions/s1/transition", { to: "personal", trigger: "user_said_hi" });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ outcome: "transitioned", state: "personal" });
    const blocked = await cl(h, "POST", "/v1/sessions/s1/transition", { to: "forbidden", trigger: "x" });
    expect(blocked.body).toMatchObject({ outcome: "blocked", state: "personal", aborted_by: "gate_transition" });
    expectError(await cl(h, "POST", "/v1/sessions/s1/transition", { trigger: "x" }), 400, "INVALID_REQUEST");
  });

  it("POST /v1/sessions/{id}/conflict → default strategy when no hook resolves", async ({ skip }) => {
    if (!has("conflict")) skip();
    const r = await cl(h, "POST", "/v1/sessions/s1/conflict", {
      constitutions: [constitution, { id: "other", version: "1", rules: [{ id: "tone-2", text: "Be curt." }] }],
      conflicting_rules: [{ rule_a: { id: "tone-1", text: "Be kind." }, rule_b: { id: "tone-2", text: "Be curt." }, conflict_type: "contradiction" }],
      conflict_severity: "warning",
    });
    expect(r.status).toBe(200);
    expect(["default", "failed"]).toContain(r.body.outcome);
    expect(r.body.trace[0].hook_results[0].hook).toBe("resolve_conflict");
  });

  it("POST /v1/sessions/{id}/violation → deliver, or suppress on abort", async ({ skip }) => {
    if (!has("violation")) skip();
    const base = { output: "rude words", violated_rules: [{ id: "tone-1", text: "Be kind." }], violation_evidence: "rude" };
    const minor = await cl(h, "POST", "/v1/sessions/s1/violation", { ...base, severity: "minor" });
    expect(minor.status).toBe(200);
    expect(minor.body.outcome).toBe("deliver");
    const critical = await cl(h, "POST", "/v1/sessions/s1/violation", { ...base, severity: "critical" });
    expect(critical.body).toMatchObject({ outcome: "suppress", aborted_by: "judge_violation" });
    expect(critical.body.output).toBeNull(); // always present; null: deliver nothing
  });

  it("GET /v1/audit and /v1/audit/head (operator)", async ({ skip }) => {
    if (typeof (h.runtime as any).audit?.query !== "function") skip();
    const head = await op(h, "GET", "/v1/audit/head");
    expect(head.status).toBe(200);
    const all = await op(h, "GET", "/v1/audit?session=s1&limit=5");
    expect(all.status).toBe(200);
    expect(all.body.records.length).toBeGreaterThan(0);
    expect(all.body.records.length).toBeLessThanOrEqual(5);
    expectError(await op(h, "GET", "/v1/audit?since=-1"), 400, "INVALID_REQUEST");
  });

  it("DELETE /v1/sessions/{id} → 204, then 404", async ({ skip }) => {
    if (!hasSessions()) skip();
    expect((await cl(h, "DELETE", "/v1/sessions/s1")).status).toBe(204);
    expectError(await cl(h, "GET", "/v1/sessions/s1"), 404, "SESSION_NOT_FOUND");
    expect((await op(h, "GET", "/v1/hooks?type=pre_inject")).body.hooks.map((x: any) => x.name)).toEqual(["redact_pii"]);
  });
});

describe("live settings and removal", () => {
  it("update() swaps tokens: the old token stops working, the new one works", async () => {
    h.server.update(settings({ auth: [{ id: "ops2", role: "operator", token_sha256: sha256("rotated-operator-token") }] }));
    try {
      expectError(await op(h, "GET", "/v1/bundles"), 401, "UNAUTHENTICATED");
      const r = await call(h.url, "GET", "/v1/bundles", { token: "rotated-operator-token" });
      expect(r.status).toBe(200);
    } finally {
      h.server.update(settings());
    }
  });

  it("update() changes the body limit live", async () => {
    h.server.update(settings({ limits: { body_bytes: 2048, bundle_bytes: 256 * 1024 } }));
    try {
      expectError(await cl(h, "POST", "/v1/sessions/s2/chains/pre_inject", { context: { blob: "x".repeat(4096) }, constitution, event: events.pre_inject }), 413, "PAYLOAD_TOO_LARGE");
    } finally {
      h.server.update(settings());
    }
  });

  it("DELETE /v1/bundles/{name} removes all its hooks", async () => {
    const r = await op(h, "DELETE", "/v1/bundles/guard");
    expect(r.status).toBe(200);
    expect(r.body.bundle).toBe("guard");
    expect((await op(h, "GET", "/v1/bundles")).body.bundles).toEqual([]);
    expect((await op(h, "GET", "/v1/hooks")).body.hooks).toEqual([]);
  });
});

describe("the document matches what the server answered", () => {
  // Every status this file's requests got on a documented operation (from vcp_http_requests_total,
  // which the server records for each response) is one the operation declares in /openapi.json: a
  // generated client never meets an undeclared status.
  it("every status answered above is declared for its operation", async () => {
    const doc = (await call(h.url, "GET", "/openapi.json")).body as { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };
    const metrics = (await op(h, "GET", "/metrics")).text;
    const seen = [...metrics.matchAll(/^vcp_http_requests_total\{method="([A-Z]+)",route="([^"]+)",status="(\d{3})"\} \d+/gm)].map(([, method, route, status]) => ({
      method: method!.toLowerCase(),
      path: route!.replace(/:([A-Za-z]+)/g, "{$1}"),
      status: status!,
    }));
    const checked = seen.filter((s) => doc.paths[s.path]?.[s.method] !== undefined);
    expect(checked.length).toBeGreaterThan(20);
    const undeclared = checked.filter((s) => doc.paths[s.path]![s.method]!.responses[s.status] === undefined).map((s) => `${s.method.toUpperCase()} ${s.path} ${s.status}`);
    expect(undeclared).toEqual([]);
  });
});
