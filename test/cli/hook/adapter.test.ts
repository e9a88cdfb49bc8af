// `vcp-hooks hook` spawned as an agent spawns it, against a stand-in of the profile route: stdout and
// exit code for each dialect and verdict, and each --on-error mode for each way the server can fail.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createServer as createTcpServer, type AddressInfo, type Socket } from "node:net";
import { guardPath } from "../../../src/cli/hook-guard.js";
import { hook, MAIN, refusedUrl, runProcess, startStandIn, type AdapterTarget, type RouteReply } from "./stand-in.js";

type Dialect = "gemini" | "llxprt" | "claude" | "codex" | "vscode" | "cursor" | "openhands" | "goose" | "ai-memory" | "repo-yaml";

const INPUT: Record<Dialect, { event: string | undefined; body: Record<string, unknown> }> = {
  gemini: { event: "BeforeTool", body: { session_id: "s1", transcript_path: "/t", cwd: "/w", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "rm -rf /" } } },
  llxprt: { event: "BeforeTool", body: { session_id: "s1", transcript_path: "/t", cwd: "/w", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "rm -rf /" } } },
  claude: { event: "PreToolUse", body: { session_id: "s1", transcript_path: "/t", cwd: "/w", permission_mode: "default", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "rm -rf /" }, tool_use_id: "t1" } },
  codex: { event: "PreToolUse", body: { session_id: "s1", turn_id: "t1", transcript_path: null, cwd: "/w", model: "gpt-5", permission_mode: "default", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "rm -rf /" }, tool_use_id: "c1" } },
  vscode: { event: "PreToolUse", body: { sessionId: "s1", hookEventName: "PreToolUse", timestamp: "2026-11-28T00:00:00.000Z", cwd: "/w", tool_name: "run_in_terminal", tool_input: { command: "rm -rf /" }, tool_use_id: "tool-1" } },
  cursor: { event: "beforeShellExecution", body: { hook_event_name: "beforeShellExecution", conversation_id: "c1", generation_id: "g1", workspace_roots: ["/w"], command: "rm -rf /", cwd: "/w" } },
  openhands: { event: "PreToolUse", body: { event_type: "PreToolUse", tool_name: "terminal", tool_input: { command: "rm -rf /" }, session_id: "s1", working_dir: "/w", metadata: {} } },
  goose: { event: "PreToolUse", body: { event: "PreToolUse", session_id: "s1", matcher_context: "developer__shell", tool_name: "developer__shell", tool_input: { command: "rm -rf /" }, working_dir: "/w" } },
  "ai-memory": { event: undefined, body: { event: "pre_store", payload: { namespace: "n", content: "my password is hunter2" } } },
  "repo-yaml": { event: "PreAbilityCall", body: { event_type: "PreAbilityCall", ability_id: "fs.write", session_id: "s1" } },
};
const PROFILE: Record<Dialect, string> = { gemini: "gemini-cli", llxprt: "llxprt", claude: "claude-code", codex: "codex", vscode: "vscode", cursor: "cursor", openhands: "openhands", goose: "goose", "ai-memory": "ai-memory", "repo-yaml": "repo-yaml" };

