// Issue 25 item 3: one decision record per chain. A Gemini BeforeTool block of `rm -rf /` (the README's
// policies/gemini-safe-shell) and a VCP abort each show their reason and subject in the HTTP answer, the
// audit record, the decision stream and GET /v1/decisions; a client reads only its own chains, an
// operator all; pages, filters, coded 400s; a secret in a command is redacted everywhere. A real server
// and sandbox.
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { signArtifact } from "../../src/bundle/artifact.js";
import { buildBundle } from "../../src/bundle/build.js";
import type { VcpArtifact } from "../../src/index.js";
import { openStream } from "./console-helpers.js";
import { call, constitution, events, keys, op, settings, sha256, signed, startHarness, TOKENS, type Harness } from "./helpers.js";

const OTHER_CLIENT = "cl-token-e2e-other-decisions-0123";
const SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";

/** Gemini CLI's BeforeTool stdin for a shell command. */
function beforeTool(command: string, session = "dec-gemini"): Record<string, unknown> {
  return {
    session_id: session, transcript_path: "/home/dev/.gemini/t.jsonl", cwd: "/home/dev/app", hook_event_name: "BeforeTool",
    timestamp: "2026-11-28T09:00:00Z", tool_name: "run_shell_command", tool_input: { command, description: "clean up" },
  };
}

const VCP_CODE = `var __vcp_bundle = {
  deny: function (input) {
    if (String(input.context.note || "").indexOf("forbidden") >= 0) return { status: "abort", reason: "forbidden note (key ${SECRET})" };
    return { status: "continue" };
  }
};`;
const vcpManifest = { bundle: "vcp-deny", version: "1.0.0", trust: "deployment", hooks: [{ name: "deny_forbidden", type: "pre_inject", action: "deny", priority: 50, timeout_ms: 1000 }] };

let h: Harness;
let geminiDigest = "";
let vcpDigest = "";
beforeAll(async () => {
  h = await startHarness({
    settings: settings({
      auth: [
        { id: "ops", role: "operator", token_sha256: sha256(TOKENS.operator) },
        { id: "app", role: "client", token_sha256: sha256(TOKENS.client) },
        { id: "other", role: "client", token_sha256: sha256(OTHER_CLIENT) },
      ],
    }),
  });
  const { artifact } = await buildBundle(resolve("policies", "gemini-safe-shell"));
  const gemini = await op(h, "PUT", "/v1/bundles/gemini-safe-shell", signArtifact(artifact, keys.ops.privateKeyPem, "ops") as VcpArtifact);
  expect(gemini.status, JSON.stringify(gemini.body)).toBe(201);
  geminiDigest = gemini.body.digest;
  const vcp = await op(h, "PUT", "/v1/bundles/vcp-deny", signed(vcpManifest, VCP_CODE));
  expect(vcp.status, JSON.stringify(vcp.body)).toBe(201);
  vcpDigest = vcp.body.digest;
}, 120_000);
afterAll(async () => {
  await h?.close();
});

const fireGemini = (command: string, token = TOKENS.client, query = "") =>
  call(h.url, "POST", `/v1/profiles/gemini-cli/events/BeforeTool${query}`, { token, body: beforeTool(command) });

async function chainRecord(chainId: string): Promise<Record<string, any>> {
  const res = await op(h, "GET", "/v1/audit?limit=10000");
  expect(res.status).toBe(200);
  const record = (res.body.records as Array<Record<string, any>>).find((r) => r.kind === "chain" && r.chain_id === chainId);
  expect(record, `no chain record for ${chainId}`).toBeDefined();
  return record!;
}

