// Tenancy over HTTP (DESIGN §6.5), end to end: sessions belong to the token that opened them, a
// per-client session cap, and limits applied from the headers before any body byte is read, on
// every route, authenticated or not.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sendHugeBody } from "../../bench/sandbox/http-tenants.js";
import { TOKENS, call, cl, constitution, events, GUARD_CODE, guardManifest, op, settings, sha256, signed, startHarness, type Harness, type Reply } from "./helpers.js";

const CLIENT_B = "cl-token-e2e-b-9876543210";
const CAP = 3;

let h: Harness;
const b = (method: string, path: string, body?: unknown) => call(h.url, method, path, { token: CLIENT_B, body });

beforeAll(async () => {
  const base = settings();
  h = await startHarness({
    settings: { ...base, auth: [...base.auth, { id: "app-b", role: "client", token_sha256: sha256(CLIENT_B) }] },
    runtime: { maxSessionsPerOwner: CAP },
  });
  expect((await op(h, "PUT", "/v1/bundles/guard", signed(guardManifest(), GUARD_CODE))).status).toBe(201);
});
afterAll(async () => {
  await h?.close();
});

function expectError(reply: Reply, status: number, code: string) {
  expect({ status: reply.status, code: reply.body?.error?.code }).toEqual({ status, code });
}

const context = { note: "hi" };

describe("sessions belong to the token that opened them", () => {
  const routes: Array<[string, string, unknown?]> = [
    ["GET", ""],
    ["DELETE", ""],
    ["POST", "/chains/pre_inject", { event: events.pre_inject }],
    ["POST", "/adapt", { selected: constitution, candidates: [constitution], selection_rationale: "r", selection_algorithm: "a" }],
    ["POST", "/transition", { to: "stolen", trigger: "b" }],
    ["POST", "/conflict", { constitutions: [constitution], conflicting_rules: [], conflict_severity: "warning" }],
    ["POST", "/violation", { output: "o", violated_rules: [], severity: "minor", violation_evidence: "e" }],
    ["POST", "/hooks", { bundle: "guard", hook: "session_observer" }],
  ];

  it("another client gets the missing-session answer on every session route, and the session is unchanged", async () => {
    expect((await cl(h, "POST", "/v1/sessions", { session_id: "own-a", context, constitution, state: "start" })).status).toBe(201);
    const before = await cl(h, "GET", "/v1/sessions/own-a");
    for (const [method, suffix, body] of routes) {
      const onA = await b(method, `/v1/sessions/own-a${suffix}`, body);
      const onMissing = await b(method, `/v1/sessions/own-zz${suffix}`, body);
      expectError(onA, 404, "SESSION_NOT_FOUND");
      expect(onA.text.replaceAll("own-a", "<id>"), `${method} ${suffix}`).toBe(onMissing.text.replaceAll("own-zz", "<id>"));
    }
    expectError(await b("GET", "/v1/hooks?session=own-a"), 404, "SESSION_NOT_FOUND");
    const after = await cl(h, "GET", "/v1/sessions/own-a");
    expect(after.body).toEqual(before.body);
    expect(after.body.owner).toBe("app");
    expect((await cl(h, "GET", "/v1/hooks?type=pre_inject&session=own-a")).body.hooks.map((x: any) => x.scope)).toEqual(["deployment"]);
  });

  it("the owner's chains are audited with its owner; the operator reads and closes any session", async () => {
    expect((await cl(h, "POST", "/v1/sessions/own-a/chains/pre_inject", { event: events.pre_inject })).status).toBe(200);
    const records = (await op(h, "GET", "/v1/audit?session=own-a")).body.records.filter((r: any) => r.kind !== "registry");
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) expect(r.owner).toBe("app");
    const seen = await op(h, "GET", "/v1/sessions/own-a");
    expect(seen.status).toBe(200);
    expect(seen.body.owner).toBe("app");
    expect((await op(h, "DELETE", "/v1/sessions/own-a")).status).toBe(204);
    expectError(await cl(h, "GET", "/v1/sessions/own-a"), 404, "SESSION_NOT_FOUND");
  });
});