// The native answers a profile route gives for each verdict (PROFILES §3), and the exit code the route reports.
const ANSWERS: Record<Dialect, Record<string, { native: Record<string, unknown>; exit_code: number }>> = {
  gemini: {
    allow: { native: {}, exit_code: 0 },
    deny: { native: { decision: "deny", reason: "rm -rf is not allowed" }, exit_code: 0 },
    ask: { native: { decision: "ask", reason: "confirm" }, exit_code: 0 },
    modify: { native: { hookSpecificOutput: { tool_input: { command: "rm -ri /tmp/x" } } }, exit_code: 0 },
    stop: { native: { continue: false, stopReason: "budget spent" }, exit_code: 0 },
  },
  llxprt: {
    allow: { native: {}, exit_code: 0 },
    deny: { native: { decision: "block", reason: "rm -rf is not allowed" }, exit_code: 0 },
    ask: { native: { hookSpecificOutput: { permissionDecision: "ask" } }, exit_code: 0 },
    modify: { native: { hookSpecificOutput: { tool_input: { command: "ls" } } }, exit_code: 0 },
    stop: { native: { continue: false, stopReason: "stop" }, exit_code: 0 },
  },
  claude: {
    allow: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } }, exit_code: 0 },
    deny: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no rm -rf" } }, exit_code: 0 },
    ask: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask" } }, exit_code: 0 },
    modify: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: { command: "ls" } } }, exit_code: 0 },
    stop: { native: { continue: false, stopReason: "done" }, exit_code: 0 },
  },
  codex: {
    allow: { native: {}, exit_code: 0 },
    deny: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no rm -rf" } }, exit_code: 0 },
    ask: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "approval required (Codex hooks cannot ask; denied instead)" } }, exit_code: 0 },
    modify: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: { command: "ls" } } }, exit_code: 0 },
    stop: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "done" } }, exit_code: 0 },
  },
  vscode: {
    allow: { native: {}, exit_code: 0 },
    deny: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no rm -rf" } }, exit_code: 0 },
    ask: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask" } }, exit_code: 0 },
    modify: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow", updatedInput: { command: "ls" } } }, exit_code: 0 },
    stop: { native: { continue: false, stopReason: "done" }, exit_code: 0 },
  },
  cursor: {
    allow: { native: {}, exit_code: 0 },
    deny: { native: { permission: "deny", user_message: "no rm -rf", agent_message: "no rm -rf" }, exit_code: 0 },
    ask: { native: { permission: "ask", user_message: "sure?" }, exit_code: 0 },
    modify: { native: { permission: "allow" }, exit_code: 0 },
    stop: { native: { permission: "deny", user_message: "done" }, exit_code: 0 },
  },
  openhands: {
    allow: { native: { decision: "allow" }, exit_code: 0 },
    deny: { native: { decision: "deny", reason: "no rm -rf" }, exit_code: 0 },
    ask: { native: { decision: "deny", reason: "confirm first" }, exit_code: 0 },
    modify: { native: {}, exit_code: 0 },
    stop: { native: { decision: "deny", reason: "done" }, exit_code: 0 },
  },
  goose: {
    allow: { native: { decision: "allow" }, exit_code: 0 },
    deny: { native: { decision: "block", reason: "no rm -rf" }, exit_code: 0 },
    ask: { native: { decision: "block", reason: "confirm first" }, exit_code: 0 },
    modify: { native: { decision: "allow" }, exit_code: 0 },
    stop: { native: { decision: "block", reason: "done" }, exit_code: 0 },
  },
  "ai-memory": {
    allow: { native: { action: "allow" }, exit_code: 0 },
    deny: { native: { action: "deny", reason: "secret in content", code: 451 }, exit_code: 0 },
    ask: { native: { action: "ask_user", prompt: "store?", options: ["yes", "no"], default: "no" }, exit_code: 0 },
    modify: { native: { action: "modify", delta: { content: "my password is [redacted]" } }, exit_code: 0 },
    stop: { native: { action: "deny", reason: "stop", code: 403 }, exit_code: 0 },
  },
  "repo-yaml": {
    allow: { native: { logs: [], messages_to_user: [] }, exit_code: 0 },
    deny: { native: { error: "blocked_by_policy", messages_to_user: ["writes are frozen"] }, exit_code: 2 },
    ask: { native: { messages_to_user: ["are you sure?"] }, exit_code: 0 },
    modify: { native: { new_intent: { intent: "review" } }, exit_code: 0 },
    stop: { native: { error: "blocked_by_policy" }, exit_code: 2 },
  },
};

const DIALECTS = Object.keys(INPUT) as Dialect[];
const args = (d: Dialect, extra: string[] = []) => [...(INPUT[d].event ? [INPUT[d].event!] : []), "--dialect", d, ...extra];
const stdin = (d: Dialect) => JSON.stringify(INPUT[d].body);

let target: AdapterTarget;
let verdict = "allow";
let failure: RouteReply | undefined;
/** The envelope's `guard` member (issue 24); undefined: an older server that sends none. */
let guard: unknown;
const dirs: string[] = [];