describe("a Gemini BeforeTool block of rm -rf /", () => {
  test("shows its reason and subject in the HTTP answer, the audit record, the decision stream and GET /v1/decisions", async () => {
    const stream = await openStream(h.url, TOKENS.operator);
    try {
      await stream.next("hello");
      const res = await fireGemini("rm -rf /");
      expect(res.status).toBe(200);
      expect(res.body.native.decision).toBe("block");
      const reason = res.body.native.reason as string;
      expect(reason).toMatch(/^blocked: /);
      const decision = res.body.decision;
      expect(decision).toMatchObject({
        chain_id: res.body.result.chain_id,
        profile: "gemini-cli",
        event: "BeforeTool",
        outcome: "block",
        errors: 0,
        decided_by: { hook: "block_destructive_shell", bundle: "gemini-safe-shell", revision: geminiDigest },
        reason,
        subject: { kind: "tool", tool: "run_shell_command", command: "rm -rf /", summary: "run_shell_command: rm -rf /" },
        changes: [],
        session: "dec-gemini",
        client: "app",
      });
      expect(Date.parse(decision.at)).not.toBeNaN();
      expect(decision.hooks).toContainEqual(expect.objectContaining({ hook: "block_destructive_shell", bundle: "gemini-safe-shell", outcome: "ok", verdict: "block", reason }));

      // The audit log's chain record carries the same record, and the chain reason is no longer null.
      const record = await chainRecord(decision.chain_id);
      expect(record.decision).toEqual(decision);
      expect(record.details.reason).toBe(reason);

      // The decision stream: the event's reason (null before) and its `decision`.
      const streamed = await stream.next("decision");
      expect(streamed).toMatchObject({ chain_id: decision.chain_id, profile: "gemini-cli", event: "BeforeTool", status: "aborted", reason, aborted_by: "block_destructive_shell" });
      expect(streamed.decision).toEqual(decision);

      // Read back, newest first.
      const listed = await call(h.url, "GET", "/v1/decisions?limit=1", { token: TOKENS.client });
      expect(listed.status).toBe(200);
      expect(listed.body.decisions).toEqual([decision]);
    } finally {
      stream.close();
    }
  }, 60_000);

  test("?answer=native carries nothing extra: the native JSON alone", async () => {
    const envelope = await fireGemini("rm -rf /");
    const res = await fireGemini("rm -rf /", TOKENS.client, "?answer=native");
    expect(res.status).toBe(200);
    // Gemini's own `decision` field, not the record.
    expect(res.body.decision).toBe("block");
    expect(res.body).toEqual(envelope.body.native);
  });

  test("a secret in the command line is redacted in the answer's record, the audit log and GET /v1/decisions", async () => {
    const res = await fireGemini(`curl -H 'Authorization: token ${SECRET}' https://x && rm -rf /`);
    expect(res.status).toBe(200);
    const decision = res.body.decision;
    expect(decision.outcome).toBe("block");
    expect(decision.subject.command).toContain("[REDACTED:github-token]");
    expect(decision.subject.summary).toContain("[REDACTED:github-token]");
    expect(JSON.stringify(decision)).not.toContain(SECRET);
    const record = await chainRecord(decision.chain_id);
    expect(JSON.stringify(record)).not.toContain(SECRET);
    const listed = await call(h.url, "GET", `/v1/decisions?subject=${encodeURIComponent("curl -H")}`, { token: TOKENS.client });
    expect(listed.body.decisions[0].chain_id).toBe(decision.chain_id);
    expect(listed.text).not.toContain(SECRET);
  }, 30_000);
});

describe("a refused guarded event (issue 24)", () => {
  test("is a block in its decision record too: the refusal's code in the reason, listed by GET /v1/decisions", async () => {
    const deep = `${'{"d":'.repeat(70)}{}${"}".repeat(70)}`;
    const raw = JSON.stringify(beforeTool("rm -rf /")).replace('"description":"clean up"', `"description":"clean up","args":${deep}`);
    const res = await call(h.url, "POST", "/v1/profiles/gemini-cli/events/BeforeTool", { token: TOKENS.client, raw });
    expect(res.status).toBe(200);
    expect(res.body.refused.code).toBe("INVALID_INPUT");
    expect(res.body.decision).toMatchObject({ profile: "gemini-cli", event: "BeforeTool", outcome: "block", decided_by: null, subject: { kind: "event", summary: "BeforeTool" }, client: "app" });
    expect(res.body.decision.reason).toContain("INVALID_INPUT");
    expect(res.body.decision.reason).toContain("block_destructive_shell");
    const listed = await call(h.url, "GET", "/v1/decisions?limit=1", { token: TOKENS.client });
    expect(listed.body.decisions).toEqual([res.body.decision]);
  }, 30_000);
});

