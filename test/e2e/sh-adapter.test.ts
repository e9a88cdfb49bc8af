// The POSIX sh adapter (`vcp-hooks hook --print-sh`, issue 26 item 5) against a REAL server running the
// example policies policies/{gemini,claude}-safe-shell (their tool guards are fail_closed), the cases of
// adapter-fail-closed.test.ts: the policy's answer, a refusal (401, a body over the limit, __proto__)
// on the guarded event, servers that cannot answer, the server stopped. Each case runs the Node
// adapter too: the sh adapter must answer the agent the same (stdout, exit code and stderr).
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer as createTcpServer, type AddressInfo, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { signArtifact } from "../../src/bundle/artifact.js";
import { buildBundle } from "../../src/bundle/build.js";
import { readGuard } from "../../src/cli/hook-guard.js";
import type { VcpArtifact } from "../../src/index.js";
import { hook, MAIN, runProcess, type Run } from "../cli/hook/stand-in.js";
import { keys, op, startHarness, TOKENS, type Harness } from "./helpers.js";

type Agent = "gemini" | "claude";
const PROFILE: Record<Agent, string> = { gemini: "gemini-cli", claude: "claude-code" };
const GUARDED: Record<Agent, string> = { gemini: "BeforeTool", claude: "PreToolUse" };
const UNGUARDED: Record<Agent, string> = { gemini: "AfterTool", claude: "PostToolUse" };

function input(agent: Agent, event: string, toolInput: Record<string, unknown>): string {
  const base = { session_id: `sh-${agent}`, transcript_path: "/home/dev/.t/session.jsonl", cwd: "/home/dev/app", hook_event_name: event };
  if (agent === "claude") {
    return JSON.stringify({ ...base, permission_mode: "default", tool_name: "Bash", tool_input: toolInput, tool_use_id: "toolu_01", ...(event === "PostToolUse" ? { tool_response: { stdout: "", stderr: "" } } : {}) });
  }
  return JSON.stringify({ ...base, timestamp: "2026-11-26T04:30:00Z", tool_name: "run_shell_command", tool_input: toolInput, ...(event === "AfterTool" ? { tool_response: { llmContent: "" } } : {}) });
}
const rmHome = { command: "rm -rf ~" };
const huge = { command: "rm -rf ~", description: "x".repeat(1_100_000) };

let h: Harness | undefined;
let url = "";
let script = "";
const dirs: string[] = [];
const scratch = () => {
  const d = mkdtempSync(join(tmpdir(), "vcp-sh-e2e-"));
  dirs.push(d);
  return d;
};

/** Both adapters, each from its own copy of `cache`; `r.sh` is asserted to answer as `r.node` does. */
async function both(server: string, agent: Agent, event: string, stdin: string, cache: string, extra: string[] = [], token = TOKENS.client, parity = true): Promise<Run> {
  const copy = () => {
    const d = scratch();
    cpSync(cache, d, { recursive: true });
    return d;
  };
  const args = [event, "--dialect", agent, "--timeout-ms", "30000", ...extra];
  const node = await hook({ url: server, token }, args, stdin, { XDG_CACHE_HOME: copy() });
  const sh = await runProcess("/bin/sh", [script, ...args, "--server", server], stdin, { VCP_CLIENT_TOKEN: token, XDG_CACHE_HOME: copy() });
  // The same JSON value on stdout (the route's native form may order keys unlike the envelope's), one line each.
  const json = (out: string) => (out === "" ? "" : (JSON.parse(out) as unknown));
  if (parity) {
    expect({ code: sh.code, stdout: json(sh.stdout), stderr: sh.stderr }).toEqual({ code: node.code, stdout: json(node.stdout), stderr: node.stderr });
    expect(sh.stdout.split("\n").length).toBe(node.stdout.split("\n").length);
  }
  else expect(sh.code).toBe(node.code);
  return sh;
}
const blocked = (r: Run, naming: RegExp) => {
  if (r.code === 2) expect(r.stderr).toMatch(naming);
  else {
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/"(?:decision|permissionDecision)":"(?:deny|block)"/);
    expect(r.stdout).toMatch(naming);
  }
};

