/**
 * A profile hook's reason carries CR/LF, a forged header, terminal escapes (OSC title, clear screen,
 * BEL), NUL and Unicode line separators. It travels to `?answer=native` (body + `X-VCP-Exit-Code`), to
 * the envelope, and through the drop-in adapter to the agent's stdout and stderr. Contained: no header
 * is added or split, the exit-code header is one digit, the JSON carries the text exactly, the
 * adapter's stdout is one JSON line and its stderr holds no byte a terminal acts on. The same for a
 * server error naming a hostile event name from the agent's settings.
 */
import { request } from "node:http";
import { Checks, type Scenario } from "../scenario.js";
import { TENANT_TOKENS, startTenantServer } from "../http-tenants.js";
import { runCli, TERMINAL_CONTROLS } from "../cli-run.js";
import type { BundleSource } from "../../../src/index.js";

const EVIL = "blocked\r\nX-Injected: yes\r\n\r\n<html>\u001b]0;pwned\u0007\u001b[2J\u0000tail\u2028\u2029\u0085end";

const BUNDLES: BundleSource[] = [
  {
    manifest: {
      bundle: "ctl-gemini",
      version: "1.0.0",
      trust: "deployment",
      profile: "gemini-cli",
      hooks: [{ name: "ctl", event: "BeforeTool", action: "ctl", priority: 50, timeout_ms: 2000 }],
    } as unknown as BundleSource["manifest"],
    code: `var __vcp_bundle = { ctl: function () { return { decision: "block", reason: ${JSON.stringify(EVIL)}, systemMessage: ${JSON.stringify(EVIL)} }; } };`,
  },
  {
    manifest: {
      bundle: "ctl-claude",
      version: "1.0.0",
      trust: "deployment",
      profile: "claude-code",
      hooks: [{ name: "ctl", event: "PreToolUse", action: "ctl", priority: 50, timeout_ms: 2000 }],
    } as unknown as BundleSource["manifest"],
    code: `var __vcp_bundle = { ctl: function () { return { decision: "block", reason: ${JSON.stringify(EVIL)}, systemMessage: ${JSON.stringify(EVIL)} }; } };`,
  },
];

const GEMINI_INPUT = { session_id: "ctl-1", transcript_path: "/t", cwd: "/w", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: { command: "ls" } };
const CLAUDE_INPUT = { session_id: "ctl-2", transcript_path: "/t", cwd: "/w", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" } };

/** A raw POST keeping every response header as sent (names and values). */
function rawPost(base: string, path: string, body: unknown): Promise<{ status: number; headers: string[]; body: string }> {
  const url = new URL(path, base);
  return new Promise((done, fail) => {
    const req = request({ host: url.hostname, port: url.port, method: "POST", path: url.pathname + url.search, headers: { authorization: `Bearer ${TENANT_TOKENS.a}`, "content-type": "application/json" } }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (d: Buffer) => parts.push(d));
      res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.rawHeaders, body: Buffer.concat(parts).toString("utf8") }));
      res.on("error", fail);
    });
    req.on("error", fail);
    req.end(JSON.stringify(body));
  });
}

function nativeHolds(text: string, paths: string[][]): boolean {
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return paths.some((path) => path.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], parsed) === EVIL);
  } catch {
    return false;
  }
}

