// Issue 24 item 1: the server never refuses a guarded event into an allow. A real server and sandbox
// with the README's example policies policies/gemini-safe-shell and policies/claude-safe-shell (their
// BeforeTool / PreToolUse guards are `fail_closed`) and the README's default limits. Every refusal
// after authentication of the agents' REAL request shapes — a 1.1 MB `description`, a `__proto__` key
// or 70-deep arguments in `tool_input`, invalid JSON, a body sent chunked past the limit, a field over
// a bound — comes back as the profile's blocking answer (HTTP 200, `?answer=native` as a Claude Code
// http hook reads it, and the envelope as the adapter reads it), audited as one `refused_fail_closed`
// record with the code. The 101st implicit session of a client is judged, not refused. Unauthenticated
// requests stay 401; events no fail-closed hook guards keep their coded 4xx. `npm run build` first.
import { createHash } from "node:crypto";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { signArtifact } from "../../src/bundle/artifact.js";
import { buildBundle } from "../../src/bundle/build.js";
import type { VcpArtifact } from "../../src/index.js";
import { keys, op, settings, sha256, startHarness, TOKENS, type Harness, type Reply } from "./helpers.js";

type Dialect = "gemini" | "claude";
const PROFILE: Record<Dialect, string> = { gemini: "gemini-cli", claude: "claude-code" };
const EVENT: Record<Dialect, string> = { gemini: "BeforeTool", claude: "PreToolUse" };
/** The event of the same policy that no fail-closed hook guards (its redaction hook fails open). */
const OPEN_EVENT: Record<Dialect, string> = { gemini: "AfterTool", claude: "PostToolUse" };
const SESSIONS_CLIENT = "cl-token-e2e-sessions-0123456789";
const README_BODY_BYTES = 1024 * 1024;

/** Gemini CLI's BeforeTool and Claude Code's PreToolUse stdin / http body, as the agents write them. */
function toolCall(d: Dialect, toolInput: Record<string, unknown>, session = `fc-${d}`): Record<string, unknown> {
  const base = { session_id: session, transcript_path: "/home/dev/.agent/t.jsonl", cwd: "/home/dev/app", hook_event_name: EVENT[d] };
  return d === "claude"
    ? { ...base, permission_mode: "default", tool_name: "Bash", tool_input: toolInput, tool_use_id: "toolu_01ABC" }
    : { ...base, timestamp: "2026-11-26T04:30:00Z", tool_name: "run_shell_command", tool_input: toolInput };
}
const rmRf = { command: "rm -rf ~", description: "Clean up the home directory" };

/** JSON text of `{"d": … }` nested `depth` objects deep (built as text: the test must not recurse). */
const deepText = (depth: number) => `${'{"d":'.repeat(depth)}{}${"}".repeat(depth)}`;
/** A tool call's JSON text with `raw` spliced in as `tool_input` (shapes JSON.stringify cannot write). */
const withRawToolInput = (d: Dialect, raw: string) => JSON.stringify(toolCall(d, { command: "@@" })).replace('{"command":"@@"}', raw);

interface Refusal {
  what: string;
  code: string;
  body: (d: Dialect) => string | ReadableStream<Uint8Array>;
}
const REFUSALS: Refusal[] = [
  { what: "a 1.1 MB description (413 from Content-Length)", code: "PAYLOAD_TOO_LARGE", body: (d) => JSON.stringify(toolCall(d, { ...rmRf, description: "x".repeat(1_100_000) })) },
  { what: "the same body sent chunked, without Content-Length (413 while reading)", code: "PAYLOAD_TOO_LARGE", body: (d) => chunked(JSON.stringify(toolCall(d, { ...rmRf, description: "x".repeat(1_100_000) }))) },
  { what: "a __proto__ key in tool_input", code: "MALFORMED_JSON", body: (d) => withRawToolInput(d, '{"command":"rm -rf ~","__proto__":{"isAdmin":true}}') },
  { what: "tool_input 70 objects deep", code: "INVALID_INPUT", body: (d) => withRawToolInput(d, `{"command":"rm -rf ~","args":${deepText(70)}}`) },
  { what: "invalid JSON (cut off)", code: "MALFORMED_JSON", body: (d) => JSON.stringify(toolCall(d, rmRf)).slice(0, 60) },
  { what: "a tool_name over its 1,024-character bound", code: "INVALID_INPUT", body: (d) => JSON.stringify({ ...toolCall(d, rmRf), tool_name: "B".repeat(5000) }) },
];

