// `vcp-hooks hook <Event> --dialect … --embedded --bundle a.vcpb` (PROFILES §5): no server, the event runs
// through an in-process runtime over the given bundles (installed unsigned, as `vcp-hooks fire` does),
// rendered exactly as the server's answer. Spawned as an agent spawns it, from the built CLI.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { serializeArtifact } from "../../../src/bundle/artifact.js";
import { buildBundle } from "../../../src/bundle/build.js";
import { MAIN, runProcess, type Run } from "./stand-in.js";

let dir = "";
const vcpb: Record<string, string> = {};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vcp-embedded-"));
  for (const name of ["gemini-safe-shell", "claude-safe-shell"]) {
    const { artifact } = await buildBundle(resolve("policies", name));
    vcpb[name] = join(dir, `${name}.vcpb`);
    writeFileSync(vcpb[name], serializeArtifact(artifact));
  }
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// No VCP_CLIENT_TOKEN and no server anywhere: an answer can only come from the in-process runtime.
const adapter = (args: string[], stdin: string): Promise<Run> => runProcess(process.execPath, [MAIN, "hook", ...args], stdin, { VCP_CLIENT_TOKEN: undefined });

const gemini = (command: string) =>
  JSON.stringify({ session_id: "e1", transcript_path: "/t", cwd: "/home/dev/app", hook_event_name: "BeforeTool", timestamp: "2026-11-26T04:30:00Z", tool_name: "run_shell_command", tool_input: { command } });
const claude = (command: string) =>
  JSON.stringify({ session_id: "e1", transcript_path: "/t", cwd: "/home/dev/app", permission_mode: "default", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command }, tool_use_id: "t1" });

test("gemini: rm -rf / is blocked by the bundle, with no server running", async () => {
  const r = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", vcpb["gemini-safe-shell"]!, "--timeout-ms", "60000"], gemini("rm -rf /"));
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual({ continue: true, suppressOutput: false, decision: "block", reason: "blocked: rm -rf of a wildcard or a path outside the project: /" });
}, 90_000);

test("claude: ask + updatedInput, recorded with --record for replay", async () => {
  const rec = join(dir, "rec");
  const r = await adapter(["PreToolUse", "--dialect", "claude", "--embedded", "--bundle", vcpb["claude-safe-shell"]!, "--record", rec, "--timeout-ms", "60000"], claude("git push -f"));
  expect(r.code).toBe(0);
  const native = {
    hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "git push --force rewritten to --force-with-lease", updatedInput: { command: "git push --force-with-lease" } },
  };
  expect(JSON.parse(r.stdout)).toEqual(native);
  const files = readdirSync(rec);
  expect(files).toHaveLength(1);
  const doc = JSON.parse(readFileSync(join(rec, files[0]!), "utf8")) as { profile: string; event: string; answer: unknown };
  expect(doc).toMatchObject({ profile: "claude-code", event: "PreToolUse", answer: { native, exit_code: 0 } });
}, 90_000);

test("a policy directory works as --bundle too (built first)", async () => {
  const r = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", "policies/gemini-safe-shell", "--timeout-ms", "60000"], gemini("npm test"));
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual({ continue: true, suppressOutput: false, decision: "allow" });
}, 90_000);

test("a missing or corrupt bundle is the adapter's failure, by --on-error, naming the file", async () => {
  const missing = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", join(dir, "nope.vcpb"), "--on-error", "block"], gemini("ls"));
  expect([missing.code, missing.stdout]).toEqual([2, ""]);
  expect(missing.stderr).toContain(`--bundle ${join(dir, "nope.vcpb")}: NOT_FOUND`);
  const corrupt = join(dir, "corrupt.vcpb");
  writeFileSync(corrupt, readFileSync(vcpb["gemini-safe-shell"]!, "utf8").replace("blocked: ", "BLOCKED: "));
  const bad = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", corrupt], gemini("ls"));
  expect([bad.code, bad.stdout]).toEqual([1, ""]);
  expect(bad.stderr).toMatch(/--bundle .*corrupt\.vcpb: \w+: .*digest/i);
}, 90_000);

test("argument rules: --bundle needs --embedded, --embedded needs a bundle and no --server", async () => {
  const cases: Array<[string[], RegExp]> = [
    [["--bundle", "x.vcpb"], /--bundle needs --embedded/],
    [["--embedded"], /--embedded needs at least one --bundle/],
    [["--embedded", "--bundle", "x.vcpb", "--server", "http://127.0.0.1:1"], /--embedded runs without a server/],
  ];
  for (const [extra, message] of cases) {
    const r = await adapter(["BeforeTool", "--dialect", "gemini", ...extra], gemini("ls"));
    expect(r.code, extra.join(" ")).toBe(1);
    expect(r.stderr).toMatch(message);
  }
}, 90_000);