beforeAll(async () => {
  target = await startStandIn((profile, event) => {
    if (failure) return failure;
    const d = DIALECTS.find((x) => PROFILE[x] === profile)!;
    return { body: { ...ANSWERS[d][verdict]!, result: { event, outcomes: {} }, ...(guard !== undefined ? { guard } : {}) } };
  });
});
afterAll(async () => {
  await target.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(DIALECTS)("--dialect %s", (d) => {
  test.each(["allow", "deny", "ask", "modify", "stop"])("%s: the native answer on stdout and the dialect's exit code", async (v) => {
    verdict = v;
    failure = undefined;
    const before = target.requests.length;
    const r = await hook(target, args(d), stdin(d));
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual(ANSWERS[d][v]!.native);
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    // gemini/llxprt/claude: exit 0 for allow and deny alike; repo-yaml: 2 when blocked.
    expect(r.code).toBe(d === "repo-yaml" && (v === "deny" || v === "stop") ? 2 : 0);
    const seen = target.requests[before]!;
    expect(seen.path).toBe(`/v1/profiles/${PROFILE[d]}/events/${INPUT[d].event ?? "pre_store"}`);
    expect(seen.authorization).toBe(`Bearer ${target.token}`);
    expect(JSON.parse(seen.body)).toEqual(INPUT[d].body);
  });
});

describe("--on-error", () => {
  const BLOCK: Record<Dialect, (r: { code: number | null; stdout: string; stderr: string }) => void> = {
    gemini: (r) => expect([r.code, r.stdout]).toEqual([2, ""]),
    llxprt: (r) => expect([r.code, r.stdout]).toEqual([2, ""]),
    claude: (r) => expect([r.code, r.stdout]).toEqual([2, ""]),
    codex: (r) => expect([r.code, r.stdout]).toEqual([2, ""]),
    vscode: (r) => expect([r.code, r.stdout]).toEqual([2, ""]),
    cursor: (r) => expect([r.code, r.stdout]).toEqual([2, ""]),
    openhands: (r) => expect([r.code, r.stdout]).toEqual([2, ""]),
    goose: (r) => expect([r.code, r.stdout]).toEqual([2, ""]),
    "ai-memory": (r) => {
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ action: "deny", code: 503 });
      expect(JSON.parse(r.stdout).reason).toMatch(/^vcp-hooks unavailable: /);
    },
    "repo-yaml": (r) => {
      expect(r.code).toBe(2);
      expect(JSON.parse(r.stdout)).toMatchObject({ error: "blocked_by_policy" });
    },
  };

  describe.each(DIALECTS)("server down, --dialect %s", (d) => {
    let down: { url: string; token: string };
    let cache: string;
    beforeAll(async () => {
      down = { url: await refusedUrl(), token: "t" };
      cache = mkdtempSync(join(tmpdir(), "vcp-guard-"));
      dirs.push(cache);
    });
    test("auto (default), no plan seen yet: the tool event is blocked, naming why", async () => {
      const r = await hook(down, args(d), stdin(d), { XDG_CACHE_HOME: cache });
      BLOCK[d](r);
      expect(r.stderr).toMatch(/unreachable: ECONNREFUSED \(on-error=auto: \S+ runs before a tool and no plan of this server is known yet\)/);
    });
    test("warn: exit 1 and one stderr line", async () => {
      const r = await hook(down, args(d, ["--on-error", "warn"]), stdin(d));
      expect(r.code).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(/unreachable: ECONNREFUSED/);
    });
    test("block: the dialect's own refusal", async () => {
      const r = await hook(down, args(d, ["--on-error", "block"]), stdin(d));
      BLOCK[d](r);
      expect(r.stderr).toMatch(/ECONNREFUSED/);
    });
    test("allow: exit 0, silent", async () => {
      const r = await hook(down, args(d, ["--on-error", "allow"]), stdin(d));
      expect(r).toMatchObject({ code: 0, stdout: "", stderr: "" });
    });
  });

  test.each<[Dialect, string, string]>([
    ["gemini", "AfterTool", JSON.stringify({ ...INPUT.gemini.body, hook_event_name: "AfterTool", tool_response: {} })],
    ["claude", "UserPromptSubmit", JSON.stringify({ session_id: "s1", transcript_path: "/t", cwd: "/w", permission_mode: "default", hook_event_name: "UserPromptSubmit", prompt: "hi" })],
    ["ai-memory", "post_store", JSON.stringify({ event: "post_store", payload: { namespace: "n" } })],
    ["repo-yaml", "PostAbilityCall", JSON.stringify({ event_type: "PostAbilityCall", ability_id: "fs.write", session_id: "s1" })],
  ])("auto, no plan seen yet: %s %s is not a tool event and warns", async (d, event, body) => {
    const cache = mkdtempSync(join(tmpdir(), "vcp-guard-"));
    dirs.push(cache);
    const r = await hook({ url: await refusedUrl(), token: "t" }, [...(d === "ai-memory" ? [] : [event]), "--dialect", d], body, { XDG_CACHE_HOME: cache });
    expect([r.code, r.stdout]).toEqual([1, ""]);
    expect(r.stderr).toMatch(new RegExp(`\\(on-error=auto: ${event} is not a tool event and no plan of this server is known yet\\)`));
  });

  test("5xx: warn names the status and the server's message", async () => {
    failure = { status: 503, body: { error: { code: "SANDBOX_OVERLOADED", message: "the sandbox queue is full" } } };
    const r = await hook(target, args("gemini", ["--on-error", "warn"]), stdin("gemini"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("answered 503: SANDBOX_OVERLOADED: the sandbox queue is full");
    const b = await hook(target, args("claude", ["--on-error", "block"]), stdin("claude"));
    expect(b.code).toBe(2);
    expect(b.stderr).toContain("vcp-hooks unavailable:");
  });

  test("4xx is the server refusing the event: a wrong token, its code and message on stderr, never 'unreachable'", async () => {
    failure = undefined;
    const r = await hook(target, args("llxprt", ["--on-error", "warn"]), stdin("llxprt"), { VCP_CLIENT_TOKEN: "wrong" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("refused the event: 401 UNAUTHENTICATED: no or unknown bearer");
    const b = await hook(target, args("ai-memory", ["--on-error", "block"]), stdin("ai-memory"), { VCP_CLIENT_TOKEN: "wrong" });
    expect(JSON.parse(b.stdout)).toMatchObject({ action: "deny", code: 503 });
    expect(JSON.parse(b.stdout).reason).toContain("401 UNAUTHENTICATED");
    // No token at all: the message says where one comes from.
    const none = await hook(target, args("gemini", ["--on-error", "warn"]), stdin("gemini"), { VCP_CLIENT_TOKEN: undefined, VCP_TOKEN_FILE: undefined });
    expect(none.stderr).toContain("(no token was sent: set VCP_CLIENT_TOKEN, or pass --token-file)");
  });

  test("a slow server: the --on-error answer within --timeout-ms + 1 s, never a hang", async () => {
    failure = { delayMs: 30_000, body: {} };
    const r = await hook(target, args("gemini", ["--timeout-ms", "300", "--on-error", "block"]), stdin("gemini"));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/within 300 ms/);
    expect(r.ms).toBeLessThan(20_000);
    failure = undefined;
  });

  test("stdin never closed: the --on-error answer by --timeout-ms + 1 s", async () => {
    const r = await runProcess(process.execPath, [MAIN, "hook", "BeforeTool", "--dialect", "gemini", "--server", target.url, "--timeout-ms", "200", "--on-error", "warn"], null);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no answer within 200 ms/);
  });

  test("a 200 that is not the route's envelope is an error, not an answer", async () => {
    failure = { body: "<html>proxy</html>" };
    const r = await hook(target, args("claude", ["--on-error", "warn"]), stdin("claude"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not JSON");
    // auto: PreToolUse is a tool event, blocked.
    const auto = await hook(target, args("claude"), stdin("claude"), { XDG_CACHE_HOME: freshDir() });
    expect([auto.code, auto.stdout]).toEqual([2, ""]);
    expect(auto.stderr).toContain("not JSON");
    failure = undefined;
  });
});

describe("bad input", () => {
  test.each<[Dialect, string, RegExp]>([
    ["gemini", "{not json", /stdin is not JSON/],
    ["claude", "", /stdin is empty/],
    ["llxprt", "[1,2]", /must be a JSON object, got an array/],
    ["ai-memory", JSON.stringify({ payload: {} }), /needs "event"/],
    ["ai-memory", JSON.stringify({ event: "pre_store" }), /needs "payload"/],
  ])("%s: %s ⇒ the dialect's error answer naming the problem", async (d, text, message) => {
    const requests = target.requests.length;
    const r = await hook(target, args(d, ["--on-error", "warn"]), text);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(target.requests.length).toBe(requests);
    // auto (default): the tool event of each dialect is blocked; an ai-memory envelope whose event cannot be read too.
    const b = await hook(target, args(d), text, { XDG_CACHE_HOME: freshDir() });
    expect(b.stderr).toMatch(message);
    if (d === "ai-memory") expect(JSON.parse(b.stdout)).toMatchObject({ action: "deny", code: 503 });
    else expect(b.code).toBe(2);
  });

  test("bad arguments follow --on-error too (never a surprise exit 2 under warn)", async () => {
    const r = await hook(target, ["BeforeTool", "--dialect", "gemni"], stdin("gemini"));
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--dialect must be one of/);
  });

  test("stderr is redacted", async () => {
    failure = { status: 500, body: { error: { code: "INTERNAL", message: "upstream said Authorization: Bearer abcdefghijk.lmnop" } } };
    const r = await hook(target, args("gemini", ["--on-error", "warn"]), stdin("gemini"));
    expect(r.stderr).toContain("Bearer [REDACTED]");
    expect(r.stderr).not.toContain("abcdefghijk");
    failure = undefined;
  });
});

describe("--record", () => {
  test("saves each input and its answer", async () => {
    verdict = "deny";
    failure = undefined;
    const dir = mkdtempSync(join(tmpdir(), "vcp-record-"));
    dirs.push(dir);
    const r = await hook(target, args("gemini", ["--record", dir]), stdin("gemini"));
    expect(r.code).toBe(0);
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/-BeforeTool\.json$/);
    expect(statSync(join(dir, files[0]!)).mode & 0o077).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, files[0]!), "utf8"))).toMatchObject({
      dialect: "gemini",
      profile: "gemini-cli",
      event: "BeforeTool",
      input: INPUT.gemini.body,
      answer: ANSWERS.gemini.deny,
      rendered: { exit_code: 0 },
    });
    // The recording is what shadow replay reads.
    const { readRecordings } = await import("../../../src/tooling/replay.js");
    expect(readRecordings(dir)).toMatchObject({ recordings: [{ profile: "gemini-cli", event: "BeforeTool", answer: ANSWERS.gemini.deny }], skipped: [] });
  });
});

