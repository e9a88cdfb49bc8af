// The event-profile workflow through the built CLI: init --profile → test → fire --profile, with the
// toy echo profile loaded by --profile-module (test/support/echo-profile.ts; Node strips its types).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { cleanup, cli, scratchDir } from "./helpers.js";

const dirs: string[] = [];
afterAll(() => cleanup(dirs));
const ECHO = resolve("test/support/echo-profile.ts");

describe("init --profile claude-code: the agent's settings beside the policy (issue 24)", () => {
  const work = scratchDir(dirs);
  test.each([
    ["PreToolUse", { onFailure: "block" }],
    ["PermissionRequest", { onFailure: "block" }],
    ["PostToolUse", {}],
  ] as const)("%s", async (event, extra) => {
    const dir = join(work, event.toLowerCase());
    const init = await cli(["init", dir, "--profile", "claude-code", "--event", event]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`merge ${dir}/claude-settings.json into ~/.claude/settings.json`);
    const settings = JSON.parse(readFileSync(join(dir, "claude-settings.json"), "utf8")) as unknown;
    expect(settings).toEqual({ hooks: { [event]: [{ matcher: "*", hooks: [{ type: "command", command: `vcp-hooks hook ${event} --dialect claude`, timeout: 15, ...extra }] }] } });
  });
});

describe("init --profile codex: Codex's hooks.json beside the policy", () => {
  const work = scratchDir(dirs);
  test("PreToolUse", async () => {
    const dir = join(work, "codex");
    const init = await cli(["init", dir, "--profile", "codex", "--event", "PreToolUse"]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`merge ${dir}/codex-hooks.json into ~/.codex/hooks.json`);
    const hooks = JSON.parse(readFileSync(join(dir, "codex-hooks.json"), "utf8")) as unknown;
    // Codex has no switch of its own that blocks on a failed hook: the adapter's --on-error auto does.
    expect(hooks).toEqual({ hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: "vcp-hooks hook PreToolUse --dialect codex", timeout: 15 }] }] } });
  });
});

describe("init --profile vscode: a VS Code hook file beside the policy", () => {
  const work = scratchDir(dirs);
  test("PreToolUse", async () => {
    const dir = join(work, "vscode");
    const init = await cli(["init", dir, "--profile", "vscode", "--event", "PreToolUse"]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`merge ${dir}/vscode-hooks.json into a VS Code hook file`);
    // VS Code lists an event's hooks directly, timeout in seconds.
    expect(JSON.parse(readFileSync(join(dir, "vscode-hooks.json"), "utf8"))).toEqual({ hooks: { PreToolUse: [{ type: "command", command: "vcp-hooks hook PreToolUse --dialect vscode", timeout: 15 }] } });
  });
});

describe("init --profile cursor: Cursor's hooks.json beside the policy, failClosed on the guard events", () => {
  const work = scratchDir(dirs);
  test.each([
    ["beforeShellExecution", { failClosed: true }],
    ["afterFileEdit", {}],
  ] as const)("%s", async (event, extra) => {
    const dir = join(work, event);
    const init = await cli(["init", dir, "--profile", "cursor", "--event", event]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`merge ${dir}/cursor-hooks.json into ~/.cursor/hooks.json`);
    expect(JSON.parse(readFileSync(join(dir, "cursor-hooks.json"), "utf8"))).toEqual({ version: 1, hooks: { [event]: [{ command: `vcp-hooks hook ${event} --dialect cursor`, timeout: 15, ...extra }] } });
  });
});

describe("init --profile openhands: OpenHands' hooks.json beside the policy", () => {
  const work = scratchDir(dirs);
  test("PreToolUse", async () => {
    const dir = join(work, "openhands");
    const init = await cli(["init", dir, "--profile", "openhands", "--event", "PreToolUse"]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`merge ${dir}/openhands-hooks.json into ~/.openhands/hooks.json`);
    expect(JSON.parse(readFileSync(join(dir, "openhands-hooks.json"), "utf8"))).toEqual({ hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: "vcp-hooks hook PreToolUse --dialect openhands", timeout: 15 }] }] } });
  });
});

describe("init --profile goose: a plugin hooks.json, no matcher (goose's is a regex), on_failure block on PreToolUse", () => {
  const work = scratchDir(dirs);
  test("PreToolUse", async () => {
    const dir = join(work, "goose");
    const init = await cli(["init", dir, "--profile", "goose", "--event", "PreToolUse"]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`merge ${dir}/goose-hooks.json into ~/.agents/plugins/vcp-hooks/hooks/hooks.json`);
    expect(JSON.parse(readFileSync(join(dir, "goose-hooks.json"), "utf8"))).toEqual({ hooks: { PreToolUse: [{ hooks: [{ type: "command", command: "vcp-hooks hook PreToolUse --dialect goose", timeout: 15, on_failure: "block" }] }] } });
  });
});

