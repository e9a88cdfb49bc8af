// Issue 24: the adapter fails closed where the policy does. The real adapter (dist/, spawned as an agent
// spawns it) against a REAL server running the README's example policies policies/gemini-safe-shell and
// policies/claude-safe-shell (whose BeforeTool / PreToolUse guards are fail_closed), with the agents'
// real request shapes; then against a port nothing listens on, a server that never answers and one that
// answers garbage. Each failure, with and without the adapter's guard file: the guarded tool event is
// blocked, an unguarded event warns.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { signArtifact } from "../../src/bundle/artifact.js";
import { buildBundle } from "../../src/bundle/build.js";
import { guardPath, readGuard, writeGuard } from "../../src/cli/hook-guard.js";
import type { VcpArtifact } from "../../src/index.js";
import { hook, refusedUrl, type Run } from "../cli/hook/stand-in.js";
import { keys, op, startHarness, TOKENS, type Harness } from "./helpers.js";

type Agent = "gemini" | "claude";
const PROFILE: Record<Agent, string> = { gemini: "gemini-cli", claude: "claude-code" };
/** The guarded tool event and an event the example policies do not guard, per agent. */
const GUARDED: Record<Agent, string> = { gemini: "BeforeTool", claude: "PreToolUse" };
const UNGUARDED: Record<Agent, string> = { gemini: "AfterTool", claude: "PostToolUse" };

/** The agents' own hook input (what Gemini CLI and Claude Code write on the hook's stdin). */
function input(agent: Agent, event: string, toolInput: Record<string, unknown>): string {
  const base = { session_id: `fail-closed-${agent}`, transcript_path: "/home/dev/.t/session.jsonl", cwd: "/home/dev/app", hook_event_name: event };
  if (agent === "claude") {
    return JSON.stringify({ ...base, permission_mode: "default", tool_name: "Bash", tool_input: toolInput, tool_use_id: "toolu_01", ...(event === "PostToolUse" ? { tool_response: { stdout: "", stderr: "" } } : {}) });
  }
  return JSON.stringify({ ...base, timestamp: "2026-11-26T04:30:00Z", tool_name: "run_shell_command", tool_input: toolInput, ...(event === "AfterTool" ? { tool_response: { llmContent: "" } } : {}) });
}
const rmHome = { command: "rm -rf ~" };
/** Over the harness's 64 KiB body limit: the tool call a 1.1 MB description makes. */
const huge = { command: "rm -rf ~", description: "x".repeat(1_100_000) };

/**
 * Blocked, in whichever form: the adapter's own refusal (exit 2, reason on stderr) when the server
 * could not answer, or the profile's blocking answer when the server refused the event as a block
 * (servers with the guard contract answer a refused guarded event with 200 and the block).
 */
function expectBlocked(agent: Agent, r: Run, naming?: RegExp): void {
  if (r.code === 2) {
    expect(r.stdout).toBe("");
    if (naming) expect(r.stderr).toMatch(naming);
    return;
  }
  expect(r.code, `stdout: ${r.stdout} stderr: ${r.stderr}`).toBe(0);
  const native = JSON.parse(r.stdout) as { decision?: string; hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string }; reason?: string };
  if (agent === "claude") expect(native.hookSpecificOutput?.permissionDecision).toBe("deny");
  else expect(native.decision === "block" || native.decision === "deny").toBe(true);
  if (naming) expect(`${native.reason ?? ""} ${native.hookSpecificOutput?.permissionDecisionReason ?? ""}`).toMatch(naming);
}

/** The agent's non-blocking error: exit 1, one stderr line, nothing on stdout. */
function expectWarned(r: Run, naming?: RegExp): void {
  expect([r.code, r.stdout], r.stderr).toEqual([1, ""]);
  expect(r.stderr.trim().split("\n")).toHaveLength(1);
  if (naming) expect(r.stderr).toMatch(naming);
}

let h: Harness | undefined;
let url = "";
const dirs: string[] = [];
const cacheDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "vcp-fail-closed-"));
  dirs.push(dir);
  return dir;
};
/** The guard file a server with the guard contract would leave: the example policies guard only the tool event. */
const seed = (cache: string, server: string, agent: Agent, events = [GUARDED[agent]]) =>
  writeGuard(new URL(server).href, PROFILE[agent], { revisions: "0".repeat(64), failClosedEvents: events }, { XDG_CACHE_HOME: cache });