describe("ai-memory daemon and shim", () => {
  test("--daemon: one decision line per NDJSON envelope, in order, one connection, single-flight", async () => {
    failure = undefined;
    verdict = "allow";
    const before = target.requests.length;
    const child = spawn(process.execPath, [MAIN, "hook", "--dialect", "ai-memory", "--daemon", "--server", target.url], { env: { ...process.env, VCP_CLIENT_TOKEN: target.token }, stdio: ["pipe", "pipe", "pipe"] });
    const lines: string[] = [];
    let buf = "";
    child.stdout.on("data", (c) => {
      buf += c;
      const parts = buf.split("\n");
      buf = parts.pop()!;
      lines.push(...parts);
    });
    const envelopes = ["pre_store", "pre_recall", "post_store", "pre_delete"].map((event, i) => JSON.stringify({ event, payload: { i } }));
    child.stdin.write(`${envelopes.join("\n")}\nnot json\n`);
    while (lines.length < 5) await new Promise((s) => setTimeout(s, 20));
    child.stdin.end();
    const code = await new Promise((s) => child.on("close", s));
    expect(code).toBe(0);
    expect(lines.slice(0, 4).map((l) => JSON.parse(l))).toEqual([{ action: "allow" }, { action: "allow" }, { action: "allow" }, { action: "allow" }]);
    // A bad line gets a line too (auto: its event cannot be read, and it may be a pre_* event ⇒ deny).
    expect(JSON.parse(lines[4]!)).toMatchObject({ action: "deny", code: 503 });
    const mine = target.requests.slice(before);
    expect(mine.map((r) => r.path.split("/").pop())).toEqual(["pre_store", "pre_recall", "post_store", "pre_delete"]);
    expect(new Set(mine.map((r) => r.socket)).size).toBe(1);
    // Single-flight: each envelope is sent after the previous answer arrived.
    for (let i = 1; i < mine.length; i++) expect(mine[i]!.receivedAt).toBeGreaterThanOrEqual(mine[i - 1]!.answeredAt!);
  });

  test("--write-shim: an executable that runs the adapter with its arguments baked in", async () => {
    verdict = "deny";
    const dir = mkdtempSync(join(tmpdir(), "vcp-shim-"));
    dirs.push(dir);
    const shim = join(dir, "vcp-hook");
    const w = await runProcess(process.execPath, [MAIN, "hook", "--write-shim", "ai-memory", "--out", shim, "--server", target.url, "--on-error", "block"], "");
    expect(w.code).toBe(0);
    expect(statSync(shim).mode & 0o111).not.toBe(0);
    const r = await runProcess(shim, [], stdin("ai-memory"), { VCP_CLIENT_TOKEN: target.token });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(ANSWERS["ai-memory"].deny!.native);
    const down = await runProcess(shim, [], stdin("ai-memory"), { VCP_CLIENT_TOKEN: "wrong" });
    expect(JSON.parse(down.stdout)).toMatchObject({ action: "deny", code: 503 });
  });
});

