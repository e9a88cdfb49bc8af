// `vcp-hooks hook <Event> --dialect … --embedded --bundle a.vcpb (--keyring k.yaml | --allow-unsigned)`
// (PROFILES §5): no server, the event runs through an in-process runtime over the given bundles,
// rendered exactly as the server's answer; signatures verified against --keyring as `serve` verifies
// them, unsigned bundles only with --allow-unsigned; --timeout-ms is the whole call's deadline, and on a
// fail_closed event its answer is the block. Spawned as an agent spawns it, from the built CLI.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { serializeArtifact, signArtifact } from "../../../src/bundle/artifact.js";
import { buildBundle } from "../../../src/bundle/build.js";
import { generateKeyPair } from "../../../src/bundle/keys.js";
import { MAIN, runProcess, type Run } from "./stand-in.js";

let dir = "";
const vcpb: Record<string, string> = {};
/** gemini-safe-shell signed by the keyring's key, and by a key the keyring does not hold. */
let signedVcpb = "";
let strangerVcpb = "";
let keyring = "";

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "vcp-embedded-"));
  for (const name of ["gemini-safe-shell", "claude-safe-shell"]) {
    const { artifact } = await buildBundle(resolve("policies", name));
    vcpb[name] = join(dir, `${name}.vcpb`);
    writeFileSync(vcpb[name], serializeArtifact(artifact));
    if (name === "gemini-safe-shell") {
      const ci = generateKeyPair();
      const stranger = generateKeyPair();
      writeFileSync(join(dir, "ci.pub.pem"), ci.publicKeyPem);
      keyring = join(dir, "keyring.yaml");
      writeFileSync(keyring, `keys:\n  - { key_id: ci, public_key_file: ${join(dir, "ci.pub.pem")}, max_trust: deployment }\n`);
      signedVcpb = join(dir, "signed.vcpb");
      writeFileSync(signedVcpb, serializeArtifact(signArtifact(artifact, ci.privateKeyPem, "ci")));
      strangerVcpb = join(dir, "stranger.vcpb");
      writeFileSync(strangerVcpb, serializeArtifact(signArtifact(artifact, stranger.privateKeyPem, "stranger")));
    }
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
  const r = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", vcpb["gemini-safe-shell"]!, "--allow-unsigned", "--timeout-ms", "60000"], gemini("rm -rf /"));
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual({ continue: true, suppressOutput: false, decision: "block", reason: "blocked: rm -rf of a wildcard or a path outside the project: /" });
}, 90_000);

