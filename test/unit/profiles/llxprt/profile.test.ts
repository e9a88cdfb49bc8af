/**
 * llxprt profile (PROFILES §3.2): where LLxprt Code differs from Gemini CLI — no `ask`, first-wins
 * stopReason/systemMessage, BeforeToolSelection intersection, permissionDecision on a single BeforeTool
 * hook (strict: always) — plus the rules the two share, checked once more against this profile object.
 */
import { describe, expect, test } from "vitest";
import { LLXPRT_STOP_FALLBACK } from "../../../../src/profiles/gemini-family/reduce.js";
import { llxprtProfile as p } from "../../../../src/profiles/llxprt/index.js";
import type { NativeObject } from "../../../../src/profiles/types.js";

const compat = { strict: false, settings: {} };
const strict = { strict: true, settings: {} };
const cfg = (r: NativeObject) => (r["hookSpecificOutput"] as NativeObject)["toolConfig"];
const sel = (mode: string | undefined, names?: string[]) => ({ hookSpecificOutput: { toolConfig: { ...(mode ? { mode } : {}), ...(names ? { allowedFunctionNames: names } : {}) } } });

test("identity and upstream pin", () => {
  expect(p.id).toBe("llxprt");
  expect(p.upstream.repo).toBe("vybestack/llxprt-code");
  expect(p.upstream.commit).toMatch(/^[0-9a-f]{40}$/);
  expect(p.strictFixes.some((s) => s.includes("permissionDecision"))).toBe(true);
});

describe("OR-decision merge, LLxprt flavour", () => {
  test("no ask: an ask with nothing blocking folds to allow", () => {
    expect(p.reduce([{ decision: "ask" }], "BeforeTool", compat)["decision"]).toBe("allow");
  });
  test("systemMessage is the first non-empty one", () => {
    expect(p.reduce([{ systemMessage: "" }, { systemMessage: "first" }, { systemMessage: "second" }], "AfterTool", compat)["systemMessage"]).toBe("first");
  });
  test("stopReason comes from the first continue:false, trimmed; a fallback text when empty", () => {
    expect(p.reduce([{ continue: false, stopReason: "  one  " }, { continue: false, stopReason: "two" }], "AfterTool", compat)["stopReason"]).toBe("one");
    expect(p.reduce([{ continue: false }, { continue: false, stopReason: "two" }], "BeforeTool", compat)["stopReason"]).toBe(LLXPRT_STOP_FALLBACK);
  });
  test("reasons and additionalContext are still joined with a newline", () => {
    const r = p.reduce([{ reason: "a", hookSpecificOutput: { additionalContext: "x" } }, { decision: "block", reason: "b", hookSpecificOutput: { additionalContext: "y" } }], "BeforeTool", compat);
    expect(r).toMatchObject({ decision: "block", reason: "a\nb", hookSpecificOutput: { additionalContext: "x\ny" } });
  });
  test("a failure warning after an earlier message keeps the earlier one first (first-wins)", () => {
    const failed = p.failureOutput("h2", "boom", false, "AfterTool", compat);
    expect(p.reduce([{ systemMessage: "from h1" }, failed], "AfterTool", compat)["systemMessage"]).toBe("from h1");
    expect(p.reduce([failed, { systemMessage: "from h1" }], "AfterTool", compat)["systemMessage"]).toBe("Warning: h2: boom");
  });
  test("shallow-merge events keep the first systemMessage too", () => {
    expect(p.reduce([{ systemMessage: "a" }, { systemMessage: "b" }], "Notification", compat)["systemMessage"]).toBe("a");
  });
});

describe("permissionDecision on BeforeTool: single hook only; strict switch both ways", () => {
  const deny = { hookSpecificOutput: { permissionDecision: "deny", permissionDecisionReason: "no rm" } };
  test("one hook: honoured (blocks with its reason)", () => {
    expect(p.reduce([deny], "BeforeTool", compat)).toMatchObject({ decision: "deny", reason: "no rm" });
  });
  test("several hooks, compat: ignored by the OR merge (upstream)", () => {
    expect(p.reduce([{ decision: "allow" }, deny], "BeforeTool", compat)["decision"]).toBe("allow");
  });
  test("several hooks, strict: blocks", () => {
    expect(p.reduce([{ decision: "allow" }, deny], "BeforeTool", strict)).toMatchObject({ decision: "deny", reason: "no rm" });
  });
  test("verdictOf reports it as a block", () => {
    expect(p.verdictOf(deny, "BeforeTool")).toBe("block");
  });
});

describe("BeforeToolSelection: intersection", () => {
  test("explicit lists intersect, sorted", () => {
    expect(cfg(p.reduce([sel("AUTO", ["write_file", "read_file", "ls"]), sel("AUTO", ["ls", "read_file"])], "BeforeToolSelection", compat))).toEqual({ mode: "AUTO", allowedFunctionNames: ["ls", "read_file"] });
  });
  test("an omitted list stays unrestricted", () => {
    expect(cfg(p.reduce([sel("ANY"), sel(undefined, ["b", "a"])], "BeforeToolSelection", compat))).toEqual({ mode: "ANY", allowedFunctionNames: ["a", "b"] });
    expect(cfg(p.reduce([sel("AUTO")], "BeforeToolSelection", compat))).toEqual({ mode: "AUTO" });
  });
  test("an explicit [] is the most restrictive", () => {
    expect(cfg(p.reduce([sel("AUTO", ["a"]), sel("AUTO", [])], "BeforeToolSelection", compat))).toEqual({ mode: "AUTO", allowedFunctionNames: [] });
  });
  test("NONE wins", () => {
    expect(cfg(p.reduce([sel("NONE"), sel("ANY", ["a"])], "BeforeToolSelection", compat))).toEqual({ mode: "NONE", allowedFunctionNames: [] });
  });
});

describe("shared rules", () => {
  test("BeforeModel: later allow overrides a block in compat, block wins in strict", () => {
    const outs = [{ decision: "deny", reason: "r" }, { decision: "allow" }];
    expect(p.reduce(outs, "BeforeModel", compat)["decision"]).toBe("allow");
    expect(p.reduce(outs, "BeforeModel", strict)["decision"]).toBe("deny");
  });
  test("unanchored matcher, RE2 errors name the pattern", () => {
    expect(p.compileMatcher("Edit|Write", "BeforeTool")({ tool_name: "EditTool" })).toBe(true);
    expect(() => p.compileMatcher("a(b", "AfterTool")).toThrow(/llxprt AfterTool/);
  });
});