describe("cold start", () => {
  test("the hook path loads none of zod, fastify, pino, isolated-vm or src/index", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vcp-coldstart-"));
    dirs.push(dir);
    const log = join(dir, "loaded.txt");
    const preload = join(dir, "trace.mjs");
    writeFileSync(
      preload,
      `import { registerHooks } from "node:module"; import { appendFileSync } from "node:fs";
registerHooks({ resolve(spec, ctx, next) { const r = next(spec, ctx); appendFileSync(${JSON.stringify(log)}, r.url + "\\n"); return r; } });\n`,
    );
    verdict = "allow";
    const r = await runProcess(process.execPath, ["--import", pathToFileURL(preload).href, MAIN, "hook", "BeforeTool", "--dialect", "gemini", "--server", target.url], stdin("gemini"), { VCP_CLIENT_TOKEN: target.token });
    expect(r.code).toBe(0);
    const loaded = readFileSync(log, "utf8");
    expect(loaded).toContain("cli/hook.js");
    for (const heavy of ["/zod/", "/fastify/", "/pino/", "/isolated-vm/", "dist/src/index.js", "/piscina/"]) expect(loaded, heavy).not.toContain(heavy);
    // A one-shot plain-HTTP POST goes over node:net; node:http (and TLS) are not loaded at all.
    expect(loaded.split("\n")).not.toContain("node:http");
    expect(loaded.split("\n")).not.toContain("node:https");
  });
});