test("claude: ask + updatedInput, recorded with --record for replay", async () => {
  const rec = join(dir, "rec");
  const r = await adapter(["PreToolUse", "--dialect", "claude", "--embedded", "--bundle", vcpb["claude-safe-shell"]!, "--allow-unsigned", "--record", rec, "--timeout-ms", "60000"], claude("git push -f"));
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

test("a policy directory works as --bundle too (built first, so unsigned: --allow-unsigned)", async () => {
  const r = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", "policies/gemini-safe-shell", "--allow-unsigned", "--timeout-ms", "60000"], gemini("npm test"));
  expect(r.code).toBe(0);
  expect(JSON.parse(r.stdout)).toEqual({ continue: true, suppressOutput: false, decision: "allow" });
}, 90_000);

test("a missing or corrupt bundle is the adapter's failure, by --on-error, naming the file", async () => {
  const missing = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", join(dir, "nope.vcpb"), "--allow-unsigned", "--on-error", "block"], gemini("ls"));
  expect([missing.code, missing.stdout]).toEqual([2, ""]);
  expect(missing.stderr).toContain(`--bundle ${join(dir, "nope.vcpb")}: NOT_FOUND`);
  const corrupt = join(dir, "corrupt.vcpb");
  writeFileSync(corrupt, readFileSync(vcpb["gemini-safe-shell"]!, "utf8").replace("blocked: ", "BLOCKED: "));
  const bad = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", corrupt, "--allow-unsigned", "--on-error", "warn", "--timeout-ms", "60000"], gemini("ls"));
  expect([bad.code, bad.stdout]).toEqual([1, ""]);
  expect(bad.stderr).toMatch(/--bundle .*corrupt\.vcpb: \w+: .*digest/i);
}, 90_000);

test("argument rules: --bundle needs --embedded, --embedded needs a bundle, no --server, and --keyring or --allow-unsigned", async () => {
  const cases: Array<[string[], RegExp]> = [
    [["--bundle", "x.vcpb"], /--bundle needs --embedded/],
    [["--embedded"], /--embedded needs at least one --bundle/],
    [["--embedded", "--bundle", "x.vcpb", "--allow-unsigned", "--server", "http://127.0.0.1:1"], /--embedded runs without a server/],
    [["--embedded", "--bundle", "x.vcpb"], /--embedded needs --keyring <file> .* or --allow-unsigned/],
    [["--keyring", "k.yaml"], /--keyring is for --embedded/],
  ];
  for (const [extra, message] of cases) {
    const r = await adapter(["AfterTool", "--dialect", "gemini", ...extra], gemini("ls"));
    expect(r.code, extra.join(" ")).toBe(1);
    expect(r.stderr).toMatch(message);
  }
}, 90_000);

test("--keyring: a bundle signed by a keyring key runs; unsigned, unknown-signed and a policy directory are refused, naming the bundle", async () => {
  const ok = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", signedVcpb, "--keyring", keyring, "--timeout-ms", "60000"], gemini("rm -rf /"));
  expect(ok.stderr).toBe("");
  expect(JSON.parse(ok.stdout)).toMatchObject({ decision: "block" });
  const cases: Array<[string, RegExp]> = [
    [vcpb["gemini-safe-shell"]!, /--bundle \S+gemini-safe-shell\.vcpb: UNSIGNED_BUNDLE: bundle 'gemini-safe-shell' 1\.0\.0 is not signed.*; pass --allow-unsigned to run unsigned bundles/],
    [strangerVcpb, /--bundle \S+stranger\.vcpb: SIGNATURE_INVALID: bundle 'gemini-safe-shell' 1\.0\.0: no signature verifies against the keyring \(stranger: unknown key\)/],
    [resolve("policies/gemini-safe-shell"), /--bundle \S+policies\/gemini-safe-shell: UNSIGNED_BUNDLE: a policy directory is built here and so is unsigned/],
  ];
  for (const [bundle, message] of cases) {
    const r = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", bundle, "--keyring", keyring, "--timeout-ms", "60000"], gemini("ls"));
    // BeforeTool is a tool event: under auto, a bundle that cannot run blocks it.
    expect([r.code, r.stdout], r.stderr).toEqual([2, ""]);
    expect(r.stderr).toMatch(message);
  }
  // --allow-unsigned with the keyring: the unsigned bundle runs; a bad signature is still refused.
  const unsigned = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", vcpb["gemini-safe-shell"]!, "--keyring", keyring, "--allow-unsigned", "--timeout-ms", "60000"], gemini("npm test"));
  expect(JSON.parse(unsigned.stdout)).toMatchObject({ decision: "allow" });
  const stranger = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", strangerVcpb, "--keyring", keyring, "--allow-unsigned", "--timeout-ms", "60000"], gemini("ls"));
  expect(stranger.stderr).toMatch(/SIGNATURE_INVALID/);
  const badKeyring = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", signedVcpb, "--keyring", join(dir, "nope.yaml"), "--timeout-ms", "60000"], gemini("ls"));
  expect([badKeyring.code, badKeyring.stdout]).toEqual([2, ""]);
  expect(badKeyring.stderr).toMatch(/--keyring \S+nope\.yaml: /);
}, 180_000);

test("the deadline: past --timeout-ms (the whole call, the runtime's start included) a fail_closed event is blocked, an unguarded one warns", async () => {
  // 1 ms: no runtime starts that fast, so the deadline's answer is what is heard.
  const guarded = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", vcpb["gemini-safe-shell"]!, "--allow-unsigned", "--timeout-ms", "1"], gemini("rm -rf /"));
  expect([guarded.code, guarded.stdout]).toEqual([2, ""]);
  expect(guarded.stderr).toMatch(/no answer within 1 ms \(on-error=auto: BeforeTool (is guarded by a fail_closed hook in the --bundle files|runs before a tool)/);
  const open = await adapter(["AfterTool", "--dialect", "gemini", "--embedded", "--bundle", vcpb["gemini-safe-shell"]!, "--allow-unsigned", "--timeout-ms", "1"], JSON.stringify({ ...JSON.parse(gemini("ls")), hook_event_name: "AfterTool", tool_response: {} }));
  expect([open.code, open.stdout]).toEqual([1, ""]);
  expect(open.stderr).toMatch(/no answer within 1 ms/);
}, 90_000);

test("a policy directory whose hook names an action the entry does not export is refused by the install, naming it", async () => {
  const policy = join(dir, "broken-policy");
  mkdirSync(join(policy, "src"), { recursive: true });
  writeFileSync(join(policy, "policy.yaml"), "bundle: broken\nversion: 1.0.0\nprofile: gemini-cli\ntrust: deployment\nentry: src/index.ts\nhooks:\n  - { name: guard, event: BeforeTool, action: guardShell, timeout_ms: 1000, fail_closed: true }\n");
  writeFileSync(join(policy, "src", "index.ts"), "export function other() { return {}; }\n");
  const r = await adapter(["BeforeTool", "--dialect", "gemini", "--embedded", "--bundle", policy, "--allow-unsigned", "--timeout-ms", "60000"], gemini("ls"));
  expect([r.code, r.stdout]).toEqual([2, ""]);
  expect(r.stderr).toMatch(/--bundle \S+broken-policy: ACTION_NOT_CALLABLE: bundle 'broken': hook 'guard' names action 'guardShell', which is not an exported function/);
  // The deadline's reason names the bundle's own fail_closed guard, read before the runtime answered.
  expect(r.stderr).toContain("on-error=auto: BeforeTool is guarded by a fail_closed hook in the --bundle files");
}, 90_000);