beforeAll(async () => {
  const printed = await runProcess(process.execPath, [MAIN, "hook", "--print-sh"], "");
  script = join(scratch(), "vcp-hook.sh");
  writeFileSync(script, printed.stdout);
  chmodSync(script, 0o755);
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

describe.each(["gemini", "claude"] as const)("%s, the sh adapter against the real server", (agent) => {
  test("the policy answers: rm -rf ~ is blocked, the answer's guard is kept for the next failure", async () => {
    const cache = scratch();
    const r = await runProcess("/bin/sh", [script, GUARDED[agent], "--dialect", agent, "--server", url], input(agent, GUARDED[agent], rmHome), { VCP_CLIENT_TOKEN: TOKENS.client, XDG_CACHE_HOME: cache });
    expect(r.code, r.stderr).toBe(0);
    blocked(r, /rm -rf/);
    expect(readGuard(new URL(url).href, PROFILE[agent], { XDG_CACHE_HOME: cache })?.failClosedEvents).toContain(GUARDED[agent]);
    await both(url, agent, GUARDED[agent], input(agent, GUARDED[agent], rmHome), scratch());
    await both(url, agent, UNGUARDED[agent], input(agent, UNGUARDED[agent], { command: "ls" }), scratch());
  }, 60_000);

  test("refusals on the guarded event are blocks: a wrong token (401), a body over the limit (413), __proto__", async () => {
    blocked(await both(url, agent, GUARDED[agent], input(agent, GUARDED[agent], rmHome), scratch(), [], "wrong-token-0123456789abcdef"), /401 UNAUTHENTICATED/);
    // A server that refuses the body early may reset the connection while curl still sends it: the sh
    // adapter then asks again without the body and takes only a block (docs/sh-adapter.md), so the
    // reason may name the second refusal instead; blocked either way.
    for (let i = 0; i < 3; i++) blocked(await both(url, agent, GUARDED[agent], input(agent, GUARDED[agent], huge), scratch(), [], TOKENS.client, false), /PAYLOAD_TOO_LARGE|refused this/);
    // The server's refusal of a guarded event is its block, whatever --on-error says of failures.
    for (let i = 0; i < 3; i++) blocked(await both(url, agent, GUARDED[agent], input(agent, GUARDED[agent], huge), scratch(), ["--on-error", "allow"], TOKENS.client, false), /PAYLOAD_TOO_LARGE|refused this/);
    const poisoned = input(agent, GUARDED[agent], rmHome).replace('"tool_input":{', '"tool_input":{"__proto__":{"x":1},');
    blocked(await both(url, agent, GUARDED[agent], poisoned, scratch()), /400|refused|__proto__/i);
    // Bad stdin: the Node adapter refuses it itself, the sh adapter lets the server say so; both block the tool event.
    for (const bad of ["", "{not json"]) {
      const r = await runProcess("/bin/sh", [script, GUARDED[agent], "--dialect", agent, "--server", url], bad, { VCP_CLIENT_TOKEN: TOKENS.client, XDG_CACHE_HOME: scratch() });
      blocked(r, /refused|not JSON|empty|400/i);
    }
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
    garbage = await listen((s) => s.once("data", () => s.end("SSH-2.0-OpenSSH_9.6\r\n")));
  });
  afterAll(() => {
    for (const s of sockets) s.destroy();
    silent.server.close();
    garbage.server.close();
  });

  test.each(["gemini", "claude"] as const)("%s: a server that never answers, one that is not HTTP: the guarded event blocks, the unguarded warns", async (agent) => {
    for (const [server, extra] of [[silent.url, ["--timeout-ms", "500"]], [garbage.url, []]] as const) {
      expect((await both(server, agent, GUARDED[agent], input(agent, GUARDED[agent], rmHome), scratch(), [...extra])).code).toBe(2);
      expect((await both(server, agent, UNGUARDED[agent], input(agent, UNGUARDED[agent], rmHome), scratch(), [...extra])).code).toBe(1);
    }
  }, 60_000);
});

describe("the real server stopped", () => {
  let cache = "";
  beforeAll(async () => {
    cache = scratch();
    for (const agent of ["gemini", "claude"] as const) {
      const r = await runProcess("/bin/sh", [script, GUARDED[agent], "--dialect", agent, "--server", url], input(agent, GUARDED[agent], rmHome), { VCP_CLIENT_TOKEN: TOKENS.client, XDG_CACHE_HOME: cache });
      expect(r.code).toBe(0);
    }
    await h?.close();
    h = undefined;
  }, 60_000);

  test.each(["gemini", "claude"] as const)("%s: with the guard the sh adapter kept, the guarded event blocks and the unguarded warns", async (agent) => {
    const known = await both(url, agent, GUARDED[agent], input(agent, GUARDED[agent], rmHome), cache);
    expect(known.code).toBe(2);
    expect(known.stderr).toMatch(/unreachable: ECONNREFUSED \(on-error=auto: \w+ is guarded by a fail_closed hook in the last plan seen from this server\)/);
    const post = await both(url, agent, UNGUARDED[agent], input(agent, UNGUARDED[agent], rmHome), cache);
    expect(post.code).toBe(1);
    expect(readFileSync(script, "utf8")).toContain("guard-");
  }, 60_000);
});