describe("--on-error auto: the guard facts of the last answer (issue 24)", () => {
  const freshCache = () => {
    const dir = mkdtempSync(join(tmpdir(), "vcp-guard-"));
    dirs.push(dir);
    return dir;
  };
  const guardFile = (cache: string, profile: string) => guardPath(new URL(target.url).href, profile, { XDG_CACHE_HOME: cache });

  test("an answer's guard is kept in the user's cache dir (0600), and the next failure follows it", async () => {
    const cache = freshCache();
    verdict = "allow";
    failure = undefined;
    guard = { revisions: "a".repeat(64), fail_closed_events: ["BeforeTool"] };
    const ok = await hook(target, args("gemini"), stdin("gemini"), { XDG_CACHE_HOME: cache });
    expect(ok.code).toBe(0);
    const file = guardFile(cache, "gemini-cli");
    expect(file.startsWith(join(cache, "vcp-hooks", "guard-"))).toBe(true);
    expect(statSync(file).mode & 0o077).toBe(0);
    expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ format: 1, server: new URL(target.url).href, profile: "gemini-cli", guard: { revisions: "a".repeat(64), fail_closed_events: ["BeforeTool"] } });
    // The server now fails: the guarded BeforeTool is blocked, AfterTool (not guarded) warns.
    failure = { status: 502, body: "bad gateway" };
    const blocked = await hook(target, args("gemini"), stdin("gemini"), { XDG_CACHE_HOME: cache });
    expect([blocked.code, blocked.stdout]).toEqual([2, ""]);
    expect(blocked.stderr).toContain("answered 502 (on-error=auto: BeforeTool is guarded by a fail_closed hook in the last plan seen from this server)");
    const warned = await hook(target, ["AfterTool", "--dialect", "gemini"], JSON.stringify({ ...INPUT.gemini.body, hook_event_name: "AfterTool" }), { XDG_CACHE_HOME: cache });
    expect([warned.code, warned.stdout]).toEqual([1, ""]);
    expect(warned.stderr).toContain("(on-error=auto: no fail_closed hook guards AfterTool in the last plan seen from this server)");
    expect(warned.stderr, "the mode is said once").not.toContain("(on-error=warn)");
    failure = undefined;
    guard = undefined;
  });

  test("a plan without a fail_closed guard on the tool event: its failure warns (the policy fails open there)", async () => {
    const cache = freshCache();
    failure = undefined;
    guard = { revisions: "b".repeat(64), fail_closed_events: [] };
    expect((await hook(target, args("claude"), stdin("claude"), { XDG_CACHE_HOME: cache })).code).toBe(0);
    failure = { status: 503, body: { error: { code: "SANDBOX_OVERLOADED", message: "full" } } };
    const r = await hook(target, args("claude"), stdin("claude"), { XDG_CACHE_HOME: cache });
    expect([r.code, r.stdout]).toEqual([1, ""]);
    expect(r.stderr).toContain("no fail_closed hook guards PreToolUse");
    failure = undefined;
    guard = undefined;
  });

  test("an answer without guard (an older server) leaves the file as it was; a corrupt file counts as none", async () => {
    const cache = freshCache();
    failure = undefined;
    guard = { revisions: "c".repeat(64), fail_closed_events: ["PreAbilityCall"] };
    expect((await hook(target, args("repo-yaml"), stdin("repo-yaml"), { XDG_CACHE_HOME: cache })).code).toBe(0);
    const file = guardFile(cache, "repo-yaml");
    const before = readFileSync(file, "utf8");
    guard = undefined;
    expect((await hook(target, args("repo-yaml"), stdin("repo-yaml"), { XDG_CACHE_HOME: cache })).code).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(before);
    // A malformed guard member is not stored either.
    guard = { revisions: 7, fail_closed_events: "PreAbilityCall" };
    expect((await hook(target, args("repo-yaml"), stdin("repo-yaml"), { XDG_CACHE_HOME: cache })).code).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(before);
    guard = undefined;
    // Corrupt: treated as missing, so the tool event blocks and the rest warns.
    writeFileSync(file, "{ not json");
    const down = { url: target.url, token: target.token };
    failure = { body: "<html>garbage</html>" };
    const blocked = await hook(down, args("repo-yaml"), stdin("repo-yaml"), { XDG_CACHE_HOME: cache });
    expect(blocked.code).toBe(2);
    expect(JSON.parse(blocked.stdout)).toMatchObject({ error: "blocked_by_policy" });
    expect(blocked.stderr).toContain("no plan of this server is known yet");
    failure = undefined;
  });

  test("a file for another server (renamed into place) is not believed", async () => {
    const cache = freshCache();
    const file = guardFile(cache, "gemini-cli");
    mkdirSync(join(cache, "vcp-hooks"), { recursive: true });
    writeFileSync(file, JSON.stringify({ format: 1, server: "http://elsewhere:1/", profile: "gemini-cli", guard: { revisions: "d", fail_closed_events: [] } }));
    failure = { status: 500, body: {} };
    const r = await hook(target, args("gemini"), stdin("gemini"), { XDG_CACHE_HOME: cache });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("no plan of this server is known yet");
    failure = undefined;
  });
});

