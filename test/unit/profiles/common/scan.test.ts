// Matcher and match-filter scan cost (profiles/common/scan.ts): the static bound refused before any
// input is seen, the meter charged what is actually scanned before scanning, and the input bounds
// the static bound rests on.
import { describe, expect, test } from "vitest";
import { compileGlob } from "../../../../src/profiles/common/glob.js";
import { compileSearch, hookMatcher } from "../../../../src/profiles/common/native.js";
import {
  MAX_CHANGED_PATHS, MAX_CHANGED_PATHS_CHARS, MAX_MATCHED_FIELD_LENGTH, MAX_MATCHER_COST, MatcherCostError, ScanBudgetExceeded, scanUnits,
} from "../../../../src/profiles/common/scan.js";
import { compileRepoYamlFilter, repoYamlProfile } from "../../../../src/profiles/repo-yaml/index.js";
import { aiMemoryProfile } from "../../../../src/profiles/ai-memory/index.js";
import { claudeCodeProfile } from "../../../../src/profiles/claude-code/index.js";

// The filter of the profile review's ~400 ms bench case: three backtracking-bait globs.
const HEAVY = {
  ability_scope: "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b",
  only_if_changed_paths: ["*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b", "{a,aa,aaa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*c"],
};

describe("glob scans charge their meter before matching", () => {
  test("one test costs (length + 1) × program size; an overrun throws and leaves the meter exhausted", () => {
    const g = compileGlob("src/**/*.ts");
    expect(g.programSize).toBeGreaterThan(0);
    const meter = { left: scanUnits(10, g.programSize) * 2 };
    expect(g("src/a/b.ts", meter)).toBe(true); // 10 characters
    expect(meter.left).toBe(scanUnits(10, g.programSize));
    expect(() => g("src/" + "a".repeat(100) + ".ts", meter)).toThrow(ScanBudgetExceeded);
    expect(meter.left).toBe(0);
    // Negation charges the same scan and keeps its meaning.
    const not = compileGlob("!*.md");
    expect(not("a.ts", { left: 1e6 })).toBe(true);
    expect(not("a.md")).toBe(false);
    expect(not("")).toBe(true); // an empty text is no path: a negated glob says yes, without a scan
  });

  test("an RE2 matcher of an agent profile charges the tool name it searches", () => {
    const m = claudeCodeProfile.compileMatcher("Edit.*|Write", "PreToolUse");
    expect(m.cost).toBeGreaterThan(0);
    const meter = { left: 1 };
    expect(() => m({ tool_name: "EditFile" }, meter)).toThrow(ScanBudgetExceeded);
    // Plain names are a set lookup: nothing to charge.
    expect(claudeCodeProfile.compileMatcher("Edit|Write", "PreToolUse").cost).toBe(0);
  });

  test("a literal pattern (a tool name) answers and charges as the RE2 search of the same pattern", () => {
    // "run_shell_command" takes the substring path; "run_shell_comman(d)" is the same language through RE2.
    const literal = compileSearch("run_shell_command", "gemini-cli BeforeTool");
    const regex = compileSearch("run_shell_comman(d)", "gemini-cli BeforeTool");
    for (const text of ["run_shell_command", "xrun_shell_commandx", "run_shell_comman", "RUN_SHELL_COMMAND", "", "é run_shell_command 😀", "run_shell\ncommand"]) {
      expect(literal(text), text).toBe(regex(text));
    }
    const meter = { left: scanUnits(17, literal.programSize) };
    expect(literal("run_shell_command", meter)).toBe(true);
    expect(meter.left).toBe(0);
    expect(() => literal("x", meter)).toThrow(ScanBudgetExceeded);
    // Hyphens and digits are literal too; a metacharacter keeps RE2's meaning.
    expect(compileSearch("mcp-server-2", "w")("use mcp-server-2 now")).toBe(true);
    expect(compileSearch("a.c", "w")("abc")).toBe(true);
  });
});

