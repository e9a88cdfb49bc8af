/**
 * The drop-in adapter (`vcp-hooks hook`, PROFILES §5) fed what a broken or hostile agent could pipe
 * in — 17 MB, JSON nested 5,000 deep, invalid UTF-8, an array, nothing — and `--record DIR` given an
 * event name with path segments, or a file where the directory should be. Contained: each bad input
 * is one coded stderr line and the `--on-error` answer (never a hang or a stack trace), the server
 * refuses what it must before any work, recordings land only inside DIR, and a recording failure
 * never changes the agent's answer.
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Checks, type Scenario } from "../scenario.js";
import { TENANT_TOKENS, startTenantServer } from "../http-tenants.js";
import { runCli, TERMINAL_CONTROLS, type CliRun } from "../cli-run.js";
import type { BundleSource } from "../../../src/index.js";

const ALLOW: BundleSource = {
  manifest: {
    bundle: "adapter-allow",
    version: "1.0.0",
    trust: "deployment",
    profile: "gemini-cli",
    hooks: [{ name: "seen", event: "BeforeTool", action: "seen", priority: 50, timeout_ms: 2000 }],
  } as unknown as BundleSource["manifest"],
  code: `var __vcp_bundle = { seen: function (input) { return { systemMessage: "saw " + input.tool_input.command }; } };`,
};

const BASE = { session_id: "ad-1", transcript_path: "/t", cwd: "/w", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command" };

/** Every file under `dir`, relative, recursively. */
function listTree(dir: string, prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [`${prefix}${e.name}/`, ...listTree(join(dir, e.name), `${prefix}${e.name}/`)] : [`${prefix}${e.name}`]));
}

