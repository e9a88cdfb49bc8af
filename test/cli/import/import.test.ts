// Importers (PROFILES §7): one real-world-shaped configuration per format, converted and compared with
// golden files (absolute paths normalized). Regenerate after a deliberate change with
// UPDATE_GOLDEN=1 node_modules/.bin/node node_modules/vitest/vitest.mjs run test/cli/import
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { importCommand } from "../../../src/cli/import.js";
import { importSettingsJson } from "../../../src/tooling/import/settings-json.js";
import type { Io } from "../../../src/cli/common.js";

const FIXTURES = resolve("test/cli/import/fixtures");
const GOLDEN = resolve("test/cli/import/golden");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function scratch(): string {
  const d = mkdtempSync(join(tmpdir(), "vcp-import-"));
  dirs.push(d);
  return d;
}

async function runImport(args: string[]): Promise<{ code: number; out: string[] }> {
  const out: string[] = [];
  const io: Io = { json: false, out: (t) => out.push(t), err: (t) => out.push(t) };
  const home = process.env["HOME"];
  process.env["HOME"] = "/home/user"; // ~ expansion is part of the output
  try {
    return { code: await importCommand.run(args, io), out };
  } finally {
    process.env["HOME"] = home;
  }
}

function listFiles(root: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else found.push(relative(root, join(d, e.name)));
    }
  };
  walk(root);
  return found.sort();
}

const CASES: Array<[string, string[], number]> = [
  ["claude", ["claude", `${FIXTURES}/claude/project/.claude/settings.json`], 1],
  ["claude-to-gemini", ["claude", `${FIXTURES}/claude/project/.claude/settings.json`, "--to", "gemini-cli"], 1],
  ["gemini", ["gemini", `${FIXTURES}/gemini/project/.gemini/settings.json`], 1],
  ["llxprt", ["llxprt", `${FIXTURES}/llxprt/project/.llxprt/settings.json`], 0],
  ["codex", ["codex", `${FIXTURES}/codex/project/.codex/hooks.json`], 1],
  ["codex-toml", ["codex", `${FIXTURES}/codex/toml/.codex/config.toml`], 0],
  ["vscode", ["vscode", `${FIXTURES}/vscode/repo/.github/hooks/guard.json`], 1],
  ["cursor", ["cursor", `${FIXTURES}/cursor/project/.cursor/hooks.json`], 1],
  ["openhands", ["openhands", `${FIXTURES}/openhands/project/.openhands/hooks.json`], 0],
  ["goose", ["goose", `${FIXTURES}/goose/plugin/hooks/hooks.json`], 0],
  ["ai-memory", ["ai-memory", `${FIXTURES}/ai-memory/hooks.toml`], 1],
  ["repo-yaml", ["repo-yaml", `${FIXTURES}/repo-yaml/repo/.system/hooks`], 1],
];

describe("golden files", () => {
  test.each(CASES)("%s", async (name, args, exitCode) => {
    const out = join(scratch(), "out");
    const marker = join(scratch(), "ran");
    process.env["VCP_IMPORT_MARKER"] = marker;
    const r = await runImport([...args, "-o", out]);
    expect(r.code, r.out.join("\n")).toBe(exitCode);
    // Import executes nothing: the fixture script that would create the marker never ran.
    expect(existsSync(marker)).toBe(false);
    const files = listFiles(out);
    const golden = join(GOLDEN, name);
    if (process.env["UPDATE_GOLDEN"]) {
      rmSync(golden, { recursive: true, force: true });
      for (const f of files) {
        mkdirSync(join(golden, f, ".."), { recursive: true });
        writeFileSync(join(golden, f), readFileSync(join(out, f), "utf8").replaceAll(FIXTURES, "<FIXTURES>"));
      }
    }
    expect(files).toEqual(listFiles(golden));
    for (const f of files) expect(readFileSync(join(out, f), "utf8").replaceAll(FIXTURES, "<FIXTURES>"), f).toBe(readFileSync(join(golden, f), "utf8"));
  });
});