describe("a server that answers before reading the body", () => {
  // Answers 413 on the request head and resets the connection while the body still comes in (the
  // close of a socket with unread data is a reset): the adapter must read it as the 413.
  let early: { url: string; close(): Promise<void> };
  beforeAll(async () => {
    const sockets = new Set<Socket>();
    const server = createTcpServer((socket) => {
      sockets.add(socket);
      let head = "";
      socket.on("data", (c: Buffer) => {
        if (head.includes("\r\n\r\n")) return;
        head += c.toString("latin1");
        if (!head.includes("\r\n\r\n")) return;
        const body = JSON.stringify({ error: { code: "BODY_TOO_LARGE", message: "the body is larger than 1048576 bytes" } });
        socket.write(`HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`);
        socket.resetAndDestroy();
      });
      socket.on("error", () => undefined);
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    early = {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((done) => {
        for (const s of sockets) s.destroy();
        server.close(() => done());
      }),
    };
  });
  afterAll(async () => early.close());

  test("a 1.1 MB tool call refused with 413: the 413 and its code, never 'unreachable: EPIPE'", async () => {
    const big = JSON.stringify({ ...INPUT.gemini.body, tool_input: { command: "rm -rf ~", description: "x".repeat(1_100_000) } });
    for (let i = 0; i < 5; i++) {
      const r = await hook({ url: early.url, token: "t" }, args("gemini"), big);
      expect(r.stderr).toContain("refused the event: 413 BODY_TOO_LARGE: the body is larger than 1048576 bytes");
      expect(r.stderr).not.toMatch(/EPIPE|ECONNRESET/);
      // BeforeTool, no plan seen: blocked.
      expect([r.code, r.stdout]).toEqual([2, ""]);
    }
  });
});

describe("the client token and the server from files and the environment", () => {
  test("--token-file: the token is read from the file when the agent strips the environment", async () => {
    verdict = "deny";
    failure = undefined;
    const dir = mkdtempSync(join(tmpdir(), "vcp-token-"));
    dirs.push(dir);
    const file = join(dir, "token");
    writeFileSync(file, `${target.token}\n`, { mode: 0o600 });
    const before = target.requests.length;
    const r = await hook(target, args("gemini", ["--token-file", file]), stdin("gemini"), { VCP_CLIENT_TOKEN: undefined });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(ANSWERS.gemini.deny!.native);
    expect(target.requests[before]!.authorization).toBe(`Bearer ${target.token}`);
    // VCP_TOKEN_FILE when the token variable is unset.
    const env = await hook(target, args("claude"), stdin("claude"), { VCP_CLIENT_TOKEN: undefined, VCP_TOKEN_FILE: file });
    expect(env.code).toBe(0);
    expect(target.requests.at(-1)!.authorization).toBe(`Bearer ${target.token}`);
  });

  test("a token file that cannot be read is the adapter's failure, naming the file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vcp-token-"));
    dirs.push(dir);
    const cases: Array<[string, RegExp]> = [
      [join(dir, "missing"), /--token-file \S+missing: cannot read it \(ENOENT\)/],
      [dir, /--token-file \S+: not a regular file/],
    ];
    const big = join(dir, "big");
    writeFileSync(big, "x".repeat(5000));
    cases.push([big, /--token-file \S+big: 5000 bytes, larger than a token file may be \(4096\)/]);
    const empty = join(dir, "empty");
    writeFileSync(empty, " \n");
    cases.push([empty, /--token-file \S+empty: the file is empty/]);
    const requests = target.requests.length;
    for (const [path, message] of cases) {
      const r = await hook(target, args("gemini", ["--token-file", path]), stdin("gemini"), { VCP_CLIENT_TOKEN: undefined });
      expect([r.code, r.stdout], path).toEqual([2, ""]);
      expect(r.stderr).toMatch(message);
    }
    // Nothing was sent without the token the user meant to send.
    expect(target.requests.length).toBe(requests);
  });

  test("VCP_SERVER is the server when --server is not given", async () => {
    verdict = "allow";
    failure = undefined;
    const before = target.requests.length;
    const r = await runProcess(process.execPath, [MAIN, "hook", "BeforeTool", "--dialect", "gemini"], stdin("gemini"), { VCP_CLIENT_TOKEN: target.token, VCP_SERVER: target.url });
    expect(r.code, r.stderr).toBe(0);
    expect(target.requests.length).toBe(before + 1);
    const bad = await runProcess(process.execPath, [MAIN, "hook", "BeforeTool", "--dialect", "gemini", "--on-error", "warn"], stdin("gemini"), { VCP_SERVER: "ftp://x" });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("VCP_SERVER must be an http(s) URL, not 'ftp://x'");
  });
});

