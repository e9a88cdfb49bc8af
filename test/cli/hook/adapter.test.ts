// `vcp-hooks hook` spawned as an agent spawns it, against a stand-in of the profile route: stdout and
// exit code for each dialect and verdict, and each --on-error mode for each way the server can fail.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn } from "node:child_process";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { hook, MAIN, refusedUrl, runProcess, startStandIn, type AdapterTarget, type RouteReply } from "./stand-in.js";

type Dialect = "gemini" | "llxprt" | "claude" | "ai-memory" | "repo-yaml";

const INPUT: Record<Dialect, { event: string | undefined; body: Record<string, unknown> }> = {
  gemini: { event: "BeforeTool", body: { session_id: "s1", transcript_path: "/t", cwd: "/w", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "rm -rf /" } } },
  llxprt: { event: "BeforeTool", body: { session_id: "s1", transcript_path: "/t", cwd: "/w", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "rm -rf /" } } },
  claude: { event: "PreToolUse", body: { session_id: "s1", transcript_path: "/t", cwd: "/w", permission_mode: "default", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "rm -rf /" }, tool_use_id: "t1" } },
  "ai-memory": { event: undefined, body: { event: "pre_store", payload: { namespace: "n", content: "my password is hunter2" } } },
  "repo-yaml": { event: "PreAbilityCall", body: { event_type: "PreAbilityCall", ability_id: "fs.write", session_id: "s1" } },
};
const PROFILE: Record<Dialect, string> = { gemini: "gemini-cli", llxprt: "llxprt", claude: "claude-code", "ai-memory": "ai-memory", "repo-yaml": "repo-yaml" };

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
const dirs: string[] = [];

beforeAll(async () => {
  target = await startStandIn((profile, event) => {
    if (failure) return failure;
    const d = DIALECTS.find((x) => PROFILE[x] === profile)!;
    return { body: { ...ANSWERS[d][verdict]!, result: { event, outcomes: {} } } };
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
    beforeAll(async () => {
      down = { url: await refusedUrl(), token: "t" };
    });
    test("warn (default): exit 1 and one stderr line", async () => {
      const r = await hook(down, args(d), stdin(d));
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

  test("5xx: warn names the status and the server's message", async () => {
    failure = { status: 503, body: { error: { code: "SANDBOX_OVERLOADED", message: "the sandbox queue is full" } } };
    const r = await hook(target, args("gemini"), stdin("gemini"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("answered 503: SANDBOX_OVERLOADED: the sandbox queue is full");
    const b = await hook(target, args("claude", ["--on-error", "block"]), stdin("claude"));
    expect(b.code).toBe(2);
    expect(b.stderr).toContain("vcp-hooks unavailable:");
  });

  test("4xx is an adapter error too: a wrong token, with the server's message on stderr", async () => {
    failure = undefined;
    const r = await hook(target, args("llxprt"), stdin("llxprt"), { VCP_CLIENT_TOKEN: "wrong" });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("answered 401: UNAUTHENTICATED");
    const b = await hook(target, args("ai-memory", ["--on-error", "block"]), stdin("ai-memory"), { VCP_CLIENT_TOKEN: "wrong" });
    expect(JSON.parse(b.stdout)).toMatchObject({ action: "deny", code: 503 });
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
    const r = await hook(target, args("claude"), stdin("claude"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("not JSON");
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
    const r = await hook(target, args(d), text);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(message);
    expect(target.requests.length).toBe(requests);
    const b = await hook(target, args(d, ["--on-error", "block"]), text);
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
    const r = await hook(target, args("gemini"), stdin("gemini"));
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
    // A bad line gets a line too (warn: an action ai-memory does not know ⇒ its own fail_mode).
    expect(JSON.parse(lines[4]!)).toMatchObject({ action: "error" });
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