describe("conversions a user relies on", () => {
  test("claude: the agent settings send each imported event through the adapter, onFailure block on the guard events (issue 24)", async () => {
    const out = join(scratch(), "out");
    await runImport(["claude", `${FIXTURES}/claude/project/.claude/settings.json`, "-o", out]);
    const settings = JSON.parse(readFileSync(join(out, "claude-settings.json"), "utf8")) as { hooks: Record<string, Array<{ matcher?: string; hooks: Array<Record<string, unknown>> }>> };
    expect(settings.hooks["PreToolUse"]).toEqual([{ matcher: "*", hooks: [{ type: "command", command: "vcp-hooks hook PreToolUse --dialect claude", timeout: 15, onFailure: "block" }] }]);
    // Not a guard event: Claude Code's default (the failure is reported, the action goes ahead).
    expect(settings.hooks["PostToolUse"]![0]!.hooks[0]).not.toHaveProperty("onFailure");
    const gemini = join(scratch(), "out");
    await runImport(["claude", `${FIXTURES}/claude/project/.claude/settings.json`, "--to", "gemini-cli", "-o", gemini]);
    const g = JSON.parse(readFileSync(join(gemini, "gemini-settings.json"), "utf8")) as { hooks: Record<string, Array<{ hooks: Array<Record<string, unknown>> }>> };
    // Gemini CLI has no onFailure: there the adapter's own --on-error auto blocks.
    expect(g.hooks["BeforeTool"]![0]!.hooks[0]).toEqual({ type: "command", name: "vcp-hooks", command: "vcp-hooks hook BeforeTool --dialect gemini", timeout: 15000 });
  });

  test("claude → gemini-cli: events, tool names, anchored matchers, seconds → ms", async () => {
    const out = join(scratch(), "out");
    await runImport(["claude", `${FIXTURES}/claude/project/.claude/settings.json`, "--to", "gemini-cli", "-o", out]);
    const policy = readFileSync(join(out, "exec/policy.yaml"), "utf8");
    expect(policy).toContain("event: BeforeTool");
    expect(policy).toContain("matcher: ^(?:run_shell_command)$");
    expect(policy).toContain("matcher: ^(?:replace|write_file)$");
    expect(policy).toContain("timeout_ms: 10000");
    const report = readFileSync(join(out, "report.md"), "utf8");
    expect(report).toContain("timeout 10 s → 10000 ms");
    expect(report).toContain("$CLAUDE_PROJECT_DIR expanded to");
    expect(report).toMatch(/mcp__\(\?!github\)\.\*' is not a regex RE2 can compile/);
    expect(report).toContain("SubagentStop has no gemini-cli equivalent");
  });

  test("ai-memory: 30 000 ms cap, fail_mode closed, priorities rescaled in order", async () => {
    const out = join(scratch(), "out");
    await runImport(["ai-memory", `${FIXTURES}/ai-memory/hooks.toml`, "-o", out]);
    const report = readFileSync(join(out, "report.md"), "utf8");
    expect(report).toContain("timeout_ms 45000 ms capped at 30000 ms");
    expect(report).toContain("fail_closed: true");
    expect(report).toContain("unknown ai-memory event 'pre_destroy'");
  });
});

describe("the environment a migrated script reads (issue 26 item 3)", () => {
  test("each variable the lane will not provide is a warning naming the script and the variable; the agent's hook variables and env_allow are not", async () => {
    const project = scratch();
    mkdirSync(join(project, ".claude/hooks"), { recursive: true });
    const audit = join(project, ".claude/hooks/audit-log.sh");
    writeFileSync(audit, '#!/bin/sh\ninput=$(cat)\nlog="${AUDIT_DIR:-/tmp}/audit.log"\nprintf \'%s %s\\n\' "$CLAUDE_PROJECT_DIR" "$HOME" >> "$log"\nfor f in $input; do :; done\necho "$IFS$PWD$1$input" >/dev/null\n', { mode: 0o755 });
    const node = join(project, ".claude/hooks/notify.mjs");
    writeFileSync(node, '#!/usr/bin/env node\nconst url = process.env.SLACK_WEBHOOK_URL ?? process.env["FALLBACK_URL"];\nconst dir = process.env.CLAUDE_PROJECT_DIR;\n// "$NOT_SHELL" in a JS string is not a shell read\n', { mode: 0o755 });
    writeFileSync(join(project, ".claude/settings.json"), JSON.stringify({
      hooks: {
        PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: `${audit}` }] }],
        Stop: [{ hooks: [{ type: "command", command: `${node}` }, { type: "command", command: "echo \"$DEPLOY_ENV\" >> /tmp/stop.log" }] }],
      },
    }));
    const out = join(scratch(), "out");
    const r = await runImport(["claude", join(project, ".claude/settings.json"), "-o", out]);
    const warnings = r.out.filter((l) => l.startsWith("  warning"));
    expect(warnings).toEqual([
      expect.stringMatching(new RegExp(`^  warning pretooluse-bash: ${audit} reads \\$AUDIT_DIR, which the command lane does not provide: there it is unset \\(the lane passes PATH, HOME, LANG, CLAUDE_PROJECT_DIR, `)),
      expect.stringContaining(`${node} reads $FALLBACK_URL, which the command lane does not provide`),
      expect.stringContaining(`${node} reads $SLACK_WEBHOOK_URL, which the command lane does not provide`),
      expect.stringContaining("the shell string reads $DEPLOY_ENV, which the command lane does not provide"),
    ]);
    const report = readFileSync(join(out, "report.md"), "utf8");
    expect(report).toContain(`**check**: ${audit} reads $AUDIT_DIR`);
    expect(report).not.toContain("reads $CLAUDE_PROJECT_DIR");
    expect(report).not.toContain("reads $HOME");
    expect(report).not.toContain("$NOT_SHELL");
  });
});

