// runtime.fireProfile through the real sandbox (PROFILES §2, §8): a toy profile (test/support/echo-profile.ts)
// loaded into the sandbox workers with profileModules; timeouts, throws and invalid outputs become the
// profile's failure output, fail_closed blocks, session-trust hooks are stripped to observers.
import { pathToFileURL } from "node:url";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, VcpError, type Runtime } from "../../../src/index.js";
import { registerProfile } from "../../../src/profile-kit.js";
import echoProfile from "../../support/echo-profile.js";
import { profileBundle } from "../../support/bundles.js";

const ECHO_MODULE = pathToFileURL(fileURLToPath(new URL("../../support/echo-profile.ts", import.meta.url))).href;

function echoBundle(name: string, hooks: Array<Record<string, unknown> & { name: string }>, actions: Record<string, string>, extra: Record<string, unknown> = {}) {
  return profileBundle(name, "echo", hooks, actions, extra, "Check");
}

let runtime: Runtime;
beforeAll(async () => {
  registerProfile(echoProfile);
  runtime = await createRuntime({ profileModules: [ECHO_MODULE], profiles: { echo: { strict: false } } });
}, 60_000);
afterAll(async () => {
  await runtime?.close();
});

describe("fireProfile through the sandbox", () => {
  test("a block from any hook wins; reasons are joined in plan order; the native answer and exit code come back", async () => {
    await runtime.bundles.install(
      echoBundle("b-or", [{ name: "first", priority: 60 }, { name: "second", priority: 40 }], {
        first: "(input) => ({ decision: 'allow', reason: 'saw ' + input.tool })",
        second: "(input) => ({ decision: input.tool === 'rm' ? 'block' : 'allow', reason: 'no rm' })",
      }),
    );
    try {
      const out = await runtime.fireProfile("echo", "Check", { input: { session_id: "s1", tool: "rm" } });
      expect(out.native).toEqual({ decision: "block", reason: "saw rm\nno rm" });
      expect(out.exit_code).toBe(2);
      expect(out.stderr).toBe("saw rm\nno rm");
      expect(out.result.hook_results.map((h) => [h.hook, h.outcome, h.verdict])).toEqual([
        ["first", "ok", "allow"],
        ["second", "ok", "block"],
      ]);
      const allowed = await runtime.fireProfile("echo", "Check", { input: { session_id: "s1", tool: "ls" } });
      expect(allowed.exit_code).toBe(0);
      expect(allowed.native).toEqual({ decision: "allow", reason: "saw ls\nno rm" });
    } finally {
      await runtime.bundles.remove("b-or");
    }
  }, 60_000);

  test("throw, timeout and invalid output fail open with a warning each; fail_closed blocks", async () => {
    await runtime.bundles.install(
      echoBundle("b-fail", [{ name: "thrower" }, { name: "sleeper", timeout_ms: 200 }, { name: "garbage" }, { name: "closed", fail_closed: true }], {
        thrower: "() => { throw new Error('boom'); }",
        sleeper: "() => { for (;;) {} }",
        garbage: "() => ({ colour: 'blue' })",
        closed: "() => { throw new Error('nope'); }",
      }),
    );
    try {
      const out = await runtime.fireProfile("echo", "Check", { input: { tool: "x" } });
      const outcomes = Object.fromEntries(out.result.hook_results.map((h) => [h.hook, h.outcome]));
      expect(outcomes).toEqual({ thrower: "error", sleeper: "timeout", garbage: "invalid_result", closed: "error" });
      expect(out.native["decision"]).toBe("block");
      expect(out.native["reason"]).toBe("fail-closed: closed: nope");
      const message = String(out.native["message"]);
      expect(message).toContain("Warning: thrower: boom");
      expect(message).toContain("Warning: sleeper: timed out");
      expect(message).toContain("Warning: garbage: colour: unknown output field");
      expect(out.exit_code).toBe(2);
    } finally {
      await runtime.bundles.remove("b-fail");
    }
  }, 60_000);

  test("a session-trust hook observes only: nothing it returns reaches the answer, and the outcome names what was withheld", async () => {
    await runtime.bundles.install(
      echoBundle("b-observer", [{ name: "watcher" }], { watcher: "() => ({ decision: 'block', reason: 'r', message: 'seen', input: { tool: 'y' } })" }, { trust: "session" }),
    );
    try {
      const out = await runtime.fireProfile("echo", "Check", { input: { tool: "x" } });
      expect(out.native).toEqual({});
      expect(out.exit_code).toBe(0);
      expect(out.result.hook_results[0]).toMatchObject({ hook: "watcher", outcome: "capability_denied", verdict: "observe", stripped: ["decision", "reason", "message", "input"] });
    } finally {
      await runtime.bundles.remove("b-observer");
    }
  }, 60_000);

  test("sequential chaining feeds the next hook the merged input; parallel hooks all see the original", async () => {
    await runtime.bundles.install(
      echoBundle("b-seq", [{ name: "rewrite", priority: 60 }, { name: "report", priority: 40 }], {
        rewrite: "() => ({ input: { tool: 'safe' } })",
        report: "(input) => ({ message: 'tool=' + input.tool })",
      }),
    );
    try {
      const parallel = await runtime.fireProfile("echo", "Check", { input: { tool: "rm" } });
      expect(parallel.native).toEqual({ input: { tool: "safe" }, message: "tool=rm" });
      expect(parallel.result.mode).toBe("parallel");
      await runtime.bundles.install(
        echoBundle("b-seq", [{ name: "rewrite", priority: 60, sequential: true }, { name: "report", priority: 40 }], {
          rewrite: "() => ({ input: { tool: 'safe' } })",
          report: "(input) => ({ message: 'tool=' + input.tool })",
        }, { version: "1.0.1" }),
      );
      const sequential = await runtime.fireProfile("echo", "Check", { input: { tool: "rm" } });
      expect(sequential.native).toEqual({ input: { tool: "safe" }, message: "tool=safe" });
      expect(sequential.result.mode).toBe("sequential");
    } finally {
      await runtime.bundles.remove("b-seq");
    }
  }, 60_000);

  test("bad input, unknown event, unknown profile: coded errors naming what is wrong", async () => {
    await expect(runtime.fireProfile("echo", "Check", { input: { tool: 5 } })).rejects.toMatchObject({ code: "INVALID_INPUT", message: expect.stringContaining("tool: must be a string") });
    await expect(runtime.fireProfile("echo", "Nope", { input: {} })).rejects.toMatchObject({ code: "UNKNOWN_EVENT" });
    await expect(runtime.fireProfile("nosuch", "Check", { input: {} })).rejects.toMatchObject({ code: "UNKNOWN_PROFILE" });
    await expect(runtime.fireProfile("echo", "Check", { input: { tool: "x", deep: JSON.parse("[".repeat(100) + "]".repeat(100)) } })).rejects.toBeInstanceOf(VcpError);
  });

  test("native calls: async actions settle, an action returning nothing is decoded by the profile, the input carries no chain_state", async () => {
    await runtime.bundles.install(
      echoBundle("b-native", [{ name: "later", priority: 60 }, { name: "nothing", priority: 50 }, { name: "keys", priority: 40 }], {
        later: "async (input) => ({ message: 'async ' + input.tool })",
        nothing: "() => undefined",
        keys: "(input) => ({ message: Object.keys(input).sort().join(',') })",
      }),
    );
    try {
      const out = await runtime.fireProfile("echo", "Check", { input: { tool: "x", session_id: "n1" } });
      expect(out.result.hook_results.map((h) => h.outcome)).toEqual(["ok", "ok", "ok"]);
      expect(out.native).toEqual({ message: "async x\nsession_id,tool" });
    } finally {
      await runtime.bundles.remove("b-native");
    }
  }, 60_000);

  test("an empty plan answers the neutral answer without dispatch", async () => {
    const out = await runtime.fireProfile("echo", "Notice", { input: {} });
    expect(out).toMatchObject({ native: {}, exit_code: 0 });
    expect(out.result.hook_results).toEqual([]);
  });
});