describe("session ids are per client (issue 10)", () => {
  it("two clients opening the same id get two independent sessions; neither learns of the other's", async () => {
    expect((await cl(h, "POST", "/v1/sessions", { session_id: "dup", context: { note: "a" }, constitution, state: "start" })).status).toBe(201);
    // Not 409: whether another client uses an id is not observable, and ids cannot be squatted.
    const opened = await b("POST", "/v1/sessions", { session_id: "dup", context: { note: "b" }, constitution });
    expect(opened.status).toBe(201);
    expect(opened.body).toMatchObject({ session_id: "dup", owner: "app-b" });
    expectError(await b("POST", "/v1/sessions", { session_id: "dup", context, constitution }), 409, "SESSION_EXISTS");
    expect((await cl(h, "GET", "/v1/sessions/dup")).body).toMatchObject({ session_id: "dup", owner: "app", context: { note: "a" }, state: "start" });
    expect((await b("GET", "/v1/sessions/dup")).body).toMatchObject({ session_id: "dup", owner: "app-b", context: { note: "b" }, state: null });
    // B's session hook and state change stay in B's session.
    expect((await b("POST", "/v1/sessions/dup/hooks", { bundle: "guard", hook: "session_observer" })).status).toBe(201);
    expect((await b("POST", "/v1/sessions/dup/transition", { to: "b-state", trigger: "t" })).status).toBe(200);
    expect((await cl(h, "GET", "/v1/hooks?type=pre_inject&session=dup")).body.hooks.map((x: any) => x.scope)).toEqual(["deployment"]);
    expect((await b("GET", "/v1/hooks?type=pre_inject&session=dup")).body.hooks.map((x: any) => x.scope)).toContain("session");
    expect((await cl(h, "GET", "/v1/sessions/dup")).body.state).toBe("start");
    const chainA = await cl(h, "POST", "/v1/sessions/dup/chains/pre_inject", { event: events.pre_inject });
    expect(chainA.body.hook_results.map((r: any) => r.scope)).not.toContain("session");
    // A client's `owner` is ignored: it always addresses its own session.
    expect((await cl(h, "GET", "/v1/sessions/dup?owner=app-b")).body.owner).toBe("app");
  });

  it("operators name the owner when two use an id (409 SESSION_AMBIGUOUS otherwise); audit records carry the caller's id and the owner", async () => {
    const ambiguous = await op(h, "GET", "/v1/sessions/dup");
    expectError(ambiguous, 409, "SESSION_AMBIGUOUS");
    expect(ambiguous.body.error.details.owners).toEqual(["app", "app-b"]);
    expect((await op(h, "GET", "/v1/sessions/dup?owner=app-b")).body).toMatchObject({ owner: "app-b", state: "b-state" });
    expectError(await op(h, "GET", "/v1/sessions/dup?owner=nobody"), 404, "SESSION_NOT_FOUND");
    expect((await op(h, "GET", "/v1/hooks?type=pre_inject&session=dup&owner=app-b")).body.hooks.map((x: any) => x.scope)).toContain("session");
    const records = (await op(h, "GET", "/v1/audit?session=dup")).body.records.filter((r: any) => r.kind !== "registry");
    expect(new Set(records.map((r: any) => r.owner))).toEqual(new Set(["app", "app-b"]));
    expect(records.every((r: any) => r.session === "dup")).toBe(true);
    const onlyB = (await op(h, "GET", "/v1/audit?session=dup&owner=app-b")).body.records;
    expect(onlyB.length).toBeGreaterThan(0);
    expect(onlyB.every((r: any) => r.owner === "app-b")).toBe(true);
    const registry = (await op(h, "GET", "/v1/audit?session=dup")).body.records.filter((r: any) => r.kind === "registry");
    expect(registry.map((r: any) => [r.session, r.owner])).toContainEqual(["dup", "app-b"]);
    expect((await op(h, "DELETE", "/v1/sessions/dup?owner=app")).status).toBe(204);
    expectError(await cl(h, "GET", "/v1/sessions/dup"), 404, "SESSION_NOT_FOUND");
    expect((await op(h, "GET", "/v1/sessions/dup")).body.owner).toBe("app-b");
    expect((await b("DELETE", "/v1/sessions/dup")).status).toBe(204);
  });
});