export const scenario: Scenario = {
  id: "profile-answer-control-chars",
  category: "profile-boundary",
  title: "a hook's reason with CR/LF, a forged header and terminal escapes reaches ?answer=native, the envelope and the adapter's stdout/stderr",
  expected: "no added or split header, X-VCP-Exit-Code one digit, the JSON carries the text exactly; the adapter prints one JSON line and a stderr with no terminal control byte",
  async run() {
    const checks = new Checks();
    const t = await startTenantServer({ bundles: BUNDLES });
    let servedAfter = false;
    const observed: string[] = [];
    try {
      for (const [profile, event, input] of [["gemini-cli", "BeforeTool", GEMINI_INPUT], ["claude-code", "PreToolUse", CLAUDE_INPUT]] as const) {
        const res = await rawPost(t.url, `/v1/profiles/${profile}/events/${event}?answer=native`, input);
        const names = res.headers.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase());
        const exit = res.headers[res.headers.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === "x-vcp-exit-code") + 1];
        observed.push(`${profile} ${res.status} exit=${exit}`);
        checks.check(res.status === 200, `${profile}: ?answer=native answered ${res.status}: ${res.body.slice(0, 160)}`);
        checks.check(!names.includes("x-injected"), `${profile}: the reason added a response header`);
        checks.check(exit !== undefined && /^[0-9]$/.test(exit), `${profile}: X-VCP-Exit-Code is ${JSON.stringify(exit)}`);
        checks.check(res.headers.every((h) => !/[\r\n\u0000]/.test(h)), `${profile}: a response header carries CR, LF or NUL`);
        checks.check(nativeHolds(res.body, [["reason"], ["systemMessage"], ["hookSpecificOutput", "permissionDecisionReason"]]), `${profile}: the native JSON does not carry the reason exactly: ${res.body.slice(0, 200)}`);
      }

      const adapterEnv = { VCP_CLIENT_TOKEN: TENANT_TOKENS.a };
      for (const [dialect, event, input] of [["gemini", "BeforeTool", GEMINI_INPUT], ["claude", "PreToolUse", CLAUDE_INPUT]] as const) {
        const run = await runCli(["hook", event, "--dialect", dialect, "--server", t.url], { stdin: JSON.stringify(input), env: adapterEnv });
        const stdout = run.stdout.toString("utf8");
        const stderr = run.stderr.toString("utf8");
        observed.push(`adapter ${dialect} exit ${run.code}`);
        checks.check(run.code === 0, `adapter ${dialect}: exit ${run.code}, stderr ${JSON.stringify(stderr).slice(0, 200)}`);
        checks.check(stdout.endsWith("\n") && stdout.indexOf("\n") === stdout.length - 1 && !/[\r\u2028\u2029]/.test(stdout), `adapter ${dialect}: stdout is not one JSON line: ${JSON.stringify(stdout).slice(0, 200)}`);
        checks.check(nativeHolds(stdout, [["reason"], ["systemMessage"], ["hookSpecificOutput", "permissionDecisionReason"]]), `adapter ${dialect}: stdout does not carry the reason exactly`);
        checks.check(!TERMINAL_CONTROLS.test(stderr), `adapter ${dialect}: stderr carries a terminal control byte: ${JSON.stringify(stderr).slice(0, 200)}`);
      }

      // The agent's settings name the event: a hostile one comes back in the server's error message.
      const hostileEvent = "Before\u001b[2J\u0007Tool\r\nX-Injected: yes";
      const refused = await runCli(["hook", hostileEvent, "--dialect", "gemini", "--server", t.url], { stdin: JSON.stringify(GEMINI_INPUT), env: adapterEnv });
      const refusedErr = refused.stderr.toString("utf8");
      observed.push(`hostile event exit ${refused.code}`);
      checks.check(refused.code === 1 && refused.stdout.length === 0, `a hostile event name: exit ${refused.code}, stdout ${JSON.stringify(refused.stdout.toString("utf8")).slice(0, 120)}`);
      checks.check(refusedErr.split("\n").length === 2 && !TERMINAL_CONTROLS.test(refusedErr), `a hostile event name: stderr is not one clean line: ${JSON.stringify(refusedErr).slice(0, 240)}`);

      const normal = await runCli(["hook", "BeforeTool", "--dialect", "gemini", "--server", t.url], { stdin: JSON.stringify(GEMINI_INPUT), env: adapterEnv });
      servedAfter = normal.code === 0 && nativeHolds(normal.stdout.toString("utf8"), [["reason"]]);
    } finally {
      await t.close();
    }
    return checks.outcome(observed.join(", "), servedAfter);
  },
};