function chunked(text: string): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.subarray(at, at + 64 * 1024));
      at += 64 * 1024;
    },
  });
}

async function post(d: Dialect, body: string | ReadableStream<Uint8Array>, options: { native?: boolean; token?: string | null; event?: string } = {}): Promise<Reply> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  const token = options.token === undefined ? TOKENS.client : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  const path = `/v1/profiles/${PROFILE[d]}/events/${options.event ?? EVENT[d]}${options.native === true ? "?answer=native" : ""}`;
  const res = await fetch(`${h.url}${path}`, { method: "POST", headers, body, ...(typeof body === "string" ? {} : { duplex: "half" }) } as RequestInit);
  const text = await res.text();
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

/** The profile's blocking native answer, naming the refusal's code. */
function expectBlocked(d: Dialect, native: any, code: string): void {
  if (d === "claude") {
    expect(native.hookSpecificOutput).toMatchObject({ hookEventName: "PreToolUse", permissionDecision: "deny" });
    expect(native.hookSpecificOutput.permissionDecisionReason).toContain(code);
    expect(native.hookSpecificOutput.permissionDecisionReason).toContain("block_destructive_bash");
  } else {
    expect(native.decision).toBe("block");
    expect(native.reason).toContain(code);
    expect(native.reason).toContain("block_destructive_shell");
  }
}

let h: Harness;
const digests: Record<Dialect, string> = { gemini: "", claude: "" };
/** `guard.revisions` of a profile with one bundle: sha256 of its `bundle@digest`. */
const revisionsOf = (d: Dialect) => createHash("sha256").update(`${d}-safe-shell@${digests[d]}`).digest("hex");

beforeAll(async () => {
  h = await startHarness({
    settings: settings({
      auth: [
        { id: "ops", role: "operator", token_sha256: sha256(TOKENS.operator) },
        { id: "app", role: "client", token_sha256: sha256(TOKENS.client) },
        { id: "many", role: "client", token_sha256: sha256(SESSIONS_CLIENT) },
      ],
      limits: { body_bytes: README_BODY_BYTES, bundle_bytes: 256 * 1024 },
    }),
  });
  for (const d of ["gemini", "claude"] as const) {
    const { artifact } = await buildBundle(resolve("policies", `${d}-safe-shell`));
    const installed = await op(h, "PUT", `/v1/bundles/${d}-safe-shell`, signArtifact(artifact, keys.ops.privateKeyPem, "ops") as VcpArtifact);
    expect(installed.status, JSON.stringify(installed.body)).toBe(201);
    digests[d] = installed.body.digest;
  }
}, 120_000);
afterAll(async () => {
  await h?.close();
});

async function auditSince(seq: number) {
  const res = await op(h, "GET", `/v1/audit?since=${seq}&limit=1000`);
  expect(res.status).toBe(200);
  return res.body.records as Array<Record<string, any>>;
}

