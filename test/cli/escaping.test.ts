// Guest- and input-controlled text in human CLI output: a hook's logs, reasons, annotations and
// errors, and a test file's case names, never reach the terminal as raw control characters (an ESC
// sequence can clear the screen, rewrite earlier lines or set the clipboard through OSC 52; U+009B
// is a one-character CSI). JSON output stays valid JSON carrying the original strings.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { cleanup, cli, scratchDir } from "./helpers.js";

const dirs: string[] = [];
let policy: string;

// Built at run time so this file itself holds no raw control characters.
const ESC = String.fromCharCode(0x1b);
const CSI = String.fromCharCode(0x9b);
const DEL = String.fromCharCode(0x7f);
const BEL = String.fromCharCode(0x07);
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const HOOK_SOURCE = `
const ESC = String.fromCharCode(0x1b), CSI = String.fromCharCode(0x9b), DEL = String.fromCharCode(0x7f), BEL = String.fromCharCode(0x07);
export function loud(input) {
  vcp.log("warn", "log " + ESC + "[2J" + ESC + "]52;c;ZXZpbA==" + BEL + " end", { f: CSI + "31m" + DEL });
  return {
    status: "abort",
    reason: "reason " + ESC + "[1A" + ESC + "[2K\\n  forged line " + CSI + "0m",
    annotations: { note: "ann " + CSI + "2J" + DEL },
  };
}
export function boom(input) {
  throw new Error("thrown " + ESC + "]0;pwned" + BEL);
}
`;

const POLICY_YAML = `bundle: loud-policy
version: 1.0.0
description: writes terminal escape sequences into every text field it controls
trust: deployment
entry: src/index.js
hooks:
  - name: loud_hook
    type: pre_inject
    action: loud
    priority: 10
    timeout_ms: 2000
  - name: boom_hook
    type: pre_inject
    action: boom
    priority: 20
    timeout_ms: 2000
`;

// YAML "\\e" is ESC: the case name and an expected value come from the test file.
const TESTS_YAML = `defaults:
  type: pre_inject
  input:
    constitution: { id: c, version: "1", rules: [ { id: r1, text: be kind } ] }
    event: { injection_target: system, injection_format: system_prompt, raw_constitution: be kind }
cases:
  - name: "case \\e[2J name \\u009b31m"
    input:
      context: { topic: x }
    expect:
      status: completed
`;

const INPUT = {
  context: { topic: "x" },
  constitution: { id: "c", version: "1", rules: [{ id: "r1", text: "be kind" }] },
  event: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "be kind" },
};

beforeAll(() => {
  const work = scratchDir(dirs);
  policy = join(work, "loud-policy");
  mkdirSync(join(policy, "src"), { recursive: true });
  mkdirSync(join(policy, "tests"), { recursive: true });
  writeFileSync(join(policy, "policy.yaml"), POLICY_YAML);
  writeFileSync(join(policy, "src", "index.js"), HOOK_SOURCE);
  writeFileSync(join(policy, "tests", "loud.yaml"), TESTS_YAML);
});
afterAll(() => cleanup(dirs));

describe("terminal escapes in human CLI output", () => {
  test("fire: logs, reason, annotations and errors are printed with control characters spelled out", async () => {
    const run = await cli(["fire", "pre_inject", "--bundle", policy, "--input", "-"], { input: JSON.stringify(INPUT) });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(run.stderr).not.toMatch(RAW_CONTROL);
    expect(run.stdout).toContain("log \\x1b[2J\\x1b]52;c;ZXZpbA==\\x07 end");
    expect(run.stdout).toContain("reason \\x1b[1A\\x1b[2K\\n  forged line \\x9b0m");
    // The guest's "\n" does not start a line of the report.
    expect(run.stdout.split("\n").some((l) => l.startsWith("  forged line"))).toBe(false);
    expect(run.stdout).toContain("\\x9b2J\\x7f");
    expect(run.stdout).toContain("\\x9b31m\\x7f");
  });

  test("fire --json: valid JSON with the guest's strings intact, DEL and C1 as \\u escapes", async () => {
    const run = await cli(["fire", "pre_inject", "--bundle", policy, "--input", "-", "--json"], { input: JSON.stringify(INPUT) });
    expect(run.code).toBe(0);
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(run.stdout).toContain("\\u009b2J\\u007f");
    const out = JSON.parse(run.stdout) as { result: { reason: string; hook_results: Array<{ hook: string; error?: string; annotations?: { note?: string } }> } };
    expect(out.result.reason).toContain(`${ESC}[1A`);
    expect(out.result.hook_results.find((h) => h.hook === "loud_hook")?.annotations?.note).toBe(`ann ${CSI}2J${DEL}`);
    expect(out.result.hook_results.find((h) => h.hook === "boom_hook")?.error).toContain(`${ESC}]0;pwned${BEL}`);
  });

  test("test: case names from the test file and guest reasons and logs are escaped", async () => {
    const run = await cli(["test", policy]);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toMatch(RAW_CONTROL);
    expect(run.stderr).not.toMatch(RAW_CONTROL);
    expect(run.stdout).toContain("case \\x1b[2J name \\x9b31m");
    expect(run.stdout).toContain("log \\x1b[2J");
  });
});
