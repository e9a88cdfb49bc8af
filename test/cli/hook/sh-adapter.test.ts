// `vcp-hooks hook --print-sh` (issue 26 item 5): the POSIX sh adapter, run by /bin/sh (dash) as an agent
// runs a command hook, against the same stand-in as the Node adapter's tests. Where the two adapters
// meet the same case, the test runs both and asserts the same stdout, stderr and exit code; the guard
// file (issue 24) is shared between them.
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { guardPath, readGuard } from "../../../src/cli/hook-guard.js";
import { decodeHookEnv } from "../../../src/tooling/hook-env.js";
import { hook, MAIN, refusedUrl, runProcess, startStandIn, type AdapterTarget, type RouteReply, type Run } from "./stand-in.js";

type Dialect = "gemini" | "llxprt" | "claude" | "repo-yaml";
const DIALECTS: Dialect[] = ["gemini", "llxprt", "claude", "repo-yaml"];
const PROFILE: Record<Dialect, string> = { gemini: "gemini-cli", llxprt: "llxprt", claude: "claude-code", "repo-yaml": "repo-yaml" };
const EVENT: Record<Dialect, string> = { gemini: "BeforeTool", llxprt: "BeforeTool", claude: "PreToolUse", "repo-yaml": "PreAbilityCall" };
const BODY: Record<Dialect, Record<string, unknown>> = {
  gemini: { session_id: "s1", transcript_path: "/t", cwd: "/w", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "rm -rf /" } },
  llxprt: { session_id: "s1", transcript_path: "/t", cwd: "/w", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "rm -rf /" } },
  claude: { session_id: "s1", transcript_path: "/t", cwd: "/w", permission_mode: "default", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "rm -rf /" }, tool_use_id: "t1" },
  "repo-yaml": { event_type: "PreAbilityCall", ability_id: "fs.write", session_id: "s1" },
};
const ANSWERS: Record<Dialect, Record<string, { native: Record<string, unknown>; exit_code: number; stderr?: string }>> = {
  gemini: {
    allow: { native: {}, exit_code: 0 },
    deny: { native: { decision: "deny", reason: "rm -rf is not allowed" }, exit_code: 0 },
    refused: { native: { decision: "deny", reason: "vcp-hooks refused this event" }, exit_code: 2, stderr: "vcp-hooks refused this event:\n\tcode Ü (INVALID_INPUT)" },
  },
  llxprt: {
    allow: { native: {}, exit_code: 0 },
    deny: { native: { decision: "block", reason: "rm -rf is not allowed" }, exit_code: 0 },
    refused: { native: { decision: "block", reason: "refused" }, exit_code: 2, stderr: "refused" },
  },
  claude: {
    allow: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "allow" } }, exit_code: 0 },
    deny: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "no rm -rf \u2028 \"quoted\" \\ 100%" } }, exit_code: 0 },
    refused: { native: { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: "refused" } }, exit_code: 2, stderr: "refused: 50% \\ done" },
  },
  "repo-yaml": {
    allow: { native: { logs: [], messages_to_user: [] }, exit_code: 0 },
    deny: { native: { error: "blocked_by_policy", messages_to_user: ["writes are frozen"] }, exit_code: 2 },
    refused: { native: { error: "blocked_by_policy", logs: [{ level: "error", message: "refused" }] }, exit_code: 2, stderr: "refused" },
  },
};

let target: AdapterTarget;
let verdict = "allow";
let failure: RouteReply | undefined;
let guard: unknown;
let script = "";
const dirs: string[] = [];
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), "vcp-sh-"));
  dirs.push(d);
  return d;
};

/** The sh adapter run by /bin/sh as an agent runs a hook (same environment handling as `hook`). */
function sh(t: { url: string; token: string }, args: string[], input: string | null, env: Record<string, string | undefined> = {}): Promise<Run> {
  return runProcess("/bin/sh", [script, ...args, "--server", t.url], input, { VCP_CLIENT_TOKEN: t.token, ...env });
}
const args = (d: Dialect, extra: string[] = []) => [EVENT[d], "--dialect", d, ...extra];
const stdin = (d: Dialect) => JSON.stringify(BODY[d]);
const outcome = (r: Run) => ({ code: r.code, stdout: r.stdout, stderr: r.stderr });