describe("hostile and broken input", () => {
  test("a hook name with ../ stays inside -o", async () => {
    const root = scratch();
    const out = join(root, "out");
    await runImport(["gemini", `${FIXTURES}/gemini/project/.gemini/settings.json`, "-o", out]);
    expect(readdirSync(root)).toEqual(["out"]);
    expect(readdirSync(join(out, "stubs"))).toContain("escape");
  });

  test("-o that is not empty, or a symlink, is refused and left untouched", async () => {
    const root = scratch();
    writeFileSync(join(root, "keep.txt"), "mine");
    await expect(runImport(["llxprt", `${FIXTURES}/llxprt/project/.llxprt/settings.json`, "-o", root])).rejects.toThrow(/not empty/);
    expect(readdirSync(root)).toEqual(["keep.txt"]);
    const link = join(scratch(), "link");
    symlinkSync(root, link);
    await expect(runImport(["llxprt", `${FIXTURES}/llxprt/project/.llxprt/settings.json`, "-o", link])).rejects.toThrow(/not a directory/);
  });

  test("a command with a newline, a missing script and a non-JSON file are refused with the reason", async () => {
    const root = scratch();
    const cfg = join(root, "settings.json");
    writeFileSync(cfg, JSON.stringify({ hooks: { BeforeTool: [{ hooks: [{ type: "command", command: "/bin/true\n# forged line" }, { type: "command", command: "/nope/missing.sh" }] }] } }));
    const out = join(root, "out");
    const r = await runImport(["gemini", cfg, "-o", out]);
    expect(r.code).toBe(1);
    const report = readFileSync(join(out, "report.md"), "utf8");
    expect(report).toContain("control characters");
    expect(report).toContain("/nope/missing.sh does not exist");
    expect(report).not.toMatch(/^# forged line/m);
    writeFileSync(cfg, "{ not json");
    await expect(runImport(["gemini", cfg, "-o", join(root, "out2")])).rejects.toThrow(/is not JSON/);
    expect(existsSync(join(root, "out2"))).toBe(false);
  });
});

describe("the generated exec bundle", () => {
  test.each(CASES)("%s: every exec hook passes the install gate (validateExecHook) for a signed system bundle", async (_name, args) => {
    const { parse } = await import("yaml");
    const { validateExecHook } = await import("../../../src/bundle/exec-hook.js");
    const out = join(scratch(), "out");
    await runImport([...args, "-o", out]);
    const manifest = parse(readFileSync(join(out, "exec/policy.yaml"), "utf8")) as { trust: string; hooks: unknown[] };
    expect(manifest.trust).toBe("system");
    manifest.hooks.forEach((h, i) => validateExecHook(h, i, { trust: "system", signed: true, scope: "deployment", config: { enabled: true, shell: true } }));
  });
});

test("claude: a hook on any of Claude Code 2.1.332's events imports (PostToolBatch, FileChanged …); an unknown event is refused", () => {
  const settings = {
    hooks: {
      PostToolBatch: [{ hooks: [{ type: "command", command: "/usr/bin/true" }] }],
      FileChanged: [{ matcher: ".envrc|.env", hooks: [{ type: "command", command: "/usr/bin/true" }] }],
      PermissionDenied: [{ matcher: "Bash", hooks: [{ type: "command", command: "/usr/bin/true" }] }],
      BeforeEverything: [{ hooks: [{ type: "command", command: "/usr/bin/true" }] }],
    },
  };
  const ctx = { source: "settings.json", projectDir: "/p", home: "/home/user", readFile: () => ({ bytes: new Uint8Array(), executable: true }) };
  const result = importSettingsJson(JSON.stringify(settings), "claude", undefined, ctx);
  expect(result.hooks.map((h) => h.event)).toEqual(["PostToolBatch", "FileChanged", "PermissionDenied"]);
  expect(result.refused).toEqual([{ at: "hooks.BeforeEverything", why: "unknown claude event 'BeforeEverything'" }]);
});