const adapter = (server: string, agent: Agent, event: string, stdin: string, cache: string, extra: string[] = [], token = TOKENS.client): Promise<Run> =>
  hook({ url: server, token }, [event, "--dialect", agent, "--timeout-ms", "30000", ...extra], stdin, { XDG_CACHE_HOME: cache });

beforeAll(async () => {
  h = await startHarness();
  url = h.url;
  for (const agent of ["gemini", "claude"] as const) {
    const { artifact } = await buildBundle(resolve("policies", `${agent}-safe-shell`));
    const put = await op(h, "PUT", `/v1/bundles/${agent}-safe-shell`, signArtifact(artifact, keys.ops.privateKeyPem, "ops") as VcpArtifact);
    expect(put.status, JSON.stringify(put.body)).toBe(201);
  }
}, 180_000);
afterAll(async () => {
  await h?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each(["gemini", "claude"] as const)("%s against the real server", (agent) => {
  test("the policy answers: rm -rf ~ is blocked, and the answer's guard facts (if the server sends them) are kept", async () => {
    const cache = cacheDir();
    const r = await adapter(url, agent, GUARDED[agent], input(agent, GUARDED[agent], rmHome), cache);
    expectBlocked(agent, r, /rm -rf/);
    expect(r.code).toBe(0);
    // The server's own envelope says whether it speaks the guard contract; the adapter keeps exactly that.
    const envelope = (await fetch(`${url}/v1/profiles/${PROFILE[agent]}/events/${GUARDED[agent]}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKENS.client}`, "content-type": "application/json" },
      body: input(agent, GUARDED[agent], rmHome),
    }).then((res) => res.json())) as { guard?: { fail_closed_events: string[] } };
    const kept = readGuard(new URL(url).href, PROFILE[agent], { XDG_CACHE_HOME: cache });
    if (envelope.guard === undefined) expect(kept).toBeUndefined();
    else {
      expect(kept?.failClosedEvents).toEqual([...envelope.guard.fail_closed_events].sort());
      expect(kept?.failClosedEvents).toContain(GUARDED[agent]);
    }
  }, 60_000);

  test("401 (a wrong token, as when the agent strips the environment): blocked on the guarded event, with and without a guard file", async () => {
    const bare = await adapter(url, agent, GUARDED[agent], input(agent, GUARDED[agent], rmHome), cacheDir(), [], "wrong-token-0123456789abcdef");
    expectBlocked(agent, bare, /refused the event: 401 UNAUTHENTICATED/);
    expect(bare.code).toBe(2);
    const cache = cacheDir();
    seed(cache, url, agent);
    const known = await adapter(url, agent, GUARDED[agent], input(agent, GUARDED[agent], rmHome), cache, [], "wrong-token-0123456789abcdef");
    expectBlocked(agent, known, /401 UNAUTHENTICATED.*on-error=auto: \w+ is guarded by a fail_closed hook/);
    // The unguarded event warns (the policy fails open there).
    const post = await adapter(url, agent, UNGUARDED[agent], input(agent, UNGUARDED[agent], rmHome), cache, [], "wrong-token-0123456789abcdef");
    expectWarned(post, /401 UNAUTHENTICATED/);
  }, 60_000);

  test("a body over the server's limit (the 1.1 MB description): blocked on the guarded event, never 'unreachable: EPIPE'", async () => {
    for (const cache of [cacheDir(), (() => {
      const c = cacheDir();
      seed(c, url, agent);
      return c;
    })()]) {
      const r = await adapter(url, agent, GUARDED[agent], input(agent, GUARDED[agent], huge), cache);
      expectBlocked(agent, r, /413|PAYLOAD_TOO_LARGE|BODY_TOO_LARGE|too large/i);
      expect(r.stderr).not.toMatch(/EPIPE|ECONNRESET/);
      const post = await adapter(url, agent, UNGUARDED[agent], input(agent, UNGUARDED[agent], huge), cache);
      expectWarned(post, /refused the event: 413/);
    }
  }, 60_000);

  test("a refused key in tool_input (__proto__): blocked on the guarded event", async () => {
    const poisoned = input(agent, GUARDED[agent], rmHome).replace('"tool_input":{', '"tool_input":{"__proto__":{"x":1},');
    const r = await adapter(url, agent, GUARDED[agent], poisoned, cacheDir());
    expectBlocked(agent, r, /400|refused|__proto__/i);
  }, 60_000);
});

