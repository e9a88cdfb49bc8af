// Approvals over HTTP (PROFILES §3.4, §8.9) on a real server and sandbox: an Amplifier chain that
// asks; GET /v1/approvals, POST /v1/approvals/{id} (an approver or operator decides; the client whose
// agent asked never does), the SSE stream and its per-token cap, ?wait_approval=1, the timeout
// default, another client's token (404), and the audit records. `npm run build` first (the sandbox host).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, type Runtime } from "../../src/index.js";
import { createServer, type VcpServer } from "../../src/server/app.js";
import { bundleCode } from "../support/bundles.js";
import { call, keys, settings, sha256, signed, TOKENS } from "./helpers.js";

const OTHER = "cl-token-e2e-other-approvals-0123";
/** The human who answers app's asks, and one who answers only other's. */
const APPROVER = "ap-token-e2e-approvals-human-0123";
const OTHER_APPROVER = "ap-token-e2e-approvals-other-0123";

const manifest = {
  bundle: "prod-guard",
  version: "1.0.0",
  trust: "deployment",
  profile: "amplifier",
  hooks: [{ name: "prod_guard", event: "tool:pre", action: "guard", priority: 10, timeout_ms: 2000 }],
};
// Prompt, timeout and default come from the event so one bundle serves every test.
const code = bundleCode({
  guard: `(input) => input.data.tool_name === "ls" ? { action: "continue" } : ({
    action: "ask_user",
    approval_prompt: input.data.prompt || "Run " + input.data.tool_name + "?",
    approval_options: ["Allow once", "Allow always", "Deny"],
    approval_timeout: input.data.timeout_s || 60,
    approval_default: input.data.default || "deny"
  })`,
});

let runtime: Runtime;
let server: VcpServer;
let url: string;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "vcp-e2e-approvals-"));
  runtime = await createRuntime({
    dataDir,
    keyring: { keys: [{ key_id: "ops", public_key: keys.ops.publicKeyPem, max_trust: "deployment" }] },
    requireSignatures: true,
    sandbox: { threads: 1 },
  });
  server = await createServer({
    runtime,
    settings: settings({
      auth: [
        { id: "ops", role: "operator", token_sha256: sha256(TOKENS.operator) },
        { id: "app", role: "client", token_sha256: sha256(TOKENS.client) },
        { id: "other", role: "client", token_sha256: sha256(OTHER) },
        { id: "app-human", role: "approver", token_sha256: sha256(APPROVER), approves: ["app"] },
        { id: "other-human", role: "approver", token_sha256: sha256(OTHER_APPROVER), approves: ["other"] },
      ],
      limits: { body_bytes: 1024 * 1024, bundle_bytes: 5 * 1024 * 1024, streams_per_principal: 3 },
    }),
    approvalStream: { heartbeatMs: 200 },
  });
  url = await server.listen("127.0.0.1", 0);
  const installed = await call(url, "PUT", "/v1/bundles/prod-guard", { token: TOKENS.operator, body: signed(manifest, code) });
  expect(installed.status).toBe(201);
}, 60_000);
afterAll(async () => {
  await server?.close();
  await runtime?.close();
  if (dataDir !== undefined) rmSync(dataDir, { recursive: true, force: true });
});

const fire = (session: string, data: Record<string, unknown> = {}, query = "", token = TOKENS.client) =>
  call(url, "POST", `/v1/profiles/amplifier/events/tool:pre${query}`, { token, body: { event: "tool:pre", data: { session_id: session, tool_name: "rm", ...data } } });

