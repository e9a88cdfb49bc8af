// `vcp-hooks test --replay DIR --bundle port.vcpb` (PROFILES §7): events recorded by the adapter's
// `--record` are run again through a port and every differing decision is listed. The recordings come
// from the real adapter (`hook --embedded --record`); the port with a planted bug is a copy of the
// gemini safe-shell policy that forgot its rm -rf rule.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { runProcess } from "./hook/stand-in.js";
import { cli, MAIN } from "./helpers.js";

let dir = "";
let rec = "";
let buggyPort = "";
const GOOD_PORT = resolve("policies/gemini-safe-shell");

const event = (command: string) =>
  JSON.stringify({ session_id: "r1", transcript_path: "/t", cwd: "/home/dev/app", hook_event_name: "BeforeTool", timestamp: "2026-11-26T04:30:00Z", tool_name: "run_shell_command", tool_input: { command } });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vcp-replay-"));
  rec = join(dir, "rec");
  // Record three decisions (block, modify, allow) through the adapter, as an agent would have produced them.
  for (const command of ["rm -rf /", "git push --force origin main", "npm test"]) {
    const r = await runProcess(process.execPath, [MAIN, "hook", "BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", GOOD_PORT, "--allow-unsigned", "--record", rec, "--timeout-ms", "60000"], event(command));
    expect(r.code, r.stderr).toBe(0);
  }
  // The planted difference: a port whose rm -rf rule never fires.
  cpSync(GOOD_PORT, join(dir, "port", "gemini-safe-shell"), { recursive: true });
  const rules = readFileSync(resolve("policies/safe-shell-rules.ts"), "utf8");
  const planted = rules.replace("return recursive && force ? targets : undefined;", "return undefined;");
  expect(planted).not.toBe(rules);
  writeFileSync(join(dir, "port", "safe-shell-rules.ts"), planted);
  buggyPort = join(dir, "port", "gemini-safe-shell");
}, 120_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the recorder wrote one file per event", () => {
  expect(readdirSync(rec).filter((f) => f.endsWith(".json"))).toHaveLength(3);
});

test("the same port replays every recorded answer unchanged: exit 0", async () => {
  const run = await cli(["test", "--replay", rec, "--bundle", GOOD_PORT], { timeoutMs: 90_000 });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain("3 recording(s) replayed: 3 same, 0 different");
}, 90_000);

test("a planted difference is found: the file, the event and each differing field with both values; exit 1", async () => {
  const run = await cli(["test", "--replay", rec, "--bundle", buggyPort], { timeoutMs: 90_000 });
  expect(run.code).toBe(1);
  expect(run.stdout).toContain("3 recording(s) replayed: 2 same, 1 different");
  expect(run.stdout).toMatch(/✗ \S+-BeforeTool\.json \[BeforeTool\]/);
  expect(run.stdout).toContain('native/decision: recorded "block" → port "allow"');
  expect(run.stdout).toContain('native/reason: recorded "blocked: rm -rf of a wildcard or a path outside the project: /" → port (absent)');

  const json = await cli(["test", "--replay", rec, "--bundle", buggyPort, "--json"], { timeoutMs: 90_000 });
  const report = JSON.parse(json.stdout) as { ok: boolean; replayed: number; same: number; differences: Array<{ event: string; paths: string[]; recorded: { native: { decision: string } }; replayed: { native: { decision: string } } }> };
  expect(report.ok).toBe(false);
  expect([report.replayed, report.same]).toEqual([3, 2]);
  expect(report.differences).toHaveLength(1);
  expect(report.differences[0]!.paths).toEqual(["native/decision", "native/reason"]);
  expect([report.differences[0]!.recorded.native.decision, report.differences[0]!.replayed.native.decision]).toEqual(["block", "allow"]);
}, 120_000);

test("a recording of a failed adapter run is skipped and said so; usage errors name the option", async () => {
  const failed = join(dir, "failed");
  const r = await runProcess(process.execPath, [MAIN, "hook", "BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", join(dir, "missing.vcpb"), "--allow-unsigned", "--record", failed, "--on-error", "allow"], event("ls"));
  expect(r.code).toBe(0);
  const run = await cli(["test", "--replay", failed, "--bundle", GOOD_PORT], { timeoutMs: 90_000 });
  expect(run.code).toBe(1);
  expect(run.stdout).toContain("skipped: the recorded run has no answer (the adapter failed)");
  expect(run.stdout).toContain("0 recording(s) replayed: 0 same, 0 different, 1 skipped (nothing could be replayed)");

  const noBundle = await cli(["test", "--replay", rec]);
  expect(noBundle.code).toBe(2);
  expect(noBundle.stderr).toContain("--replay needs --bundle");
  const empty = join(dir, "empty");
  mkdirSync(empty);
  writeFileSync(join(empty, "notes.txt"), "not a recording");
  const nothing = await cli(["test", "--replay", empty, "--bundle", GOOD_PORT]);
  expect(nothing.code).toBe(1);
  expect(nothing.stderr).toContain("no recordings");
}, 120_000);