/** Both adapters on one case, each with a fresh copy of `cache` (the guard file they start from). */
async function both(t: { url: string; token: string }, a: string[], input: string | null, env: Record<string, string | undefined> = {}, cache?: string): Promise<{ node: Run; sh: Run }> {
  const copy = (): string => {
    const d = freshDir();
    if (cache !== undefined) cpSync(cache, d, { recursive: true });
    return d;
  };
  const node = await hook(t, a, input, { XDG_CACHE_HOME: copy(), ...env });
  const shell = await sh(t, a, input, { XDG_CACHE_HOME: copy(), ...env });
  return { node, sh: shell };
}

beforeAll(async () => {
  const dir = freshDir();
  const printed = await runProcess(process.execPath, [MAIN, "hook", "--print-sh"], "");
  expect(printed.code, printed.stderr).toBe(0);
  script = join(dir, "vcp-hook.sh");
  writeFileSync(script, printed.stdout);
  chmodSync(script, 0o755);
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

describe("--print-sh", () => {
  test("a POSIX sh script that names its version and needs no bash", () => {
    const text = readFileSync(script, "utf8");
    expect(text.startsWith("#!/bin/sh\n")).toBe(true);
    expect(text).toMatch(/written by 'vcp-hooks hook --print-sh' \(vcp-hooks \d+\.\d+\.\d+\)/);
    // No bashisms: [[ ]], function, $'…', here-strings, local.
    expect(text).not.toMatch(/\[\[ |\bfunction\b|\$'|<<<|\blocal\b/);
  });
});

describe.each(DIALECTS)("--dialect %s: the same answer as the Node adapter", (d) => {
  test.each(["allow", "deny", "refused"])("%s: same stdout, stderr and exit code; the same request", async (v) => {
    verdict = v;
    failure = undefined;
    const before = target.requests.length;
    const r = await both(target, args(d), stdin(d));
    expect(outcome(r.sh)).toEqual(outcome(r.node));
    expect(r.sh.stdout.trim().split("\n")).toHaveLength(1);
    const [viaNode, viaSh] = target.requests.slice(before);
    expect(viaSh!.path).toBe(`/v1/profiles/${PROFILE[d]}/events/${EVENT[d]}?answer=native`);
    expect(viaSh!.authorization).toBe(viaNode!.authorization);
    expect(JSON.parse(viaSh!.body)).toEqual(JSON.parse(viaNode!.body));
  });
});

describe("--on-error: the same rules and messages as the Node adapter", () => {
  describe.each(DIALECTS)("server down, --dialect %s", (d) => {
    test.each(["auto", "warn", "block", "allow"])("%s", async (mode) => {
      const down = { url: await refusedUrl(), token: "t" };
      const r = await both(down, args(d, mode === "auto" ? [] : ["--on-error", mode]), stdin(d));
      expect(outcome(r.sh)).toEqual(outcome(r.node));
      expect(r.sh.code).toBe(mode === "allow" ? 0 : mode === "warn" ? 1 : 2);
      if (mode !== "allow") expect(r.sh.stderr).toContain("unreachable: ECONNREFUSED");
    });
  });

  test("auto: a non-tool event warns; an unknown dialect's failure warns", async () => {
    const down = { url: await refusedUrl(), token: "t" };
    const post = await both(down, ["UserPromptSubmit", "--dialect", "claude"], "{}");
    expect(outcome(post.sh)).toEqual(outcome(post.node));
    expect(post.sh.code).toBe(1);
    const bad = await both(down, ["BeforeTool", "--dialect", "gemni"], "{}");
    expect(bad.sh.code).toBe(1);
    expect(bad.sh.stderr).toMatch(/^vcp-hooks hook: bad arguments: --dialect must be one of gemini\|llxprt\|claude\|codex\|vscode\|cursor\|openhands\|goose\|repo-yaml, not 'gemni'; see 'vcp-hook.sh --help' \(on-error=auto: the event is unknown\)\n$/);
  });

  test("5xx and 4xx: the status and the server's code and message, as the Node adapter says them", async () => {
    failure = { status: 503, body: { error: { code: "SANDBOX_OVERLOADED", message: "the sandbox queue is full" } } };
    for (const a of [args("gemini", ["--on-error", "warn"]), args("claude", ["--on-error", "block"]), args("repo-yaml", ["--on-error", "block"])]) {
      const r = await both(target, a, stdin("gemini"));
      expect(outcome(r.sh)).toEqual(outcome(r.node));
    }
    failure = undefined;
    const wrong = await both(target, args("llxprt", ["--on-error", "warn"]), stdin("llxprt"), { VCP_CLIENT_TOKEN: "wrong" });
    expect(outcome(wrong.sh)).toEqual(outcome(wrong.node));
    expect(wrong.sh.stderr).toContain("refused the event: 401 UNAUTHENTICATED: no or unknown bearer");
    const none = await both(target, args("gemini", ["--on-error", "warn"]), stdin("gemini"), { VCP_CLIENT_TOKEN: undefined });
    expect(outcome(none.sh)).toEqual(outcome(none.node));
    expect(none.sh.stderr).toContain("(no token was sent: set VCP_CLIENT_TOKEN, or pass --token-file)");
    // A token in a server's message is redacted by both.
    failure = { status: 500, body: { error: { code: "INTERNAL", message: "upstream said Authorization: Bearer abcdefghijk.lmnop== and bearer x/y+z" } } };
    const leak = await both(target, args("gemini", ["--on-error", "warn"]), stdin("gemini"));
    expect(outcome(leak.sh)).toEqual(outcome(leak.node));
    expect(leak.sh.stderr).toContain("Authorization: Bearer [REDACTED] and bearer [REDACTED] (on-error=warn)");
    failure = undefined;
  });

  test("a slow server and a stdin never closed: the --on-error answer by --timeout-ms, never a hang", async () => {
    failure = { delayMs: 30_000, body: {} };
    const slow = await both(target, args("gemini", ["--timeout-ms", "300", "--on-error", "block"]), stdin("gemini"));
    expect(outcome(slow.sh)).toEqual(outcome(slow.node));
    expect(slow.sh.stderr).toMatch(/within 300 ms/);
    expect(slow.sh.ms).toBeLessThan(20_000);
    failure = undefined;
    const open = await sh(target, args("claude", ["--timeout-ms", "300"]), null, { XDG_CACHE_HOME: freshDir() });
    expect([open.code, open.stdout]).toEqual([2, ""]);
    expect(open.stderr).toMatch(/within 300 ms \(on-error=auto: PreToolUse runs before a tool/);
    expect(open.ms).toBeLessThan(20_000);
  });

  test("a 200 that is not the route's answer is an error, not an answer", async () => {
    failure = { body: "<html>proxy</html>" };
    const r = await sh(target, args("claude", ["--on-error", "warn"]), stdin("claude"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("answered 200 without { native, exit_code }: is --server a vcp-hooks server with profiles?");
    const auto = await sh(target, args("claude"), stdin("claude"), { XDG_CACHE_HOME: freshDir() });
    expect([auto.code, auto.stdout]).toEqual([2, ""]);
    failure = undefined;
  });
});

describe("the guard file, shared with the Node adapter", () => {
  test("an answer's guard is stored where and as the Node adapter stores it (0600), and the next failure follows it", async () => {
    verdict = "allow";
    failure = undefined;
    guard = { revisions: "ab".repeat(32), fail_closed_events: ["BeforeTool"] };
    const cache = freshDir();
    const r = await sh(target, args("gemini"), stdin("gemini"), { XDG_CACHE_HOME: cache });
    expect(r.code).toBe(0);
    const file = guardPath(`${target.url}/`, "gemini-cli", { XDG_CACHE_HOME: cache });
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, "utf8").endsWith("\n")).toBe(true);
    expect((await import("node:fs")).statSync(file).mode & 0o777).toBe(0o600);
    // The Node adapter's reader takes it as its own.
    expect(readGuard(`${target.url}/`, "gemini-cli", { XDG_CACHE_HOME: cache })).toEqual({ revisions: "ab".repeat(32), failClosedEvents: ["BeforeTool"] });
    guard = undefined;

    // The server goes away: the guarded event blocks (the plan guards it), another tool-less event warns.
    failure = { status: 503, body: { error: { code: "DRAINING", message: "shutting down" } } };
    const blocked = await both(target, args("gemini"), stdin("gemini"), {}, cache);
    expect(outcome(blocked.sh)).toEqual(outcome(blocked.node));
    expect(blocked.sh.code).toBe(2);
    expect(blocked.sh.stderr).toContain("(on-error=auto: BeforeTool is guarded by a fail_closed hook in the last plan seen from this server)");
    const other = await both(target, ["AfterTool", "--dialect", "gemini"], stdin("gemini"), {}, cache);
    expect(outcome(other.sh)).toEqual(outcome(other.node));
    expect(other.sh.stderr).toContain("no fail_closed hook guards AfterTool in the last plan seen from this server");
    failure = undefined;
  });

  test("a file written by the Node adapter is read by the sh adapter (a plan without a fail_closed guard: warn)", async () => {
    guard = { revisions: "cd".repeat(32), fail_closed_events: [] };
    const cache = freshDir();
    expect((await hook(target, args("claude"), stdin("claude"), { XDG_CACHE_HOME: cache })).code).toBe(0);
    guard = undefined;
    failure = { status: 500, body: {} };
    const r = await sh(target, args("claude"), stdin("claude"), { XDG_CACHE_HOME: cache });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("(on-error=auto: no fail_closed hook guards PreToolUse in the last plan seen from this server)");
    failure = undefined;
  });
});

describe("token and hook environment, as the Node adapter sends them", () => {
  test("--token-file and VCP_TOKEN_FILE; a file that cannot be read fails naming it", async () => {
    verdict = "allow";
    const dir = freshDir();
    const file = join(dir, "token");
    writeFileSync(file, `\n  ${target.token}  \n\n`);
    const viaFlag = await both(target, args("claude", ["--token-file", file]), stdin("claude"), { VCP_CLIENT_TOKEN: undefined });
    expect(outcome(viaFlag.sh)).toEqual(outcome(viaFlag.node));
    expect(viaFlag.sh.code).toBe(0);
    expect(target.requests.at(-1)!.authorization).toBe(`Bearer ${target.token}`);
    const viaEnv = await sh(target, args("claude"), stdin("claude"), { VCP_CLIENT_TOKEN: undefined, VCP_TOKEN_FILE: file });
    expect(viaEnv.code).toBe(0);
    const missing = await both(target, args("claude", ["--token-file", join(dir, "nope"), "--on-error", "warn"]), stdin("claude"));
    expect(outcome(missing.sh)).toEqual(outcome(missing.node));
    writeFileSync(file, "two words\n");
    const spaced = await both(target, args("claude", ["--token-file", file, "--on-error", "warn"]), stdin("claude"));
    expect(outcome(spaced.sh)).toEqual(outcome(spaced.node));
    // The token never appears on curl's command line (other users can read /proc/<pid>/cmdline).
    expect(readFileSync(script, "utf8")).toMatch(/-H @\/dev\/fd\/3/);
  });

  test("the dialect's documented variables, decoded to the same values as the Node adapter's; nothing else", async () => {
    verdict = "allow";
    const env = { CLAUDE_PROJECT_DIR: "/home/me/my app/ü&=%+", CLAUDE_CODE_REMOTE: "true", VCP_SERVER_SECRET: "nope", CLAUDE_ENV_FILE: "/tmp/env" };
    const before = target.requests.length;
    const r = await both(target, ["UserPromptSubmit", "--dialect", "claude"], "{}", env);
    expect(outcome(r.sh)).toEqual(outcome(r.node));
    const [viaNode, viaSh] = target.requests.slice(before).map((q) => decodeHookEnv(String(q.headers["x-vcp-hook-env"])).env);
    expect(viaSh).toEqual({ CLAUDE_PROJECT_DIR: env.CLAUDE_PROJECT_DIR, CLAUDE_CODE_REMOTE: "true" });
    expect(viaSh).toEqual(viaNode);
    const none = await sh(target, ["UserPromptSubmit", "--dialect", "claude"], "{}", { CLAUDE_PROJECT_DIR: undefined, CLAUDE_CODE_REMOTE: undefined });
    expect(none.code).toBe(0);
    expect(target.requests.at(-1)!.headers["x-vcp-hook-env"]).toBeUndefined();
    const long = await both(target, args("claude"), stdin("claude"), { CLAUDE_PROJECT_DIR: `/${"x".repeat(5000)}` });
    expect(outcome(long.sh)).toEqual(outcome(long.node));
    expect(long.sh.stderr).toContain("CLAUDE_PROJECT_DIR is 5001 bytes, more than 4096");
  });
});

// strace counts the processes one event costs (issue 26 item 5: the sh adapter's cost is its processes).
const HAS_STRACE = spawnSync("strace", ["-V"], { stdio: "ignore" }).status === 0;

describe("what one event costs", () => {
  test.skipIf(!HAS_STRACE)("a successful answer runs one process, curl: no subshell or other command for the guard or a hook variable", async () => {
    verdict = "allow";
    failure = undefined;
    guard = { revisions: "ef".repeat(32), fail_closed_events: ["PreToolUse"] };
    // A project path with spaces and signs: percent-encoded with the shell's builtins.
    const env = { XDG_CACHE_HOME: freshDir(), CLAUDE_PROJECT_DIR: "/home/me/my app (2)/a&b=c%d+e" };
    expect((await sh(target, args("claude"), stdin("claude"), env)).code).toBe(0); // stores the guard
    const log = join(freshDir(), "strace.log");
    const traced = await runProcess("strace", ["-f", "-qq", "-e", "trace=execve,clone,clone3,fork,vfork", "-o", log, "/bin/sh", script, ...args("claude"), "--server", target.url], stdin("claude"), { VCP_CLIENT_TOKEN: target.token, ...env });
    guard = undefined;
    expect(traced.code, traced.stderr).toBe(0);
    expect(JSON.parse(traced.stdout)).toEqual(ANSWERS.claude.allow!.native);
    const calls = readFileSync(log, "utf8").split("\n");
    const execs = calls.flatMap((l) => /execve\("([^"]+)"/.exec(l)?.[1] ?? []).map((f) => basename(f));
    const forks = calls.filter((l) => /^\d+ +(?:clone3?|v?fork)\(/.test(l));
    expect({ execs, forks: forks.length }).toEqual({ execs: ["sh", "curl"], forks: 1 });
    expect(decodeHookEnv(String(target.requests.at(-1)!.headers["x-vcp-hook-env"])).env).toEqual({ CLAUDE_PROJECT_DIR: env.CLAUDE_PROJECT_DIR });
  });
});

describe("the agent's environment does not redirect the request", () => {
  test("http_proxy / HTTPS_PROXY / ALL_PROXY and a ~/.curlrc are ignored, as the Node adapter ignores them", async () => {
    verdict = "deny";
    failure = undefined;
    const home = freshDir();
    writeFileSync(join(home, ".curlrc"), "url = http://127.0.0.1:1/\nproxy = http://127.0.0.1:1\n");
    const dead = await refusedUrl();
    const env = { http_proxy: dead, HTTP_PROXY: dead, HTTPS_PROXY: dead, ALL_PROXY: dead, HOME: home, CURL_HOME: home };
    const r = await both(target, args("claude"), stdin("claude"), env);
    expect(outcome(r.sh)).toEqual(outcome(r.node));
    expect(JSON.parse(r.sh.stdout)).toEqual(ANSWERS.claude.deny!.native);
  });
});

describe("what the sh adapter does not do", () => {
  test.each([
    [["pre_store", "--dialect", "ai-memory"], "--dialect ai-memory is not supported by the sh adapter: use 'vcp-hooks hook'"],
    // Copilot skips a hook that exits non-zero: its block is stdout JSON, which the script does not render.
    [["preToolUse", "--dialect", "copilot"], "--dialect copilot is not supported by the sh adapter: use 'vcp-hooks hook'"],
    [["PreToolUse", "--dialect", "claude", "--record", "/tmp/x"], "--record is not supported by the sh adapter: use 'vcp-hooks hook'"],
    [["PreToolUse", "--dialect", "claude", "--on-error", "sometimes"], "--on-error must be auto, warn, block or allow, not 'sometimes'"],
  ])("%j: refused as bad arguments, by --on-error", async (a, message) => {
    const r = await sh(target, a, "{}", { XDG_CACHE_HOME: freshDir() });
    expect(r.stderr).toContain(message);
    expect(r.code).not.toBe(0);
  });
});