describe.each(["gemini", "claude"] as const)("%s: a refused tool call on a fail-closed event is blocked", (d) => {
  test.each(REFUSALS)("$what: ?answer=native is HTTP 200 with the block, exit code 2 and the guard headers", async ({ code, body }) => {
    const before = h.runtime.audit.head().seq;
    const res = await post(d, body(d), { native: true });
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expectBlocked(d, res.body, code);
    expect(res.headers.get("x-vcp-exit-code")).toBe("2");
    expect(res.headers.get("x-vcp-fail-closed-events")).toBe(EVENT[d]);
    expect(res.headers.get("x-vcp-guard-revisions")).toBe(revisionsOf(d));
    const records = await auditSince(before);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ kind: "chain", owner: "app", profile: PROFILE[d], profile_event: EVENT[d], status: "aborted", outcome: "refused_fail_closed", details: { code, exit_code: 2 } });
  }, 30_000);

  test.each(REFUSALS)("$what: the envelope has exit_code 2, the block, the refusal and the guard", async ({ code, body }) => {
    const before = h.runtime.audit.head().seq;
    const res = await post(d, body(d));
    expect(res.status, res.text.slice(0, 300)).toBe(200);
    expect(res.body.exit_code).toBe(2);
    expectBlocked(d, res.body.native, code);
    expect(res.body.refused.code).toBe(code);
    expect(typeof res.body.refused.message).toBe("string");
    expect(res.body.guard).toEqual({ revisions: revisionsOf(d), fail_closed_events: [EVENT[d]] });
    const records = await auditSince(before);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ outcome: "refused_fail_closed", chain_id: res.body.result.chain_id, details: { code } });
  }, 30_000);

  test("a judged answer carries the same guard: the envelope's field and the native answer's headers", async () => {
    const env = await post(d, JSON.stringify(toolCall(d, { command: "ls -la", description: "List files" })));
    expect(env.status).toBe(200);
    expect(env.body.guard).toEqual({ revisions: revisionsOf(d), fail_closed_events: [EVENT[d]] });
    expect(env.body.refused).toBeUndefined();
    const native = await post(d, JSON.stringify(toolCall(d, rmRf)), { native: true });
    expect(native.status).toBe(200);
    expect(native.headers.get("x-vcp-fail-closed-events")).toBe(EVENT[d]);
    expect(native.headers.get("x-vcp-guard-revisions")).toBe(revisionsOf(d));
  }, 30_000);

  test("unauthenticated requests stay 401, whatever the body", async () => {
    for (const token of [null, "not-a-token-0123456789"]) {
      const big = await post(d, JSON.stringify(toolCall(d, { ...rmRf, description: "x".repeat(1_100_000) })), { native: true, token });
      expect(big.status).toBe(401);
      const bad = await post(d, "{not json", { native: true, token });
      expect(bad.status).toBe(401);
      expect(bad.body.error.code).toBe("UNAUTHENTICATED");
    }
  });

  test("an operator token on the route stays 403", async () => {
    const res = await post(d, "{not json", { native: true, token: TOKENS.operator });
    expect(res.status).toBe(403);
  });

  test("an event no fail-closed hook guards keeps its coded 4xx", async () => {
    const invalid = await post(d, "{not json", { native: true, event: OPEN_EVENT[d] });
    expect({ status: invalid.status, code: invalid.body?.error?.code }).toEqual({ status: 400, code: "MALFORMED_JSON" });
    const big = await post(d, JSON.stringify({ ...toolCall(d, rmRf), hook_event_name: OPEN_EVENT[d], tool_response: "x".repeat(1_100_000) }), { event: OPEN_EVENT[d] });
    expect({ status: big.status, code: big.body?.error?.code }).toEqual({ status: 413, code: "PAYLOAD_TOO_LARGE" });
  });
});

describe("implicit sessions never refuse an event for their count", () => {
  test.each(["gemini", "claude"] as const)("%s: the 101st implicit session of a client is judged by the guard, both ways", async (d) => {
    const fire = (session: string, command: string, native = false) =>
      post(d, JSON.stringify(toolCall(d, { command, description: "x" }, `${d}-many-${session}`)), { token: SESSIONS_CLIENT, native });
    for (let i = 1; i <= 100; i++) {
      const res = await fire(String(i), "ls");
      expect(res.status, res.text).toBe(200);
    }
    const native = await fire("101", "rm -rf ~", true);
    expect(native.status, native.text).toBe(200);
    expect(native.headers.get("x-vcp-exit-code")).toBe("0");
    if (d === "claude") expect(native.body.hookSpecificOutput).toMatchObject({ permissionDecision: "deny" });
    else expect(native.body).toMatchObject({ decision: "block" });
    const env = await fire("102", "rm -rf ~");
    expect(env.status, env.text).toBe(200);
    expect(env.body.refused).toBeUndefined();
    expect(env.body.result.hook_results.find((r: { hook: string }) => r.hook.startsWith("block_destructive"))).toMatchObject({ outcome: "ok", verdict: "block" });
    const allowed = await fire("103", "ls");
    expect(allowed.status).toBe(200);
    expect(allowed.body.refused).toBeUndefined();
  }, 120_000);
});