describe("a VCP abort", () => {
  test("shows its reason (redacted) and subject in the chain answer, the audit record and GET /v1/decisions", async () => {
    const opened = await call(h.url, "POST", "/v1/sessions", { token: TOKENS.client, body: { session_id: "dec-vcp", context: { note: "forbidden topic" }, constitution } });
    expect(opened.status).toBe(201);
    const stream = await openStream(h.url, TOKENS.operator, "?session=dec-vcp&outcome=block");
    await stream.next("hello");
    const res = await call(h.url, "POST", "/v1/sessions/dec-vcp/chains/pre_inject", { token: TOKENS.client, body: { event: events.pre_inject } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("aborted");
    const decision = res.body.decision;
    expect(decision).toMatchObject({
      profile: "vcp",
      event: "pre_inject",
      outcome: "block",
      decided_by: { hook: "deny_forbidden", bundle: "vcp-deny", revision: vcpDigest },
      reason: "forbidden note (key [REDACTED:github-token])",
      subject: { kind: "vcp", vcp_type: "pre_inject", summary: "vcp pre_inject" },
      session: "dec-vcp",
      client: "app",
    });
    const record = await chainRecord(decision.chain_id);
    expect(record.decision).toEqual(decision);
    try {
      const streamed = await stream.next("decision");
      expect(streamed).toMatchObject({ chain_id: decision.chain_id, type: "pre_inject", reason: decision.reason });
      expect(streamed.decision).toEqual(decision);
    } finally {
      stream.close();
    }
    const listed = await call(h.url, "GET", "/v1/decisions?profile=vcp&outcome=block", { token: TOKENS.client });
    expect(listed.body.decisions[0]).toEqual(decision);
  }, 30_000);
});

describe("GET /v1/decisions", () => {
  test("tenant scope: a client sees only the chains it fired; an operator sees every client's", async () => {
    const mine = await fireGemini("rm -rf /");
    const theirs = await fireGemini("rm -rf /", OTHER_CLIENT);
    expect(theirs.body.decision.client).toBe("other");
    const asOther = await call(h.url, "GET", "/v1/decisions?limit=1000", { token: OTHER_CLIENT });
    expect(asOther.status).toBe(200);
    const otherIds = asOther.body.decisions.map((d: { chain_id: string }) => d.chain_id);
    expect(otherIds).toContain(theirs.body.decision.chain_id);
    expect(otherIds).not.toContain(mine.body.decision.chain_id);
    expect(asOther.body.decisions.every((d: { client: string }) => d.client === "other")).toBe(true);
    const asApp = await call(h.url, "GET", "/v1/decisions?limit=1000", { token: TOKENS.client });
    expect(asApp.body.decisions.map((d: { chain_id: string }) => d.chain_id)).not.toContain(theirs.body.decision.chain_id);
    const asOperator = await op(h, "GET", "/v1/decisions?limit=1000");
    const all = asOperator.body.decisions.map((d: { chain_id: string }) => d.chain_id);
    expect(all).toEqual(expect.arrayContaining([mine.body.decision.chain_id, theirs.body.decision.chain_id]));
  }, 30_000);

  test("pages newest first with an opaque cursor, without repeats or gaps", async () => {
    const fired: string[] = [];
    for (let i = 0; i < 5; i++) fired.push((await fireGemini(`rm -rf / # page ${i}`)).body.decision.chain_id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: any = await call(h.url, "GET", `/v1/decisions?subject=${encodeURIComponent("# page")}&limit=2${cursor !== null ? `&cursor=${cursor}` : ""}`, { token: TOKENS.client });
      expect(page.status).toBe(200);
      expect(page.body.decisions.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.decisions.map((d: { chain_id: string }) => d.chain_id));
      cursor = page.body.next_cursor;
    } while (cursor !== null);
    expect(seen).toEqual([...fired].reverse());
  }, 60_000);

  test("filters: outcome, profile, event, bundle, hook, session, subject and time", async () => {
    const allowed = await fireGemini("ls -la");
    expect(allowed.status).toBe(200);
    const allow = allowed.body.decision;
    expect(allow).toMatchObject({ outcome: "allow", decided_by: null, reason: null, subject: { summary: "run_shell_command: ls -la" } });
    const q = async (query: string) => (await call(h.url, "GET", `/v1/decisions?${query}`, { token: TOKENS.client })).body.decisions as Array<Record<string, any>>;
    expect((await q("outcome=allow&limit=1"))[0]!.chain_id).toBe(allow.chain_id);
    expect((await q("outcome=block&limit=1000")).every((d) => d.outcome === "block")).toBe(true);
    expect((await q("profile=gemini-cli&event=BeforeTool&limit=1"))[0]!.chain_id).toBe(allow.chain_id);
    expect(await q("profile=gemini-cli&event=AfterTool")).toEqual([]);
    expect((await q("bundle=vcp-deny&limit=1000")).every((d) => d.profile === "vcp")).toBe(true);
    expect((await q("hook=block_destructive_shell&limit=1"))[0]!.chain_id).toBe(allow.chain_id);
    expect((await q("session=dec-vcp&limit=1000")).map((d) => d.session)).toEqual(["dec-vcp"]);
    expect((await q("subject=LS%20-LA&limit=1000")).map((d) => d.chain_id)).toEqual([allow.chain_id]);
    const at = Date.parse(allow.at);
    expect((await q(`since=${at}&limit=1000`)).map((d) => d.chain_id)).toContain(allow.chain_id);
    expect((await q(`since=${encodeURIComponent(new Date(at + 60_000).toISOString())}`))).toEqual([]);
    expect((await q(`until=${at - 60_000}`))).toEqual([]);
  }, 30_000);

  test("a bad parameter is a coded 400 naming it", async () => {
    for (const [query, field] of [
      ["since=yesterday", "querystring.since"],
      ["until=2026-13-45T99:00:00Z", "querystring.until"],
      ["limit=0", "querystring.limit"],
      ["limit=1001", "querystring.limit"],
      ["outcome=maybe", "querystring.outcome"],
      ["cursor=not-a-cursor", "querystring.cursor"],
      ["colour=red", "querystring"],
    ] as const) {
      const res = await call(h.url, "GET", `/v1/decisions?${query}`, { token: TOKENS.client });
      expect({ query, status: res.status, code: res.body?.error?.code }).toEqual({ query, status: 400, code: "INVALID_REQUEST" });
      expect(res.body.error.details.field, query).toBe(field);
    }
    const none = await call(h.url, "GET", "/v1/decisions");
    expect(none.status).toBe(401);
  });
});

describe("a chain no hook applied to (issue 25: one decision record for every chain, the stream too)", () => {
  /** GET /v1/decisions as the client, for one chain. */
  const listedAs = async (chainId: string, query: string) =>
    ((await call(h.url, "GET", `/v1/decisions?${query}&limit=1000`, { token: TOKENS.client })).body.decisions as Array<Record<string, any>>).filter((d) => d.chain_id === chainId);

  test("an agent event with no hook: allow, reason 'no hook selected', in the answer, the audit record (no input hash) and GET /v1/decisions", async () => {
    const input = { session_id: "dec-idle", transcript_path: "/home/dev/.gemini/t.jsonl", cwd: "/home/dev/app", hook_event_name: "BeforeAgent", timestamp: "2026-11-28T09:00:00Z", prompt: "tidy the repo" };
    const stream = await openStream(h.url, TOKENS.operator, "?session=dec-idle");
    await stream.next("hello");
    const res = await call(h.url, "POST", "/v1/profiles/gemini-cli/events/BeforeAgent", { token: TOKENS.client, body: input });
    expect(res.status).toBe(200);
    expect(res.body.result.hook_results).toEqual([]);
    const decision = res.body.decision;
    expect(decision).toMatchObject({
      chain_id: res.body.result.chain_id, profile: "gemini-cli", event: "BeforeAgent", outcome: "allow", errors: 0, decided_by: null,
      reason: "no hook selected", subject: { kind: "prompt" }, hooks: [], changes: [], session: "dec-idle", client: "app",
    });
    expect(JSON.stringify(decision)).not.toContain("tidy the repo");
    const record = await chainRecord(decision.chain_id);
    expect(record).toMatchObject({ profile: "gemini-cli", profile_event: "BeforeAgent", status: "completed", details: { reason: "no hook selected", hooks: 0 } });
    expect(record).not.toHaveProperty("input_hash");
    expect(record.decision).toEqual(decision);
    expect(await listedAs(decision.chain_id, "profile=gemini-cli&event=BeforeAgent&outcome=allow")).toEqual([decision]);
    try {
      const streamed = await stream.next("decision");
      expect(streamed).toMatchObject({ chain_id: decision.chain_id, profile: "gemini-cli", event: "BeforeAgent", status: "completed", reason: "no hook selected" });
      expect(streamed.decision).toEqual(decision);
    } finally {
      stream.close();
    }
  }, 30_000);

  test("an event newer than its profile (unknown_event): allow, reason 'unknown event, observe-only', on its audit record and listed", async () => {
    const res = await call(h.url, "POST", "/v1/profiles/claude-code/events/FutureThing", { token: TOKENS.client, body: { session_id: "dec-future", hook_event_name: "FutureThing", cwd: "/home/dev/app" } });
    expect(res.status).toBe(200);
    expect(res.body.unknown_event).toBe(true);
    const decision = res.body.decision;
    expect(decision).toMatchObject({
      profile: "claude-code", event: "FutureThing", outcome: "allow", decided_by: null, reason: "unknown event, observe-only",
      subject: { kind: "event", summary: "FutureThing" }, hooks: [], session: "dec-future", client: "app",
    });
    const record = await chainRecord(decision.chain_id);
    expect(record).toMatchObject({ outcome: "unknown_event", profile: "claude-code", profile_event: "FutureThing" });
    expect(record.decision).toEqual(decision);
    expect(await listedAs(decision.chain_id, "profile=claude-code")).toEqual([decision]);
  }, 30_000);

  test("a VCP chain whose type has no hook: the same, with the VCP answer otherwise unchanged", async () => {
    const opened = await call(h.url, "POST", "/v1/sessions", { token: TOKENS.client, body: { session_id: "dec-vcp-idle", context: { note: "hello" }, constitution } });
    expect(opened.status).toBe(201);
    const stream = await openStream(h.url, TOKENS.operator, "?session=dec-vcp-idle");
    await stream.next("hello");
    const res = await call(h.url, "POST", "/v1/sessions/dec-vcp-idle/chains/on_violation", { token: TOKENS.client, body: { event: { output: "bad output", violated_rules: [{ id: "tone-1", text: "Be courteous." }], severity: "major", violation_evidence: "rude", retry_count: 0 } } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ type: "on_violation", status: "completed", reason: null, aborted_by: null, hook_results: [], cascade_failure: false });
    const decision = res.body.decision;
    expect(decision).toMatchObject({
      chain_id: res.body.chain_id, profile: "vcp", event: "on_violation", outcome: "allow", decided_by: null, reason: "no hook selected",
      subject: { kind: "vcp", vcp_type: "on_violation" }, hooks: [], session: "dec-vcp-idle", client: "app",
    });
    const record = await chainRecord(decision.chain_id);
    expect(record).toMatchObject({ hook_type: "on_violation", status: "completed", owner: "app" });
    expect(record).not.toHaveProperty("input_hash");
    expect(record.decision).toEqual(decision);
    expect(await listedAs(decision.chain_id, "profile=vcp&event=on_violation")).toEqual([decision]);
    try {
      const streamed = await stream.next("decision");
      expect(streamed).toMatchObject({ chain_id: decision.chain_id, type: "on_violation", status: "completed" });
      expect(streamed.decision).toEqual(decision);
    } finally {
      stream.close();
    }
  }, 30_000);
});