async function pendingIn(session: string, token = TOKENS.operator): Promise<Array<{ id: string }>> {
  for (let i = 0; i < 500; i++) {
    const res = await call(url, "GET", `/v1/approvals?session=${session}&state=pending`, { token });
    if (res.body.approvals.length > 0) return res.body.approvals;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no pending approval in ${session}`);
}

/** An SSE reader over fetch (the token in the Authorization header). */
async function openStream(token: string, query = "") {
  const controller = new AbortController();
  const res = await fetch(`${url}/v1/approvals/stream${query}`, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
  const events: Array<{ event: string; data: any }> = [];
  let comments = 0;
  let buffer = "";
  const waiters: Array<() => void> = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut: number;
        while ((cut = buffer.indexOf("\n\n")) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          if (block.startsWith(":")) comments++;
          else {
            const event = /^event: (.*)$/m.exec(block)?.[1] ?? "message";
            const data = /^data: (.*)$/m.exec(block)?.[1];
            events.push({ event, data: data === undefined ? undefined : JSON.parse(data) });
          }
          for (const w of waiters.splice(0)) w();
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    status: res.status,
    contentType: res.headers.get("content-type"),
    events,
    comments: () => comments,
    async until(predicate: () => boolean): Promise<void> {
      for (let i = 0; i < 1000 && !predicate(); i++) await new Promise<void>((r) => { waiters.push(r); setTimeout(r, 20); });
      if (!predicate()) throw new Error(`stream: condition not met; events: ${JSON.stringify(events)}`);
    },
    close: () => controller.abort(),
  };
}

describe("approvals over HTTP", () => {
  test("an ask answers with approval.id and expires_at; the owner lists it but may not answer it; its approver grants it; a second decision is 409 and the first stands", async () => {
    const res = await fire("h1");
    expect(res.status).toBe(200);
    expect(res.body.native.action).toBe("ask_user");
    const approval = res.body.native.approval;
    expect(approval).toMatchObject({ hook: "prod_guard", prompt: "Run rm?", options: ["Allow once", "Allow always", "Deny"], default: "deny", state: "pending" });
    expect(typeof approval.id).toBe("string");
    expect(Number.isNaN(Date.parse(approval.expires_at))).toBe(false);

    const mine = await call(url, "GET", "/v1/approvals?session=h1", { token: TOKENS.client });
    expect(mine.status).toBe(200);
    expect(mine.body.approvals).toHaveLength(1);
    expect(mine.body.approvals[0]).toMatchObject({ id: approval.id, session: "h1", owner: "app", state: "pending", prompt: "Run rm?" });

    // The agent's own token: 403, whatever it answers, and the approval stays pending.
    for (const decision of ["Allow always", "Allow once"]) {
      const self = await call(url, "POST", `/v1/approvals/${approval.id}`, { token: TOKENS.client, body: { decision } });
      expect(self.status).toBe(403);
      expect(self.body.error.code).toBe("FORBIDDEN");
    }
    expect((await call(url, "GET", `/v1/approvals/${approval.id}`, { token: TOKENS.client })).body.state).toBe("pending");

    const granted = await call(url, "POST", `/v1/approvals/${approval.id}`, { token: APPROVER, body: { decision: "Allow once" } });
    expect(granted.status).toBe(200);
    expect(granted.body).toMatchObject({ id: approval.id, state: "granted", decision: "Allow once", decided_by: "app-human" });

    const again = await call(url, "POST", `/v1/approvals/${approval.id}`, { token: TOKENS.operator, body: { decision: "deny" } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("APPROVAL_DECIDED");
    expect(again.body.error.message).toContain("first decision stands");
    const after = await call(url, "GET", `/v1/approvals/${approval.id}`, { token: TOKENS.operator });
    expect(after.body).toMatchObject({ state: "granted", decision: "Allow once" });

    const unknown = await call(url, "POST", "/v1/approvals/no-such-approval", { token: APPROVER, body: { decision: "allow" } });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("APPROVAL_NOT_FOUND");
    const bad = await call(url, "POST", `/v1/approvals/${approval.id}`, { token: APPROVER, body: {} });
    expect(bad.status).toBe(400);
  }, 30_000);

  test("another client's token gets 404 for the approval and an empty list (403 to decide, as for any client); another client's approver 404; the operator sees it", async () => {
    const res = await fire("h2");
    const id = res.body.native.approval.id as string;
    const list = await call(url, "GET", "/v1/approvals", { token: OTHER });
    expect(list.status).toBe(200);
    expect(list.body.approvals).toEqual([]);
    const get = await call(url, "GET", `/v1/approvals/${id}`, { token: OTHER });
    expect(get.status).toBe(404);
    expect(get.body.error.code).toBe("APPROVAL_NOT_FOUND");
    const decide = await call(url, "POST", `/v1/approvals/${id}`, { token: OTHER, body: { decision: "allow" } });
    expect(decide.status).toBe(403);
    expect(decide.body.error.code).toBe("FORBIDDEN");
    expect((await call(url, "GET", "/v1/approvals", { token: OTHER_APPROVER })).body.approvals).toEqual([]);
    expect((await call(url, "GET", `/v1/approvals/${id}`, { token: OTHER_APPROVER })).status).toBe(404);
    const foreign = await call(url, "POST", `/v1/approvals/${id}`, { token: OTHER_APPROVER, body: { decision: "allow" } });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe("APPROVAL_NOT_FOUND");
    const ops = await call(url, "GET", "/v1/approvals?session=h2", { token: TOKENS.operator });
    expect(ops.body.approvals.map((a: { id: string; state: string }) => [a.id, a.state])).toEqual([[id, "pending"]]);
    // Nothing the other client did changed it; the operator may decide it.
    const denied = await call(url, "POST", `/v1/approvals/${id}`, { token: TOKENS.operator, body: { decision: "no thanks" } });
    expect(denied.body).toMatchObject({ state: "denied", decided_by: "ops" });
  }, 30_000);

  test("?wait_approval=1 answers the decided continue, or deny with 'User denied: <prompt>'", async () => {
    const waiting = fire("h3", {}, "?wait_approval=1");
    const [pending] = await pendingIn("h3");
    const decided = await call(url, "POST", `/v1/approvals/${pending!.id}`, { token: TOKENS.operator, body: { decision: "ALLOW" } });
    expect(decided.status).toBe(200);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.native.action).toBe("continue");
    expect(res.body.native.approval).toMatchObject({ id: pending!.id, state: "granted" });

    const waitingDeny = fire("h3", { prompt: "Drop the table?" }, "?wait_approval=1&answer=native");
    const [second] = await pendingIn("h3");
    await call(url, "POST", `/v1/approvals/${second!.id}`, { token: APPROVER, body: { decision: "Deny" } });
    const deny = await waitingDeny;
    expect(deny.body.action).toBe("deny");
    expect(deny.body.reason).toBe("User denied: Drop the table?");
  }, 30_000);

  test("approval_timeout ⇒ approval_default: the waiting request answers the default, the approval is expired, deciding it is 409", async () => {
    const res = await fire("h4", { timeout_s: 0.3, default: "allow" }, "?wait_approval=1");
    expect(res.body.native.action).toBe("continue");
    expect(res.body.native.approval).toMatchObject({ state: "expired", decision: "allow", decided_by: "timeout" });
    const denied = await fire("h4", { timeout_s: 0.3, default: "deny" }, "?wait_approval=1");
    expect(denied.body.native.action).toBe("deny");
    const late = await call(url, "POST", `/v1/approvals/${denied.body.native.approval.id}`, { token: APPROVER, body: { decision: "allow" } });
    expect(late.status).toBe(409);
    expect(late.body.error.code).toBe("APPROVAL_DECIDED");
    expect(late.body.error.details.state).toBe("expired");
  }, 30_000);

  test("'Allow always' grants the next identical ask of the session at once", async () => {
    const first = await fire("h5");
    await call(url, "POST", `/v1/approvals/${first.body.native.approval.id}`, { token: APPROVER, body: { decision: "allow always" } });
    const second = await fire("h5");
    expect(second.body.native.action).toBe("continue");
    expect(second.body.native.approval).toMatchObject({ state: "granted", decided_by: "allow_always" });
    const otherSession = await fire("h5b");
    expect(otherSession.body.native.action).toBe("ask_user");
  }, 30_000);

  test("the SSE stream delivers a new approval and its decision to the owner and operators, never to another client", async () => {
    const owner = await openStream(TOKENS.client, "?session=h6");
    const operator = await openStream(TOKENS.operator);
    const stranger = await openStream(OTHER);
    try {
      expect(owner.status).toBe(200);
      expect(owner.contentType).toContain("text/event-stream");
      await owner.until(() => owner.events.some((e) => e.event === "hello"));
      await stranger.until(() => stranger.events.some((e) => e.event === "hello"));
      const res = await fire("h6");
      const id = res.body.native.approval.id as string;
      await owner.until(() => owner.events.some((e) => e.event === "new" && e.data.id === id));
      expect(owner.events.find((e) => e.event === "new")!.data).toMatchObject({ id, prompt: "Run rm?", state: "pending", session: "h6" });
      await call(url, "POST", `/v1/approvals/${id}`, { token: TOKENS.operator, body: { decision: "Allow" } });
      await owner.until(() => owner.events.some((e) => e.event === "decided" && e.data.id === id));
      expect(owner.events.find((e) => e.event === "decided")!.data).toMatchObject({ id, state: "granted", decided_by: "ops" });
      await operator.until(() => operator.events.some((e) => e.event === "decided" && e.data.id === id));
      await owner.until(() => owner.comments() > 0); // heartbeats while idle
      expect(stranger.events.filter((e) => e.data?.id === id)).toEqual([]);
    } finally {
      owner.close();
      operator.close();
      stranger.close();
    }
  }, 30_000);

  test("a stream opened late gets the pending approvals it may see first", async () => {
    const res = await fire("h7");
    const id = res.body.native.approval.id as string;
    const late = await openStream(TOKENS.client);
    try {
      await late.until(() => late.events.some((e) => e.event === "new" && e.data.id === id));
    } finally {
      late.close();
    }
    await call(url, "POST", `/v1/approvals/${id}`, { token: APPROVER, body: { decision: "deny" } });
  }, 30_000);

  test("a closing server answers its waiting requests with the pending ask instead of holding shutdown", async () => {
    const second = await createServer({ runtime, settings: settings({ auth: [{ id: "app", role: "client", token_sha256: sha256(TOKENS.client) }] }) });
    const secondUrl = await second.listen("127.0.0.1", 0);
    const waiting = call(secondUrl, "POST", "/v1/profiles/amplifier/events/tool:pre?wait_approval=1", { token: TOKENS.client, body: { event: "tool:pre", data: { session_id: "h9", tool_name: "rm" } } });
    const [pending] = await pendingIn("h9");
    await second.close();
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.native.action).toBe("ask_user");
    expect(res.body.native.approval).toMatchObject({ id: pending!.id, state: "pending" });
    // Still pending and decidable through the server that stays up.
    const decided = await call(url, "POST", `/v1/approvals/${pending!.id}`, { token: APPROVER, body: { decision: "deny" } });
    expect(decided.body.state).toBe("denied");
  }, 30_000);

  test("approvals are in the audit log: the request and the decision, with who decided", async () => {
    const res = await fire("h8");
    const id = res.body.native.approval.id as string;
    await call(url, "POST", `/v1/approvals/${id}`, { token: APPROVER, body: { decision: "allow" } });
    const audit = await call(url, "GET", "/v1/audit?session=h8&limit=1000", { token: TOKENS.operator });
    expect(audit.status).toBe(200);
    const records = (audit.body.records as Array<{ kind: string; status: string; owner: string; details: Record<string, unknown>; ts: string }>).filter((r) => r.kind.startsWith("approval_"));
    expect(records.map((r) => [r.kind, r.status, r.owner])).toEqual([
      ["approval_request", "pending", "app"],
      ["approval_decision", "granted", "app"],
    ]);
    expect(records[1]!.details).toMatchObject({ approval_id: id, decision: "allow", decided_by: "app-human" });
  }, 30_000);

  test("a prompt longer than 4,096 characters is shown clipped and marked; ?full=1 gives the approver all of it", async () => {
    const prompt = `Run echo ${"a".repeat(5000)} && rm -rf ~?`;
    const res = await fire("h10", { prompt });
    const shown = res.body.native.approval;
    expect(shown).toMatchObject({ prompt_truncated: true, prompt_chars: prompt.length, prompt_sha256: sha256(prompt) });
    expect(shown.prompt).not.toContain("rm -rf");
    const listed = await call(url, "GET", "/v1/approvals?session=h10", { token: APPROVER });
    expect(listed.body.approvals[0]).toMatchObject({ prompt_truncated: true, prompt_sha256: sha256(prompt) });
    const full = await call(url, "GET", `/v1/approvals/${shown.id}?full=1`, { token: APPROVER });
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ prompt, prompt_truncated: false });
    await call(url, "POST", `/v1/approvals/${shown.id}`, { token: APPROVER, body: { decision: "deny" } });
  }, 30_000);

  test("a token may hold limits.streams_per_principal streams (here 3); one more is 429 STREAM_LIMIT, other tokens are not affected, and a closed one frees its place", async () => {
    // Streams closed by earlier tests are released when the server sees their sockets close.
    const openWhenFree = async (token: string) => {
      let stream = await openStream(token);
      for (let i = 0; i < 100 && stream.status === 429; i++) {
        stream.close();
        await new Promise((r) => setTimeout(r, 20));
        stream = await openStream(token);
      }
      return stream;
    };
    const mine = [await openWhenFree(TOKENS.client), await openWhenFree(TOKENS.client), await openWhenFree(TOKENS.client)];
    try {
      for (const s of mine) expect(s.status).toBe(200);
      const refused = await call(url, "GET", "/v1/approvals/stream", { token: TOKENS.client });
      expect(refused.status).toBe(429);
      expect(refused.body.error).toMatchObject({ code: "STREAM_LIMIT", details: { limit: 3, open: 3 } });
      const operator = await openStream(TOKENS.operator);
      expect(operator.status).toBe(200);
      operator.close();
      mine.pop()!.close();
      const again = await openWhenFree(TOKENS.client);
      mine.push(again);
      expect(again.status).toBe(200);
    } finally {
      for (const s of mine) s.close();
    }
  }, 30_000);
});