describe("servers that cannot answer", () => {
  const sockets = new Set<Socket>();
  const listen = async (onConnection: (s: Socket) => void): Promise<{ server: Server; url: string }> => {
    const server = createTcpServer((s) => {
      sockets.add(s);
      s.on("error", () => undefined);
      onConnection(s);
    });
    await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  };
  let silent: { server: Server; url: string };
  let garbage: { server: Server; url: string };
  beforeAll(async () => {
    silent = await listen(() => undefined);
    // An answer that is not HTTP at all (a proxy, another service on the port).
    garbage = await listen((s) => s.once("data", () => s.end("SSH-2.0-OpenSSH_9.6\r\n")));
  });
  afterAll(() => {
    for (const s of sockets) s.destroy();
    silent.server.close();
    garbage.server.close();
  });

  describe.each(["gemini", "claude"] as const)("%s", (agent) => {
    test.each([
      ["timeout (a server that never answers)", () => silent.url, ["--timeout-ms", "500"], /no answer from .* within 500 ms/],
      ["garbage (not HTTP)", () => garbage.url, [], /did not answer HTTP/],
    ] as const)("%s: the guarded event is blocked with and without a guard file; an unguarded one warns", async (_name, server, extra, naming) => {
      const stdin = input(agent, GUARDED[agent], rmHome);
      const bare = await adapter(server(), agent, GUARDED[agent], stdin, cacheDir(), [...extra]);
      expectBlocked(agent, bare, naming);
      expect(bare.code).toBe(2);
      const cache = cacheDir();
      seed(cache, server(), agent);
      expectBlocked(agent, await adapter(server(), agent, GUARDED[agent], stdin, cache, [...extra]), naming);
      expectWarned(await adapter(server(), agent, UNGUARDED[agent], input(agent, UNGUARDED[agent], rmHome), cache, [...extra]), naming);
      // A plan that does not guard the tool event: its failure warns, as the policy fails open.
      const open = cacheDir();
      seed(open, server(), agent, []);
      expectWarned(await adapter(server(), agent, GUARDED[agent], stdin, open, [...extra]), naming);
    }, 60_000);
  });
});

// Last: the real server stops; its URL is now a closed port.
describe("the real server stopped (its port closed)", () => {
  let cache: string;
  beforeAll(async () => {
    cache = cacheDir();
    // What the running server taught this cache: a real answer (and, from a server that sends no guard
    // facts yet, the file such a server would write).
    for (const agent of ["gemini", "claude"] as const) {
      expect((await adapter(url, agent, GUARDED[agent], input(agent, GUARDED[agent], rmHome), cache)).code).toBe(0);
      if (readGuard(new URL(url).href, PROFILE[agent], { XDG_CACHE_HOME: cache }) === undefined) seed(cache, url, agent);
    }
    await h?.close();
    h = undefined;
  }, 60_000);

  test.each(["gemini", "claude"] as const)("%s: rm -rf ~ is blocked with and without the guard file; the unguarded event warns", async (agent) => {
    const stdin = input(agent, GUARDED[agent], rmHome);
    const known = await adapter(url, agent, GUARDED[agent], stdin, cache);
    expectBlocked(agent, known, /unreachable: ECONNREFUSED \(on-error=auto: \w+ is guarded by a fail_closed hook in the last plan seen from this server\)/);
    expect(known.code).toBe(2);
    const bare = await adapter(url, agent, GUARDED[agent], stdin, cacheDir());
    expectBlocked(agent, bare, /unreachable: ECONNREFUSED \(on-error=auto: \w+ runs before a tool and no plan of this server is known yet\)/);
    expectWarned(await adapter(url, agent, UNGUARDED[agent], input(agent, UNGUARDED[agent], rmHome), cache), /ECONNREFUSED/);
    expect(guardPath(new URL(url).href, PROFILE[agent], { XDG_CACHE_HOME: cache })).toContain(join(cache, "vcp-hooks"));
  }, 60_000);

  test("a port nothing ever listened on: the same", async () => {
    const closed = await refusedUrl();
    expectBlocked("gemini", await adapter(closed, "gemini", "BeforeTool", input("gemini", "BeforeTool", rmHome), cacheDir()), /ECONNREFUSED/);
    expectWarned(await adapter(closed, "claude", "PostToolUse", input("claude", "PostToolUse", rmHome), cacheDir()), /ECONNREFUSED/);
  }, 60_000);
});
