import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import type { ChainResult } from "../../../src/index.js";
import { prepareChainInput } from "../../../src/cli/local.js";
import { checkResult, loadTestCases } from "../../../src/cli/test-cases.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function policyWithTests(yaml: string): string {
  const d = mkdtempSync(join(tmpdir(), "vcp-cases-"));
  dirs.push(d);
  mkdirSync(join(d, "tests"));
  writeFileSync(join(d, "tests", "a.yaml"), yaml);
  return d;
}

const RESULT: ChainResult = {
  chain_id: "c1",
  type: "pre_inject",
  status: "aborted",
  reason: "topic 'x' is blocked by policy",
  aborted_by: "check",
  context: { topic: "x", n: 1 },
  constitution: { id: "k", rules: [] },
  cascade_failure: false,
  duration_ms: 1,
  hook_results: [
    { hook: "first", bundle: "b", scope: "deployment", trust: "deployment", status: "continue", outcome: "skipped_predicate", duration_ms: 0 },
    { hook: "check", bundle: "b", scope: "deployment", trust: "deployment", status: "abort", outcome: "ok", duration_ms: 0.2, reason: "topic 'x' is blocked by policy", annotations: { seen: 1 } },
  ],
};

describe("loadTestCases", () => {
  test("applies defaults and keeps file order", async () => {
    const d = policyWithTests(`defaults: { type: periodic, input: { constitution: { id: k, rules: [] } } }\ncases:\n  - name: one\n    input: { context: {} }\n    expect: { status: completed }\n  - name: two\n    type: pre_inject\n    expect: {}\n`);
    const cases = await loadTestCases(d);
    expect(cases.map((c) => [c.name, c.type])).toEqual([["one", "periodic"], ["two", "pre_inject"]]);
    expect(cases[0]?.input).toEqual({ constitution: { id: "k", rules: [] }, context: {} });
  });

  test.each([
    ["cases:\n  - name: a\n    type: pre_select\n    expect: {}\n", /cases\[0\]\.type: must be one of pre_inject/],
    ["cases:\n  - name: a\n    type: pre_inject\n    expect: { statuz: completed }\n", /cases\[0\]\.expect: unknown field\(s\) statuz/],
    ["cases:\n  - name: a\n    expect: {}\n", /cases\[0\]\.type: missing/],
    ["cases: [\n", /YAML syntax error at line/],
    ["cases: []\n", /cases: must hold at least one case/],
  ])("a bad file names the file and the path (%#)", async (yaml, message) => {
    const d = policyWithTests(yaml);
    await expect(loadTestCases(d)).rejects.toThrow(message);
    await expect(loadTestCases(d)).rejects.toThrow(join(d, "tests", "a.yaml"));
  });
});

describe("checkResult", () => {
  test("a matching expectation has no mismatches", () => {
    expect(
      checkResult(
        {
          status: "aborted",
          aborted_by: "check",
          reason: { matches: "blocked by policy$" },
          hooks: { first: { outcome: "skipped_predicate" }, check: { status: "abort", annotations: { seen: 1 } } },
          context: { topic: "x" },
          constitution_equals: { id: "k", rules: [] },
          annotations: { seen: 1 },
        },
        RESULT,
      ),
    ).toEqual([]);
  });

  test("each difference is reported with its path", () => {
    const paths = checkResult(
      { status: "completed", aborted_by: null, reason: "other", hooks: { check: { outcome: "error" }, missing: {} }, context_equals: { topic: "x" } },
      RESULT,
    ).map((m) => m.path);
    expect(paths).toEqual(["status", "aborted_by", "reason", "hooks.check.outcome", "hooks.missing", "context.n"]);
  });
});

describe("prepareChainInput", () => {
  test("resolves { $now_ms: offset } anywhere in the input", () => {
    const input = prepareChainInput({ context: { t: { $now_ms: -1000 }, list: [{ $now_ms: 0 }] }, constitution: { id: "k", rules: [] }, event: {} }, "x", 5000);
    expect(input.context).toEqual({ t: 4000, list: [5000] });
  });

  test.each([
    [[], /must be an object/],
    [{ context: {}, constitution: {} }, /event is missing/],
    [{ context: [], constitution: {}, event: {} }, /context must be an object/],
    [{ context: {}, constitution: {}, event: {}, extra: 1 }, /unknown field\(s\) extra/],
  ])("refuses a malformed input (%#)", (raw, message) => {
    expect(() => prepareChainInput(raw, "in.json")).toThrow(message);
  });
});