describe("ai-memory daemon: one slow answer", () => {
  test("an answer that trickles past its deadline holds no connection: every later envelope is answered", async () => {
    // The first envelope's answer sends its headers, then a byte every 100 ms for 20 s.
    const trickle = createTcpServer((socket) => {
      let buf = "";
      socket.on("error", () => undefined);
      socket.on("data", (c: Buffer) => {
        buf += c.toString("latin1");
        for (;;) {
          const end = buf.indexOf("\r\n\r\n");
          if (end === -1) return;
          const length = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
          if (buf.length < end + 4 + length) return;
          const body = buf.slice(end + 4, end + 4 + length);
          buf = buf.slice(end + 4 + length);
          if ((JSON.parse(body) as { payload: { slow?: boolean } }).payload.slow === true) {
            socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n");
            const t = setInterval(() => (socket.destroyed ? clearInterval(t) : socket.write("1\r\n \r\n")), 100);
            setTimeout(() => clearInterval(t), 20_000);
          } else {
            const answer = JSON.stringify({ native: { action: "allow" }, exit_code: 0 });
            socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${answer.length}\r\n\r\n${answer}`);
          }
        }
      });
    });
    await new Promise<void>((done) => trickle.listen(0, "127.0.0.1", done));
    const url = `http://127.0.0.1:${(trickle.address() as AddressInfo).port}`;
    try {
      const child = spawn(process.execPath, [MAIN, "hook", "--dialect", "ai-memory", "--daemon", "--server", url, "--timeout-ms", "500"], { env: { ...process.env, XDG_CACHE_HOME: freshDir() }, stdio: ["pipe", "pipe", "pipe"] });
      const lines: string[] = [];
      let buf = "";
      child.stdout.on("data", (c) => {
        buf += c;
        const parts = buf.split("\n");
        buf = parts.pop()!;
        lines.push(...parts);
      });
      const envelope = (slow: boolean) => `${JSON.stringify({ event: "pre_store", payload: { slow } })}\n`;
      child.stdin.write(envelope(true) + envelope(false) + envelope(false) + envelope(false));
      const until = Date.now() + 15_000;
      while (lines.length < 4 && Date.now() < until) await new Promise((s) => setTimeout(s, 20));
      child.stdin.end();
      await new Promise((s) => child.on("close", s));
      // The slow one: its deadline's answer (auto: pre_store, no plan seen ⇒ deny); the others: answered.
      expect(JSON.parse(lines[0]!)).toMatchObject({ action: "deny", code: 503 });
      expect(lines.slice(1, 4).map((l) => JSON.parse(l))).toEqual([{ action: "allow" }, { action: "allow" }, { action: "allow" }]);
    } finally {
      trickle.close();
    }
  }, 30_000);
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "vcp-guard-"));
  dirs.push(dir);
  return dir;
}
