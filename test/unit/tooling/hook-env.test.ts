// The agent's hook environment carried to the command lane (issue 26 item 3): one table keyed by
// profile id, one header form, the same bounds on both sides (src/tooling/hook-env.ts).
import { describe, expect, test } from "vitest";
import { checkHookEnv, decodeHookEnv, encodeHookEnv, HOOK_ENV, HOOK_ENV_LIMITS, hookEnvNames } from "../../../src/tooling/hook-env.js";

describe("the table", () => {
  test("each host's documented variables, and never one a loader or shell interprets", () => {
    expect(hookEnvNames("claude-code")).toContain("CLAUDE_PROJECT_DIR");
    expect(hookEnvNames("gemini-cli")).toEqual(expect.arrayContaining(["GEMINI_PROJECT_DIR", "GEMINI_SESSION_ID", "GEMINI_CWD", "CLAUDE_PROJECT_DIR"]));
    expect(hookEnvNames("llxprt")).toContain("LLXPRT_PROJECT_DIR");
    // What the real Copilot CLI 1.0.102 sets for every hook (npm run test:agents reads it in a migrated hook).
    expect(hookEnvNames("copilot")).toEqual(["COPILOT_PROJECT_DIR", "CLAUDE_PROJECT_DIR"]);
    expect(hookEnvNames("ai-memory")).toEqual([]);
    expect(hookEnvNames("__proto__")).toEqual([]);
    const all = Object.values(HOOK_ENV).flat();
    for (const name of all) expect(name).toMatch(/^[A-Z][A-Z0-9_]*$/);
    expect(all.filter((n) => /^(PATH|HOME|SHELL|IFS|ENV|BASH_ENV|NODE_OPTIONS|PYTHON\w*|PERL5\w*|LD_\w+|DYLD_\w+)$/.test(n))).toEqual([]);
    // Names a file on the agent's machine for the script to write: a client's value would direct a server-side write.
    expect(hookEnvNames("claude-code")).not.toContain("CLAUDE_ENV_FILE");
  });
});

describe("encode (the adapter) → decode (the route) → check (the runtime)", () => {
  test("only the profile's set variables travel; plain paths stay readable, the rest is percent-encoded", () => {
    const env = { CLAUDE_PROJECT_DIR: "/home/me/my project/ü&=%", GEMINI_SESSION_ID: "s-1", VCP_CLIENT_TOKEN: "secret", PATH: "/usr/bin" };
    const header = encodeHookEnv("gemini-cli", env)!;
    expect(header).toBe("GEMINI_SESSION_ID=s-1&CLAUDE_PROJECT_DIR=%2Fhome%2Fme%2Fmy%20project%2F%C3%BC%26%3D%25");
    const decoded = decodeHookEnv(header);
    expect(decoded.env).toEqual({ GEMINI_SESSION_ID: "s-1", CLAUDE_PROJECT_DIR: env.CLAUDE_PROJECT_DIR });
    expect(checkHookEnv("gemini-cli", decoded.env)).toBeUndefined();
    expect(encodeHookEnv("claude-code", { CLAUDE_PROJECT_DIR: "/p" })).toBe("CLAUDE_PROJECT_DIR=/p");
    expect(encodeHookEnv("claude-code", { PATH: "/usr/bin" })).toBeUndefined();
    // Set but empty is set: the script sees it as natively.
    expect(decodeHookEnv(encodeHookEnv("claude-code", { CLAUDE_PROJECT_DIR: "" })!).env).toEqual({ CLAUDE_PROJECT_DIR: "" });
  });

  test("the adapter refuses what does not fit, naming the variable and the bound", () => {
    expect(() => encodeHookEnv("claude-code", { CLAUDE_PROJECT_DIR: "/x".repeat(3000) })).toThrow("CLAUDE_PROJECT_DIR is 6000 bytes, more than 4096");
    expect(() => encodeHookEnv("claude-code", { CLAUDE_PROJECT_DIR: "bad\u0000" })).toThrow("CLAUDE_PROJECT_DIR holds a NUL character");
    // Every variable at its value bound, encoded three bytes per byte: over the header's bound.
    const big = "ü".repeat(2048);
    expect(() => encodeHookEnv("gemini-cli", { GEMINI_PROJECT_DIR: big, GEMINI_CWD: big })).toThrow(/bytes encoded, more than 8192/);
  });

  test.each([
    ["A=".padEnd(HOOK_ENV_LIMITS.headerBytes + 1, "x"), "the header is 8193 bytes, more than 8192"],
    [Array.from({ length: 17 }, (_, i) => `A${i}=1`).join("&"), "17 variables, more than 16"],
    ["CLAUDE_PROJECT_DIR", "'CLAUDE_PROJECT_DIR' is not NAME=VALUE"],
    ["1X=a", "'1X=a' is not NAME=VALUE"],
    ["A=a b", "A: the value is not percent-encoded (RFC 3986)"],
    ["A=%zz", "A: the value is not percent-encoded (RFC 3986)"],
    ["A=%ff", "A: the value is not percent-encoded UTF-8"],
    ["A=1&A=2", "A is given twice"],
    ["A=%00", "A holds a NUL character"],
    [`A=${"a".repeat(4097)}`, "A is 4097 bytes, more than 4096"],
    ["A=1, A=2", "A: the value is not percent-encoded (RFC 3986)"],
  ])("a bad header is refused before use, case %#", (header, problem) => {
    expect(decodeHookEnv(header).problem).toContain(problem);
  });

  test.each([
    [{ PATH: "/tmp" }, "PATH is not a claude-code hook variable (allowed: CLAUDE_PROJECT_DIR"],
    [{ LD_PRELOAD: "/tmp/x.so" }, "LD_PRELOAD is not a claude-code hook variable"],
    [{ CLAUDE_PROJECT_DIR: 1 }, "CLAUDE_PROJECT_DIR: the value must be a string"],
    [[], "must be an object of variable names to strings"],
    [{ "A B": "x" }, "'A B' is not a variable name"],
  ])("the runtime takes only the profile's names: %j", (env, problem) => {
    expect(checkHookEnv("claude-code", env)).toContain(problem);
  });

  test("a profile without a row passes nothing", () => {
    expect(checkHookEnv("ai-memory", { CLAUDE_PROJECT_DIR: "/p" })).toBe("CLAUDE_PROJECT_DIR is not a ai-memory hook variable (this profile passes none)");
    expect(checkHookEnv("ai-memory", {})).toBeUndefined();
  });
});