describe("profile bundles in the data directory", () => {
  test("a restart reloads an installed profile bundle and its plan; swapping it for a VCP bundle of the same name drops its hooks", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const dataDir = mkdtempSync(join(tmpdir(), "vcp-profiles-"));
    try {
      const first = await createRuntime({ dataDir, profileModules: [ECHO_MODULE] });
      await first.bundles.install(echoBundle("keep", [{ name: "guard" }], { guard: "() => ({ decision: 'block', reason: 'kept' })" }));
      await first.close();
      const second = await createRuntime({ dataDir, profileModules: [ECHO_MODULE] });
      try {
        expect(second.profiles.plan("echo", "Check").map((h) => h.name)).toEqual(["guard"]);
        expect(second.bundles.get("keep")?.profile).toBe("echo@1");
        const out = await second.fireProfile("echo", "Check", { input: { tool: "x" } });
        expect(out).toMatchObject({ exit_code: 2, native: { decision: "block", reason: "kept" } });
        const records = await second.audit.query({});
        expect(records.some((r) => r.kind === "chain" && r.profile === "echo" && r.profile_event === "Check")).toBe(true);
        await second.bundles.install({
          manifest: { bundle: "keep", version: "2.0.0", trust: "deployment", hooks: [{ name: "vcp_hook", type: "pre_inject", action: "v", priority: 50, timeout_ms: 1000 }] },
          code: "var __vcp_bundle = { v: function () { return { status: 'continue' }; } };",
        });
        expect(second.profiles.plan("echo", "Check")).toEqual([]);
        expect((await second.hooks.chain("pre_inject")).map((h) => h.name)).toEqual(["vcp_hook"]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
