/**
 * Properties of the merge rules over arbitrary output lists (fast-check): the safety-relevant ones a
 * user relies on whatever the hooks return and in whatever order they are planned.
 */
import fc from "fast-check";
import { expect, test } from "vitest";
import { claudeCodeProfile } from "../../../src/profiles/claude-code/index.js";
import { geminiCliProfile } from "../../../src/profiles/gemini-cli/index.js";
import { llxprtProfile } from "../../../src/profiles/llxprt/index.js";
import type { NativeObject } from "../../../src/profiles/types.js";

const compat = { strict: false, settings: {} };
const strict = { strict: true, settings: {} };

const geminiOutput: fc.Arbitrary<NativeObject> = fc.record(
  {
    decision: fc.constantFrom("ask", "block", "deny", "approve", "allow"),
    reason: fc.string({ maxLength: 5 }),
    continue: fc.boolean(),
    systemMessage: fc.string({ maxLength: 5 }),
    hookSpecificOutput: fc.record({ additionalContext: fc.string({ maxLength: 5 }) }, { requiredKeys: [] }),
  },
  { requiredKeys: [] },
);
const blocks = (o: NativeObject) => o["decision"] === "block" || o["decision"] === "deny";

test("OR-decision events: the answer blocks exactly when some output blocks (both agents)", () => {
  fc.assert(
    fc.property(fc.array(geminiOutput, { minLength: 1, maxLength: 6 }), fc.constantFrom("BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent"), (outs, event) => {
      for (const p of [geminiCliProfile, llxprtProfile]) {
        expect(blocks(p.reduce(outs, event, compat))).toBe(outs.some(blocks));
      }
    }),
  );
});

test("BeforeModel strict: the answer blocks whenever some output blocks, whatever comes after", () => {
  fc.assert(
    fc.property(fc.array(geminiOutput, { minLength: 1, maxLength: 6 }), (outs) => {
      for (const p of [geminiCliProfile, llxprtProfile]) {
        if (outs.some(blocks)) expect(blocks(p.reduce(outs, "BeforeModel", strict))).toBe(true);
      }
    }),
  );
});

const names = fc.uniqueArray(fc.constantFrom("a", "b", "c", "d"), { maxLength: 4 });
const selection: fc.Arbitrary<NativeObject> = fc.record(
  { mode: fc.constantFrom("AUTO", "ANY", "NONE"), allowedFunctionNames: names },
  { requiredKeys: [] },
).map((toolConfig) => ({ hookSpecificOutput: { toolConfig } }));
const allowed = (r: NativeObject) => ((r["hookSpecificOutput"] as NativeObject)["toolConfig"] as NativeObject)["allowedFunctionNames"] as string[] | undefined;

test("llxprt BeforeToolSelection: no hook's explicit list is ever widened; gemini's union covers every list", () => {
  fc.assert(
    fc.property(fc.array(selection, { minLength: 1, maxLength: 5 }), (outs) => {
      const lists = outs.map((o) => ((o["hookSpecificOutput"] as NativeObject)["toolConfig"] as NativeObject)["allowedFunctionNames"] as string[] | undefined);
      const narrowed = allowed(llxprtProfile.reduce(outs, "BeforeToolSelection", compat));
      for (const list of lists) if (list !== undefined) for (const name of narrowed ?? []) expect(list).toContain(name);
      const none = outs.some((o) => ((o["hookSpecificOutput"] as NativeObject)["toolConfig"] as NativeObject)["mode"] === "NONE");
      const union = allowed(geminiCliProfile.reduce(outs, "BeforeToolSelection", compat))!;
      if (none) expect(union).toEqual([]);
      else for (const list of lists) for (const name of list ?? []) expect(union).toContain(name);
    }),
  );
});

const RANK = ["allow", "ask", "defer", "deny"];
test("claude-code PreToolUse: the answer is the highest permission any hook gave (deny > defer > ask > allow)", () => {
  fc.assert(
    fc.property(fc.array(fc.constantFrom(...RANK), { minLength: 1, maxLength: 6 }), (decisions) => {
      const outs = decisions.map((d) => ({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: d } }));
      const got = (claudeCodeProfile.reduce(outs, "PreToolUse", compat)["hookSpecificOutput"] as NativeObject)["permissionDecision"];
      expect(got).toBe(RANK[Math.max(...decisions.map((d) => RANK.indexOf(d)))]);
    }),
  );
});