describe("sessions per client", () => {
  it(`the open past the cap (${CAP}) is 429 SESSION_LIMIT and stores nothing; other clients are not affected; a close frees a slot`, async () => {
    for (let i = 0; i < CAP; i++) expect((await cl(h, "POST", "/v1/sessions", { session_id: `cap-${i}`, context, constitution })).status).toBe(201);
    const refused = await cl(h, "POST", "/v1/sessions", { session_id: "cap-x", context, constitution });
    expectError(refused, 429, "SESSION_LIMIT");
    expect(refused.body.error.details).toEqual({ principal: "app", limit: CAP });
    expectError(await cl(h, "GET", "/v1/sessions/cap-x"), 404, "SESSION_NOT_FOUND");
    expect((await b("POST", "/v1/sessions", { session_id: "cap-b", context, constitution })).status).toBe(201);
    expect((await cl(h, "DELETE", "/v1/sessions/cap-0")).status).toBe(204);
    expect((await cl(h, "POST", "/v1/sessions", { session_id: "cap-x", context, constitution })).status).toBe(201);
  });
});

describe("limits before parsing, on every route", () => {
  it("an unknown route is 404 without its body being parsed (malformed JSON, no token), and the connection closes", async () => {
    const r = await call(h.url, "POST", "/v1/no-such-route", { token: null, raw: "{not json" });
    expectError(r, 404, "NOT_FOUND");
    expect(r.headers.get("connection")).toBe("close");
  });

  it("authentication comes before parsing: a malformed body without a token is 401, not 400", async () => {
    expectError(await call(h.url, "POST", "/v1/sessions", { token: null, raw: "{not json" }), 401, "UNAUTHENTICATED");
  });

  it("Content-Length over the limit is 413 on bodyless and unauthenticated routes too (GET, DELETE, /healthz)", async () => {
    for (const [method, path, token] of [["DELETE", "/v1/sessions/s1", TOKENS.client], ["GET", "/v1/sessions/s1", TOKENS.client], ["GET", "/healthz", undefined]] as const) {
      const out = await sendHugeBody(h.url, method, path, { totalBytes: 8 * 1024 * 1024, declared: true, ...(token ? { token } : {}) });
      expect({ path, status: out.status, code: out.code }).toEqual({ path, status: 413, code: "PAYLOAD_TOO_LARGE" });
    }
  });

  it("a chunked body over the limit to a DELETE route is stopped at the limit (413)", async () => {
    const out = await sendHugeBody(h.url, "DELETE", "/v1/sessions/s1", { totalBytes: 60 * 1024 * 1024, declared: false, token: TOKENS.client });
    expect({ status: out.status, code: out.code }).toEqual({ status: 413, code: "PAYLOAD_TOO_LARGE" });
    expect(out.sentBeforeAnswer).toBeLessThan(24 * 1024 * 1024);
  });

  it("60 MB without a token to an unknown route: answered from the headers, the body is not read, RSS does not grow by it", async () => {
    const rss = process.memoryUsage().rss;
    for (const declared of [true, false]) {
      const out = await sendHugeBody(h.url, "POST", "/v1/nowhere", { totalBytes: 60 * 1024 * 1024, declared });
      expect({ declared, status: out.status, code: out.code }).toEqual({ declared, status: 404, code: "NOT_FOUND" });
      expect(out.sentBeforeAnswer).toBeLessThan(24 * 1024 * 1024);
    }
    expect(process.memoryUsage().rss - rss).toBeLessThan(40 * 1024 * 1024);
    expect((await call(h.url, "GET", "/healthz")).status).toBe(200);
  });
});