describe("init --profile copilot: a ~/.copilot/hooks file, bash command, timeoutSec, no failing-hook switch", () => {
  const work = scratchDir(dirs);
  test("preToolUse", async () => {
    const dir = join(work, "copilot");
    const init = await cli(["init", dir, "--profile", "copilot", "--event", "preToolUse"]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain(`merge ${dir}/copilot-hooks.json into ~/.copilot/hooks/vcp-hooks.json`);
    expect(JSON.parse(readFileSync(join(dir, "copilot-hooks.json"), "utf8"))).toEqual({ version: 1, hooks: { preToolUse: [{ type: "command", bash: "vcp-hooks hook preToolUse --dialect copilot", timeoutSec: 15 }] } });
  });
});

describe("init --profile → test → fire --profile", () => {
  const work = scratchDir(dirs);
  const policy = join(work, "notice-policy");

  test("init --profile scaffolds a profile policy that passes its own test", async () => {
    const init = await cli(["init", policy, "--profile", "echo", "--event", "Notice", "--profile-module", ECHO]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toContain("one echo Notice hook");
    const run = await cli(["test", policy, "--profile-module", ECHO], { timeoutMs: 120_000 });
    expect(run.stdout + run.stderr).toContain("✓ the scaffolded hook answers echo's neutral answer");
    expect(run.code, run.stdout + run.stderr).toBe(0);
  }, 180_000);

  test("test reports a native mismatch; fire --profile prints the trace and the merged native answer", async () => {
    const dir = join(work, "guard");
    mkdirSync(join(dir, "src"), { recursive: true });
    mkdirSync(join(dir, "tests"), { recursive: true });
    writeFileSync(
      join(dir, "policy.yaml"),
      "bundle: guard\nversion: 1.0.0\nprofile: echo\ntrust: deployment\nhooks:\n  - { name: no_rm, event: Check, matcher: '^rm$', action: noRm, priority: 60, timeout_ms: 1000 }\n  - { name: note, event: Check, action: note, priority: 50, timeout_ms: 1000 }\n",
    );
    writeFileSync(join(dir, "src", "index.ts"), "export function noRm() { return { decision: 'block', reason: 'no rm' }; }\nexport function note(input: { tool: string }) { return { message: 'saw ' + input.tool }; }\n");
    writeFileSync(
      join(dir, "tests", "cases.yaml"),
      "defaults: { event: Check }\ncases:\n  - name: rm is blocked\n    input: { tool: rm }\n    expect: { native: { decision: block, reason: 'no rm', message: 'saw rm' }, exit_code: 2, hooks: { no_rm: { verdict: block } } }\n  - name: wrong on purpose\n    input: { tool: ls }\n    expect: { exit_code: 2 }\n",
    );
    const run = await cli(["test", dir, "--profile-module", ECHO], { timeoutMs: 120_000 });
    expect(run.code).toBe(1);
    expect(run.stdout).toContain("✓ rm is blocked");
    expect(run.stdout).toContain("✗ wrong on purpose");
    expect(run.stdout).toContain("exit_code");

    const fire = await cli(["fire", "--profile", "echo", "Check", "--bundle", dir, "--input", '{"tool":"rm"}', "--profile-module", ECHO], { timeoutMs: 120_000 });
    expect(fire.code, fire.stderr).toBe(0);
    expect(fire.stdout).toMatch(/echo Check chain \w+: exit 2 \(parallel, blocked by no_rm\)/);
    expect(fire.stdout).toContain("native answer (exit 2):");
    expect(fire.stdout).toContain('"reason": "no rm"');
    const json = await cli(["fire", "--profile", "echo", "Check", "--bundle", dir, "--input", '{"tool":"ls"}', "--profile-module", ECHO, "--json"], { timeoutMs: 120_000 });
    expect(json.code, json.stderr).toBe(0);
    const out = JSON.parse(json.stdout);
    expect(out).toMatchObject({ native: { message: "saw ls" }, exit_code: 0 });
    expect(out.result.hook_results.map((h: { outcome: string }) => h.outcome)).toEqual(["skipped_matcher", "ok"]);
    const bad = await cli(["fire", "--profile", "echo", "Nope", "--bundle", dir, "--input", "{}", "--profile-module", ECHO]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("has no event 'Nope'");
  }, 300_000);
});
