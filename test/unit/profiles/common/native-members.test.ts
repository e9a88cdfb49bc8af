// The descriptor members agent profiles share (src/profiles/common/native.ts): the session id rule,
// and one schema per event for validation, conditions and decoding.
import { describe, expect, test } from "vitest";
import { z } from "zod";
import { nativeSchemas, presentJson, sessionIdAt } from "../../../../src/profiles/common/native.js";

describe("sessionIdAt", () => {
  test("the first key the input carries, when it is a non-empty string", () => {
    const of = sessionIdAt("sessionId", "session_id");
    expect(of({ sessionId: "a", session_id: "b" })).toBe("a");
    expect(of({ session_id: "b" })).toBe("b");
    // A key that is there but empty or not a string names no session: the next spelling is not read.
    expect(of({ sessionId: "", session_id: "b" })).toBeUndefined();
    expect(of({ sessionId: 7 })).toBeUndefined();
    expect(of({})).toBeUndefined();
  });
});

describe("nativeSchemas", () => {
  const input = z.strictObject({ tool: z.string() });
  const output = z.strictObject({ decision: z.enum(["allow", "block"]).optional(), said: z.string().optional() });
  const members = nativeSchemas({
    inputOf: (e) => (e === "Check" ? input : undefined),
    outputOf: (e) => (e === "Check" ? output : undefined),
    unknownEvent: (e) => `unknown event ${JSON.stringify(e)}`,
    plainText: (text) => ({ said: text }),
  });

  test("validation and conditions read one schema; an unknown event is refused naming it", () => {
    expect(members.inputSchema("Check")).toBe(input);
    expect(members.validateInput({ tool: "ls" }, "Check")).toEqual({ ok: true, value: { tool: "ls" } });
    expect(members.validateInput({ tool: 1 }, "Check")).toMatchObject({ ok: false, error: expect.stringMatching(/^tool: /) });
    expect(members.validateInput({ tool: "ls" }, "Nope")).toEqual({ ok: false, error: 'unknown event "Nope"' });
  });

  test("decode reads a result as a command hook's stdout", () => {
    const ctx = { strict: false, settings: {} };
    expect(members.decode(' {"decision":"block"} ', "Check", ctx)).toEqual({ ok: true, value: { decision: "block" } });
    expect(members.decode("plain words", "Check", ctx)).toEqual({ ok: true, value: { said: "plain words" } });
    expect(members.decode(null, "Check", ctx)).toEqual({ ok: true, value: {} });
    expect(members.decode({ other: 1 }, "Check", ctx)).toMatchObject({ ok: false });
    expect(members.decode({}, "Nope", ctx)).toEqual({ ok: false, error: 'unknown event "Nope"' });
  });

  test("presentJson: the folded JSON with exit code 0", () => {
    expect(presentJson({ decision: "block" })).toEqual({ native: { decision: "block" }, exit_code: 0 });
  });
});
