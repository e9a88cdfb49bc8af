// The example policies of spec §9 and of the agent profiles (policies/*): every case of `vcp-hooks test policies/*` passes
// through the real sandbox, every hook is covered, and the policies type-check against the author types.
import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { expect, test } from "vitest";
import { cli } from "./helpers.js";

const POLICIES = readdirSync("policies")
  .map((name) => join("policies", name))
  .filter((p) => statSync(p).isDirectory())
  .sort();

// The six VCP examples of spec §9 and the agent-profile examples (PROFILES §3.2–§3.6, issue 26).
const EXPECTED = [
  "ai-memory-guard",
  "amplifier-guard",
  "audit-selection",
  "claude-safe-shell",
  "codex-safe-shell",
  "cursor-safe-shell",
  "gemini-safe-shell",
  "goose-safe-shell",
  "llxprt-safe-shell",
  "mode-change-notice",
  "openhands-safe-shell",
  "org-conflict-resolver",
  "repo-yaml-hooks",
  "staleness-check",
  "strip-pii",
  "violation-retry",
  "vscode-safe-shell",
];

test("policies/ holds the six examples of spec §9 and the agent-profile examples", () => {
  expect(POLICIES.map((p) => p.split("/")[1])).toEqual(EXPECTED);
});

test("vcp-hooks test policies/* passes every case, with at least 3 per policy and every hook covered", async () => {
  const run = await cli(["test", ...POLICIES, "--json"], { timeoutMs: 120_000 });
  expect(run.stderr).toContain("signatures not required");
  const report = JSON.parse(run.stdout) as {
    ok: boolean;
    summary: { failed: number; cases: number };
    policies: Array<{ bundle: string; passed: boolean; error?: string; uncovered_hooks: string[]; cases: Array<{ name: string; passed: boolean; mismatches: unknown[]; error?: string }> }>;
  };
  const failures = report.policies.flatMap((p) => [
    ...(p.error ? [`${p.bundle}: ${p.error}`] : []),
    ...p.cases.filter((c) => !c.passed).map((c) => `${p.bundle} / ${c.name}: ${c.error ?? JSON.stringify(c.mismatches)}`),
  ]);
  expect(failures).toEqual([]);
  expect(run.code).toBe(0);
  expect(report.ok).toBe(true);
  expect(report.policies.map((p) => p.bundle).sort()).toEqual(EXPECTED);
  for (const p of report.policies) {
    expect(p.cases.length, p.bundle).toBeGreaterThanOrEqual(3);
    expect(p.uncovered_hooks, p.bundle).toEqual([]);
  }
}, 120_000);

test("the policies type-check against the vcp-hooks author types (tsc -p policies/tsconfig.json)", () => {
  const tsc = resolve("node_modules/typescript/bin/tsc");
  // Throws with tsc's diagnostics on stdout when a policy does not type-check.
  execFileSync(process.execPath, [tsc, "-p", "policies/tsconfig.json", "--noEmit"], { encoding: "utf8" });
}, 60_000);