export const scenario: Scenario = {
  id: "adapter-hostile-stdin",
  category: "profile-boundary",
  title: "the adapter gets 17 MB, 5,000-deep, invalid UTF-8 and non-object stdin, and --record paths built to escape",
  expected: "one clean stderr line and the --on-error answer per bad input (default auto on BeforeTool with no plan known: block, exit 2; warn: exit 1); recordings only inside DIR; a failed recording leaves the answer unchanged",
  async run() {
    const checks = new Checks();
    const t = await startTenantServer({ bundles: [ALLOW] });
    const root = mkdtempSync(join(tmpdir(), "vcp-adapter-atk-"));
    const cacheHome = mkdtempSync(join(tmpdir(), "vcp-adapter-atk-cache-"));
    let servedAfter = false;
    const observed: string[] = [];
    // A cache dir of its own: under the default --on-error auto, no guard file is known, so a bad input
    // on BeforeTool (a tool event) is blocked, whatever earlier runs left in the user's cache.
    const env = { VCP_CLIENT_TOKEN: TENANT_TOKENS.a, XDG_CACHE_HOME: cacheHome };
    const hook = (stdin: string | Buffer, extra: string[] = [], event = "BeforeTool"): Promise<CliRun> => runCli(["hook", event, "--dialect", "gemini", "--server", t.url, ...extra], { stdin, env, cwd: root });
    const oneCleanLine = (name: string, run: CliRun, code: number, rule: RegExp): void => {
      const err = run.stderr.toString("utf8");
      observed.push(`${name} ${run.code}`);
      checks.check(run.code === code, `${name}: exit ${run.code}, expected ${code}; stderr ${JSON.stringify(err).slice(0, 200)}`);
      checks.check(err.split("\n").length === 2 && rule.test(err), `${name}: stderr is not one line naming the problem (${rule.source}): ${JSON.stringify(err).slice(0, 240)}`);
      checks.check(!TERMINAL_CONTROLS.test(err) && !/\n\s+at /.test(err), `${name}: stderr carries control bytes or a stack trace`);
    };
    try {
      const huge = Buffer.alloc(17 * 1024 * 1024, 0x20);
      oneCleanLine("17 MB", await hook(huge), 2, /larger than 16777216 bytes/);
      oneCleanLine("17 MB --on-error warn", await hook(huge, ["--on-error", "warn"]), 1, /larger than/);

      const deep = `${JSON.stringify(BASE).slice(0, -1)},"tool_input":{"command":"ls","x":${"[".repeat(5000)}${"]".repeat(5000)}}}`;
      oneCleanLine("5,000 deep", await hook(deep), 2, /INVALID_INPUT|too deep|depth|nest/i);

      oneCleanLine("array", await hook("[1,2,3]"), 2, /must be a JSON object/);
      oneCleanLine("empty", await hook(""), 2, /stdin is empty/);
      oneCleanLine("not JSON", await hook("\u001b[2J{not json"), 2, /not JSON/);

      // Invalid UTF-8 inside a string: decoded with U+FFFD, then served like any input.
      const prefix = Buffer.from(`${JSON.stringify(BASE).slice(0, -1)},"tool_input":{"command":"ls `);
      const bad = Buffer.concat([prefix, Buffer.from([0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80]), Buffer.from('"}}')]);
      const utf = await hook(bad);
      observed.push(`invalid UTF-8 ${utf.code}`);
      const utfNative = (() => {
        try {
          return JSON.parse(utf.stdout.toString("utf8")) as { systemMessage?: string };
        } catch {
          return {};
        }
      })();
      checks.check(utf.code === 0 && /^saw ls /.test(utfNative.systemMessage ?? ""), `invalid UTF-8: exit ${utf.code}, stdout ${utf.stdout.toString("utf8").slice(0, 160)}`);

      // --record: the event name becomes part of a file name; it must not become a path.
      const recordDir = join(root, "rec", "inner");
      const escaping = await hook(JSON.stringify({ ...BASE, tool_input: { command: "ls" } }), ["--record", recordDir], "../../../../escape-x");
      oneCleanLine("record with a ../ event", escaping, 1, /not an event name/);
      checks.check(listTree(root).every((p) => !p.includes("escape")), `a recording named after the ../ event was written: ${listTree(root).join(", ")}`);
      const recorded = await hook(JSON.stringify({ ...BASE, tool_input: { command: "ls" } }), ["--record", recordDir]);
      const files = listTree(recordDir);
      observed.push(`record ${recorded.code} ${files.length} file`);
      checks.check(recorded.code === 0 && files.length === 1 && /^[0-9TZ-]+-\d+-\d+-BeforeTool\.json$/.test(files[0] ?? ""), `--record wrote ${JSON.stringify(files)}`);
      checks.check(listTree(root).filter((p) => !p.endsWith("/")).every((p) => p.startsWith("rec/inner/") || p === "not-a-dir"), `a recording landed outside DIR: ${listTree(root).join(", ")}`);

      // --record naming a file: the recording fails, the answer does not change.
      const notDir = join(root, "not-a-dir");
      writeFileSync(notDir, "x");
      const recFail = await hook(JSON.stringify({ ...BASE, tool_input: { command: "pwd" } }), ["--record", notDir]);
      observed.push(`record into a file ${recFail.code}`);
      checks.check(recFail.code === 0 && /saw pwd/.test(recFail.stdout.toString("utf8")), `a failed recording changed the answer: exit ${recFail.code}, ${recFail.stdout.toString("utf8").slice(0, 120)}`);
      checks.check(/--record/.test(recFail.stderr.toString("utf8")) && !TERMINAL_CONTROLS.test(recFail.stderr.toString("utf8")), `a failed recording is not reported on stderr: ${JSON.stringify(recFail.stderr.toString("utf8")).slice(0, 160)}`);

      const normal = await hook(JSON.stringify({ ...BASE, tool_input: { command: "whoami" } }));
      servedAfter = normal.code === 0 && /saw whoami/.test(normal.stdout.toString("utf8"));
    } finally {
      rmSync(root, { recursive: true, force: true });
      rmSync(cacheHome, { recursive: true, force: true });
      await t.close();
    }
    return checks.outcome(observed.join(", "), servedAfter);
  },
};
