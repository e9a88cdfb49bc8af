// `vcp-hooks build --from repo-yaml` and `vcp-hooks hooks list --format repo-yaml` (PROFILES §3.6, §8.8)
// over the fixture directory test/cli/repo-yaml/hooks (one YAML file per hook, handlers under it).
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { createRuntime } from "../../src/index.js";
import { createServer } from "../../src/server/app.js";
import { sha256 } from "../e2e/helpers.js";
import { profileBundle } from "../support/bundles.js";
import { createVmBackend } from "../support/vm-backend.js";
import { cleanup, cli, scratchDir } from "./helpers.js";

const FIXTURE = "test/cli/repo-yaml/hooks";
const dirs: string[] = [];
afterAll(() => cleanup(dirs));

describe("build --from repo-yaml", () => {
  test("builds a repo-yaml@1 bundle in file-name order that blocks and suggests like the YAML says; the same bytes from another place", async () => {
    const out = scratchDir(dirs);
    const run = await cli(["build", "--from", "repo-yaml", FIXTURE, "-o", join(out, "a.vcpb"), "--json"]);
    expect(run.stderr).toContain("30_disabled.yaml: hook 'old_tracker' is disabled");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { bundle: string; hooks: string[]; digest: string };
    // 05_prompt_log.yml < 10_scope_guard.yaml < 20_suggest_docs.yaml; the disabled script hook is left out.
    expect(report).toMatchObject({ bundle: "repo-yaml-hooks", hooks: ["prompt_log", "scope_guard", "suggest_docs"] });
    const artifact = JSON.parse(readFileSync(join(out, "a.vcpb"), "utf8")) as { manifest: { profile: string; trust: string; hooks: Array<Record<string, unknown>> } };
    expect(artifact.manifest.profile).toBe("repo-yaml@1");
    expect(artifact.manifest.trust).toBe("deployment");
    expect(artifact.manifest.hooks[1]).toMatchObject({ name: "scope_guard", event: "PreAbilityCall", action: "guardScope", blocking: true });
    expect(artifact.manifest.hooks[2]).toMatchObject({ name: "suggest_docs", match: { ability_scope: "billing_*", min_duration_ms: 1000 } });

    // The bundle runs: an ability outside workflow.* is blocked (exit code 2), a slow billing one gets its runbook.
    writeFileSync(join(out, "pre.json"), JSON.stringify({ session_id: "s1", ability_id: "shell.rm" }));
    const blocked = await cli(["fire", "--profile", "repo-yaml", "PreAbilityCall", "--bundle", join(out, "a.vcpb"), "--input", join(out, "pre.json"), "--json"]);
    expect(JSON.parse(blocked.stdout)).toMatchObject({ native: { error: "blocked_by_policy", messages_to_user: ["shell.rm is outside workflow.*"] }, exit_code: 2 });
    writeFileSync(join(out, "post.json"), JSON.stringify({ session_id: "s1", ability_id: "billing_regression", status: "success", duration_ms: 187000 }));
    const post = await cli(["fire", "--profile", "repo-yaml", "PostAbilityCall", "--bundle", join(out, "a.vcpb"), "--input", join(out, "post.json"), "--json"]);
    expect(JSON.parse(post.stdout)).toMatchObject({ native: { suggested_documents: [{ path: "docs/runbooks/billing.md", reason: "billing_regression ran slowly" }] }, exit_code: 0 });

    // Built from a copy elsewhere: byte-identical (paths in the bundle are relative to the directory).
    const copy = join(scratchDir(dirs), "hooks");
    cpSync(FIXTURE, copy, { recursive: true });
    const again = await cli(["build", "--from", "repo-yaml", copy, "-o", join(out, "b.vcpb"), "--json"]);
    expect(again.code).toBe(0);
    expect(readFileSync(join(out, "b.vcpb"), "utf8")).toBe(readFileSync(join(out, "a.vcpb"), "utf8"));
  }, 120_000);

  const BAD: Array<{ name: string; file: string; text: string; message: RegExp }> = [
    { name: "not valid YAML", file: "40_broken.yaml", text: "id: broken\nevent_type: [PreAbilityCall\n", message: /40_broken\.yaml: \(yaml\): not valid YAML/ },
    { name: "no id", file: "40_noid.yaml", text: "event_type: PreAbilityCall\nhandler: { kind: action, module: handlers/guard.ts, export: guardScope }\n", message: /40_noid\.yaml: id: / },
    { name: "no event_type", file: "40_noevent.yaml", text: "id: no_event\nhandler: { kind: action, module: handlers/guard.ts, export: guardScope }\n", message: /40_noevent\.yaml: event_type: / },
    { name: "an unknown event_type", file: "40_event.yaml", text: "id: bad_event\nevent_type: PreToolUse\nhandler: { kind: action, module: handlers/guard.ts, export: guardScope }\n", message: /40_event\.yaml: event_type: / },
    { name: "a script handler", file: "40_script.yaml", text: "id: tracker\nevent_type: PostAbilityCall\nhandler: { kind: script, command: ./track.sh }\n", message: /40_script\.yaml: handler\.kind: 'script' \(\.\/track\.sh\) runs a command, which needs the command lane/ },
    { name: "a module outside the directory", file: "40_outside.yaml", text: "id: outside\nevent_type: SessionStart\nhandler: { kind: action, module: ../evil.ts, export: run }\n", message: /40_outside\.yaml: handler\.module: "\.\.\/evil\.ts" must be a relative path inside/ },
    { name: "a module that does not exist", file: "40_missing.yaml", text: "id: missing\nevent_type: SessionStart\nhandler: { kind: action, module: handlers/nope.ts, export: run }\n", message: /40_missing\.yaml: handler\.module: "handlers\/nope\.ts" does not exist/ },
    { name: "an export that is not a function", file: "40_export.yaml", text: "id: ghost\nevent_type: SessionEnd\nhandler: { kind: action, module: handlers/docs.ts, export: ghost }\n", message: /40_export\.yaml: handler\.export: "ghost" is not an exported function of handlers\/docs\.ts/ },
  ];
  test.each(BAD)("$name: the build fails naming the file and the field, and writes nothing", async ({ file, text, message }) => {
    const dir = join(scratchDir(dirs), "hooks");
    cpSync(FIXTURE, dir, { recursive: true });
    writeFileSync(join(dir, file), text);
    const out = join(dir, "..", "x.vcpb");
    const run = await cli(["build", "--from", "repo-yaml", dir, "-o", out, "--json"]);
    expect(run.code).toBe(1);
    const { error } = JSON.parse(run.stdout) as { error: { code: string; message: string } };
    expect(error.message).toMatch(message);
    expect(error.code).toBe(file === "40_export.yaml" ? "ACTION_NOT_CALLABLE" : "BUILD_FAILED");
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});

// Issue 24 (review): a FIFO or a huge sparse file named as a module hung the build or cost gigabytes.
// Every file build and import read is refused before a byte is read unless it is a regular file within
// its bound (src/bundle/input-file.ts); each case would hang (a FIFO nobody writes) without that, hence
// the child's kill timer well below the test's timeout.
describe("files build must not read", () => {
  const HANG_MS = 30_000;
  function hooksWith(module: string, make: (path: string) => void): { dir: string; path: string } {
    const dir = join(scratchDir(dirs), "hooks");
    cpSync(FIXTURE, dir, { recursive: true });
    const path = join(dir, "handlers", module);
    make(path);
    writeFileSync(join(dir, "40_odd.yaml"), `id: odd\nevent_type: SessionStart\nhandler: { kind: action, module: handlers/${module}, export: run }\n`);
    return { dir, path };
  }
  async function refused(args: string[], path: string, rule: RegExp): Promise<void> {
    const started = Date.now();
    const run = await cli([...args, "--json"], { timeoutMs: HANG_MS });
    expect(run.code, `killed after ${Date.now() - started} ms: ${run.stderr}`).toBe(1);
    const { error } = JSON.parse(run.stdout) as { error: { code: string; message: string; details: { file: string } } };
    expect(error.code).toBe("INPUT_FILE_REFUSED");
    expect(error.message).toContain(path);
    expect(error.message).toMatch(rule);
    expect(error.details.file).toBe(path);
  }

  test("a FIFO as a handler module: refused at once, naming it (it used to hang the build)", async () => {
    const { dir, path } = hooksWith("pipe.ts", (p) => execFileSync("mkfifo", [p]));
    await refused(["build", "--from", "repo-yaml", dir, "-o", join(dir, "..", "x.vcpb")], realpathSync(path), /is a FIFO \(named pipe\), not a regular file/);
    expect(existsSync(join(dir, "..", "x.vcpb"))).toBe(false);
  }, 60_000);

  test("a 600 MB sparse file as a handler module: refused by its size before it is read (it used to take 3.2 GB)", async () => {
    const { dir, path } = hooksWith("huge.ts", (p) => execFileSync("truncate", ["-s", "600M", p]));
    await refused(["build", "--from", "repo-yaml", dir, "-o", join(dir, "..", "x.vcpb")], realpathSync(path), /is 629145600 bytes; at most 16777216/);
  }, 60_000);

  test("a FIFO named like a hook file: refused, not skipped", async () => {
    const dir = join(scratchDir(dirs), "hooks");
    cpSync(FIXTURE, dir, { recursive: true });
    execFileSync("mkfifo", [join(dir, "40_pipe.yaml")]);
    await refused(["build", "--from", "repo-yaml", dir, "-o", join(dir, "..", "x.vcpb")], join(dir, "40_pipe.yaml"), /is a FIFO/);
  }, 60_000);

  test("a hook file that is a symlink out of the directory: refused, naming where it leads", async () => {
    const dir = join(scratchDir(dirs), "hooks");
    cpSync(FIXTURE, dir, { recursive: true });
    const outside = join(dir, "..", "elsewhere.yaml");
    writeFileSync(outside, "id: elsewhere\nevent_type: SessionStart\nhandler: { kind: action, module: handlers/docs.ts, export: logPrompt }\n");
    symlinkSync(outside, join(dir, "40_link.yaml"));
    const run = await cli(["build", "--from", "repo-yaml", dir, "-o", join(dir, "..", "x.vcpb"), "--json"], { timeoutMs: HANG_MS });
    expect(run.code).toBe(1);
    const { error } = JSON.parse(run.stdout) as { error: { code: string; message: string } };
    expect(error.code).toBe("INPUT_FILE_REFUSED");
    expect(error.message).toMatch(/40_link\.yaml: .*resolves to .*elsewhere\.yaml, outside/);
  }, 60_000);

  test("a policy directory: a FIFO policy.yaml and a FIFO imported module are refused; so is a FIFO .vcpb to sign", async () => {
    const policy = scratchDir(dirs);
    execFileSync("mkfifo", [join(policy, "policy.yaml")]);
    await refused(["build", policy], join(policy, "policy.yaml"), /is a FIFO/);

    const imports = scratchDir(dirs);
    mkdirSync(join(imports, "src"));
    writeFileSync(join(imports, "policy.yaml"), "bundle: pipes\nversion: 1.0.0\ntrust: deployment\nhooks:\n  - { name: h, type: pre_inject, action: run, priority: 50, timeout_ms: 1000 }\n");
    writeFileSync(join(imports, "src", "index.ts"), 'export { run } from "./pipe.js";\n');
    execFileSync("mkfifo", [join(imports, "src", "pipe.ts")]);
    await refused(["build", imports], realpathSync(join(imports, "src", "pipe.ts")), /is a FIFO/);

    const vcpb = join(scratchDir(dirs), "pipe.vcpb");
    execFileSync("mkfifo", [vcpb]);
    writeFileSync(join(policy, "..", "keyring.yaml"), "keys: []\n");
    await refused(["sign", vcpb, "--key", join(policy, "..", "keyring.yaml"), "--key-id", "k"], vcpb, /is a FIFO/);
  }, 120_000);
});

describe("hooks list --format repo-yaml", () => {
  test("--bundle: a .system/hooks/ directory and a .vcpb print the registration JSON, handlers as the YAML wrote them, in run order", async () => {
    const out = scratchDir(dirs);
    const built = await cli(["build", "--from", "repo-yaml", FIXTURE, "--name", "fixture-hooks", "-o", join(out, "f.vcpb")]);
    expect(built.code).toBe(0);
    const run = await cli(["hooks", "list", "--format", "repo-yaml", "--bundle", join(out, "f.vcpb"), "--bundle", "policies/repo-yaml-hooks", "--bundle", "policies/gemini-safe-shell"], { timeoutMs: 120_000 });
    expect(run.stderr).toContain("gemini-safe-shell: profile gemini-cli, not repo-yaml");
    expect(run.code).toBe(0);
    // Within a profile plan, equal priorities keep registration order: the fixture's bundle was installed first.
    expect(JSON.parse(run.stdout)).toEqual({
      UserPromptSubmit: [{ id: "prompt_log", handler: { kind: "action", module: "handlers/docs.ts", export: "logPrompt" } }],
      PreAbilityCall: [
        { id: "scope_guard", handler: { kind: "action", module: "handlers/guard.ts", export: "guardScope" } },
        { id: "ability_scope_guard", handler: { kind: "action", bundle: "repo-yaml-hooks", export: "guardAbilityScope" } },
      ],
      PostAbilityCall: [
        { id: "suggest_docs", handler: { kind: "action", module: "handlers/docs.ts", export: "suggestDocs" } },
        { id: "suggest_billing_runbook", handler: { kind: "action", bundle: "repo-yaml-hooks", export: "suggestBillingRunbook" } },
      ],
    });
    // The directory itself works too; two bundles of one name are refused (one would replace the other).
    const clash = await cli(["hooks", "list", "--format", "repo-yaml", "--bundle", FIXTURE, "--bundle", "policies/repo-yaml-hooks"], { timeoutMs: 120_000 });
    expect(clash.code).toBe(1);
    expect(clash.stderr).toContain("are both bundle 'repo-yaml-hooks'");
  }, 180_000);

  test("--server: the running deployment's plans in run order (repo-yaml: priority, then registration order), disabled hooks left out", async () => {
    const runtime = await createRuntime({ backend: createVmBackend(), audit: false });
    const server = await createServer({
      runtime,
      settings: { auth: [{ id: "ops", role: "operator", token_sha256: sha256("op-token-hooks-0123456789") }], limits: { body_bytes: 65536, bundle_bytes: 262144 }, sessionHookAllowlist: [] },
    });
    try {
      await runtime.bundles.install(
        profileBundle("repo-a", "repo-yaml", [
          { name: "first", event: "PreAbilityCall", priority: 10 },
          { name: "off", event: "PreAbilityCall", enabled: false },
          { name: "track", event: "PostAbilityCall" },
        ], { first: "() => ({})", off: "() => ({})", track: "() => ({})" }),
      );
      await runtime.bundles.install(profileBundle("repo-b", "repo-yaml", [{ name: "second", event: "PreAbilityCall", priority: 90 }], { second: "() => ({})" }));
      const url = await server.listen("127.0.0.1", 0);
      const run = await cli(["hooks", "list", "--format", "repo-yaml", "--server", url, "--token", "op-token-hooks-0123456789"]);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toEqual({
        PreAbilityCall: [
          // Priority first (PROFILES §8.5): repo-b's 90 runs before repo-a's 10 although registered later.
          { id: "second", handler: { kind: "action", bundle: "repo-b" } },
          { id: "first", handler: { kind: "action", bundle: "repo-a" } },
        ],
        PostAbilityCall: [{ id: "track", handler: { kind: "action", bundle: "repo-a" } }],
      });
      const usage = await cli(["hooks", "list", "--format", "json", "--server", url]);
      expect(usage.code).toBe(2);
      expect(usage.stderr).toContain("the only format is repo-yaml");
    } finally {
      await server.close();
      await runtime.close();
    }
  }, 60_000);
});
