// `vcp-hooks init --profile <id>` scaffolds a policy whose own test passes with `vcp-hooks test` as
// generated — for profiles whose events need more than a session id (Claude Code and Codex PreToolUse
// need the tool call; Codex needs its turn fields): the test input is one the profile accepts.
import { join } from "node:path";
import { readFileSync } from "node:fs";
import { afterAll, describe, expect, test } from "vitest";
import { cleanup, cli, scratchDir } from "./helpers.js";

const dirs: string[] = [];
afterAll(() => cleanup(dirs));

describe("init --profile → vcp-hooks test passes as generated", () => {
  const work = scratchDir(dirs);
  test.each([
    ["claude-code", "PreToolUse"],
    ["codex", "PreToolUse"],
  ] as const)("%s %s", async (profile, event) => {
    const dir = join(work, `${profile}-${event}`.toLowerCase());
    const init = await cli(["init", dir, "--profile", profile, "--event", event]);
    expect(init.code, init.stderr).toBe(0);
    const cases = readFileSync(join(dir, "tests", "example.yaml"), "utf8");
    expect(cases).not.toContain("NOTE: fill in the input");
    const run = await cli(["test", dir], { timeoutMs: 120_000 });
    expect(run.stdout + run.stderr).toContain(`✓ the scaffolded hook answers ${profile}'s neutral answer`);
    expect(run.code, run.stdout + run.stderr).toBe(0);
  }, 180_000);
});