describe("static cost: a hook's matcher and filter together", () => {
  test("the review's three-glob filter is over MAX_MATCHER_COST and refused before any input", () => {
    const filter = compileRepoYamlFilter(HEAVY, "PostAbilityCall");
    expect(filter.cost).toBeGreaterThan(MAX_MATCHER_COST);
    const matcher = repoYamlProfile.compileMatcher(undefined, "PostAbilityCall");
    expect(() => hookMatcher(matcher, filter)).toThrow(MatcherCostError);
    expect(() => hookMatcher(matcher, filter)).toThrow(/limit maxMatcherCost/);
  });

  test("the cost is the globs' sizes times the input bounds; a usual filter is far below the limit", () => {
    const g = compileGlob("src/**/*.ts");
    const filter = compileRepoYamlFilter({ ability_scope: "fs.*", only_if_changed_paths: ["src/**/*.ts"] }, "PreAbilityCall");
    expect(filter.cost).toBe(scanUnits(MAX_MATCHED_FIELD_LENGTH, compileGlob("fs.*").programSize) + (MAX_CHANGED_PATHS_CHARS + MAX_CHANGED_PATHS) * g.programSize);
    const applies = hookMatcher(repoYamlProfile.compileMatcher("fs.*", "PreAbilityCall"), filter);
    expect(applies.cost).toBeLessThanOrEqual(MAX_MATCHER_COST);
    expect(applies({ ability_id: "fs.write", changed_files: ["src/x.ts"] }, { left: MAX_MATCHER_COST })).toBe(true);
  });

  test("on the largest input the heavy filter would scan it stays within its static cost (the bound holds)", () => {
    const filter = compileRepoYamlFilter({ only_if_changed_paths: ["{a,aa,aaa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*c"] }, "SessionStop");
    const paths = Array.from({ length: 64 }, () => "a".repeat(MAX_CHANGED_PATHS_CHARS / 64));
    const input = repoYamlProfile.validateInput({ changed_files: paths }, "SessionStop");
    expect(input.ok).toBe(true);
    const meter = { left: filter.cost };
    expect(filter((input as { value: Record<string, unknown> }).value, meter)).toBe(false);
    expect(meter.left).toBeGreaterThanOrEqual(0);
  });
});

describe("input bounds the static cost rests on", () => {
  test("repo-yaml: ability_id length, changed_files / files_touched count and total length", () => {
    expect(repoYamlProfile.validateInput({ ability_id: "a".repeat(MAX_MATCHED_FIELD_LENGTH + 1) }, "PreAbilityCall"))
      .toEqual({ ok: false, error: `ability_id: must be at most ${MAX_MATCHED_FIELD_LENGTH} characters (a field matchers search)` });
    expect(repoYamlProfile.validateInput({ changed_files: Array.from({ length: MAX_CHANGED_PATHS + 1 }, () => "a") }, "SessionStop"))
      .toMatchObject({ ok: false, error: expect.stringContaining(`changed_files: at most ${MAX_CHANGED_PATHS} paths`) });
    expect(repoYamlProfile.validateInput({ files_touched: ["a".repeat(MAX_CHANGED_PATHS_CHARS), "b"] }, "UserPromptSubmit"))
      .toMatchObject({ ok: false, error: expect.stringContaining(`files_touched: at most ${MAX_CHANGED_PATHS_CHARS} characters in all`) });
    expect(repoYamlProfile.validateInput({ changed_files: ["a".repeat(MAX_CHANGED_PATHS_CHARS)] }, "SessionStop")).toMatchObject({ ok: true });
  });

  test("ai-memory: payload.namespace, the field namespace matchers scan", () => {
    expect(aiMemoryProfile.validateInput({ event: "pre_store", payload: { namespace: "n".repeat(MAX_MATCHED_FIELD_LENGTH + 1) } }, "pre_store"))
      .toEqual({ ok: false, error: `payload.namespace: must be at most ${MAX_MATCHED_FIELD_LENGTH} characters (a field matchers search)` });
    expect(aiMemoryProfile.validateInput({ event: "pre_store", payload: { namespace: "team/a" } }, "pre_store")).toMatchObject({ ok: true });
  });
});
