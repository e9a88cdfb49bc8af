// docs/drop-in.md, "Drop-in for agents" (issue 24; moved from the README): the Claude Code settings it shows fail closed on the guard
// events (`"onFailure": "block"` on PreToolUse, command and http hooks alike), and every row of its
// failure table is backed by tests that exist — each named file, and each quoted title in one of the
// row's files.
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, test } from "vitest";

// The whole page up to its first second-level heading: the settings blocks and the failure table.
const page = readFileSync(resolve("docs/drop-in.md"), "utf8");
const section = page.split("\n## ")[0]!;

describe("docs/drop-in.md: Drop-in for agents", () => {
  test("the Claude settings block on failure: every PreToolUse hook, command and http, has onFailure block", () => {
    const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!) as { hooks: Record<string, Array<{ hooks: Array<Record<string, unknown>> }>> });
    const claude = blocks.filter((b) => b.hooks["PreToolUse"] !== undefined);
    const types = claude.flatMap((b) => b.hooks["PreToolUse"]!.flatMap((g) => g.hooks.map((h) => h["type"])));
    expect(types.sort()).toEqual(["command", "http"]);
    for (const b of claude) for (const g of b.hooks["PreToolUse"]!) for (const h of g.hooks) expect(h["onFailure"], JSON.stringify(h)).toBe("block");
  });

  test("the failure table has one row per agent, each backed by tests that exist", () => {
    const rows = section.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| agent") && !l.startsWith("|---"));
    const agents = rows.map((r) => r.split("|")[1]!.trim().split(" (")[0]);
    expect(agents).toEqual(["Gemini CLI", "LLxprt", "Claude Code, command hook", "Claude Code, http hook", "ai-memory", "repo-yaml", "Codex 0.171, command hook", "VS Code agent hooks, command hook", "Cursor, command hook", "OpenHands agent SDK, command hook", "goose, plugin command hook", "Amplifier"]);
    for (const row of rows) {
      const tests = row.split("|").at(-2)!;
      const files = [...tests.matchAll(/`(test\/[^`]+\.ts)`/g)].map((m) => m[1]!);
      const titles = [...tests.matchAll(/"([^"]+)"/g)].map((m) => m[1]!);
      // A row the server's tests back (issue 24 item 1, another branch) names them in words.
      if (files.length === 0) {
        expect(tests, row).toMatch(/server's guard-contract tests/);
        continue;
      }
      for (const f of files) expect(existsSync(resolve(f)), f).toBe(true);
      const text = files.map((f) => readFileSync(resolve(f), "utf8")).join("\n");
      for (const t of titles) expect(text.includes(t), `${t} (${files.join(", ")})`).toBe(true);
    }
  });
});
