// The executor's use of the profiles' optional members, through the real sandbox (PROFILES §3.4–§3.6,
// §8.8, §8.10): ai-memory class deadlines (hookBudgetMs, deadlineExhaustedOutput, the new outcome
// deadline_exhausted and vcp_timeout_violations_total), repo-yaml `match` and `blocking` refused or
// honoured at install, Amplifier's runtime-owned timestamp (stampInput) and provenance (reduceWithHooks).
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, VcpError, type Runtime } from "../../../src/index.js";
import { profileBundle } from "../../support/bundles.js";

let runtime: Runtime;
beforeAll(async () => {
  runtime = await createRuntime({
    sandbox: { threads: 1 },
    profiles: { "ai-memory@0.7": { strict: false, required_events: ["pre_delete"] }, "repo-yaml": {}, amplifier: { injection_size_limit: 20 } },
  });
}, 60_000);
afterAll(async () => {
  await runtime?.close();
});

function violations(text: string, event: string): number {
  const line = text.split("\n").find((l) => l.startsWith(`vcp_timeout_violations_total{profile="ai-memory",event="${event}"}`));
  return line === undefined ? 0 : Number(line.split(" ").pop());
}

describe("ai-memory class deadlines (hookBudgetMs, deadlineExhaustedOutput)", () => {
  test("a hook that spends the 50 ms hot-path deadline leaves the next one deadline_exhausted; both count as timeout violations", async () => {
    await runtime.bundles.install(
      profileBundle("m-hot", "ai-memory", [
        { name: "slow", priority: 100, event: "pre_recall_expand" },
        { name: "guard", priority: 10, event: "pre_recall_expand", fail_closed: true },
        { name: "late", priority: 5, event: "pre_recall_expand" },
      ], { slow: "() => { for (;;) {} }", guard: "() => ({ action: 'allow' })", late: "() => ({ action: 'allow' })" }),
    );
    try {
      const before = violations(await runtime.metrics(), "pre_recall_expand");
      const out = await runtime.fireProfile("ai-memory", "pre_recall_expand", { input: { event: "pre_recall_expand", payload: { query: "q" } } });
      expect(out.native).toEqual({ action: "deny", reason: "hook guard skipped under fail_mode=closed: chain class deadline exhausted", code: 504 });
      const outcomes = out.result.hook_results.map((h) => [h.hook, h.outcome]);
      // The fail-closed guard's deny stops the chain: `late` is not reported.
      expect(outcomes).toEqual([["slow", "deadline_exceeded"], ["guard", "deadline_exhausted"]]);
      expect(out.result.hook_results[1]!.error).toMatch(/hot_path chain deadline of 50 ms was spent before it ran/);
      expect(out.result.aborted_by).toBe("guard");
      expect(violations(await runtime.metrics(), "pre_recall_expand") - before).toBe(2);
    } finally {
      await runtime.bundles.remove("m-hot");
    }
  }, 60_000);

  test("a plain hook timeout counts too; an event with no hook and required_events is denied 503 without dispatch", async () => {
    await runtime.bundles.install(profileBundle("m-slow", "ai-memory", [{ name: "spin", event: "pre_store", timeout_ms: 100 }], { spin: "() => { for (;;) {} }" }));
    try {
      const before = violations(await runtime.metrics(), "pre_store");
      const out = await runtime.fireProfile("ai-memory", "pre_store", { input: { event: "pre_store", payload: { title: "t" } } });
      expect(out.native).toEqual({ action: "allow" });
      expect(out.result.hook_results.map((h) => h.outcome)).toEqual(["timeout"]);
      expect(violations(await runtime.metrics(), "pre_store") - before).toBe(1);
    } finally {
      await runtime.bundles.remove("m-slow");
    }
    const chains = (text: string) => Number(text.split("\n").find((l) => l.startsWith('vcp_profile_chains_total{profile="ai-memory",event="pre_delete"'))?.split(" ").pop() ?? 0);
    const chainsBefore = chains(await runtime.metrics());
    const required = await runtime.fireProfile("ai-memory", "pre_delete", { input: { event: "pre_delete", payload: { id: "m1" } } });
    expect(required.native).toEqual({ action: "deny", reason: "required event pre_delete has no enabled hook (required_events, enforce mode)", code: 503 });
    expect(required.result.hook_results).toEqual([]);
    // A refusal is a decision: metered (and audited) like a chain, unlike the neutral empty answer.
    expect(required.result.status).toBe("aborted");
    expect(chains(await runtime.metrics()) - chainsBefore).toBe(1);
  }, 60_000);
});

describe("repo-yaml match and blocking", () => {
  test("a bad match filter is refused at install naming hooks[i].match.<field>; the installed revision stays", async () => {
    const good = profileBundle("r-guard", "repo-yaml", [{ name: "guard", event: "PreAbilityCall", match: { ability_scope: "fs.*" }, blocking: true }], {
      guard: "() => ({ error: 'blocked_by_policy' })",
    });
    await runtime.bundles.install(good);
    try {
      expect(runtime.profiles.plan("repo-yaml", "PreAbilityCall")).toEqual([expect.objectContaining({ name: "guard", priority: 50, match: { ability_scope: "fs.*" }, blocking: true })]);
      const bad = profileBundle("r-guard", "repo-yaml", [{ name: "guard", event: "PreAbilityCall", match: { only_if_changed_paths: [] } }], { guard: "() => ({})" }, { version: "1.0.1" });
      const err = await runtime.bundles.install(bad).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(VcpError);
      expect(err).toMatchObject({ code: "INVALID_MATCHER" });
      expect((err as Error).message).toContain("hooks[0].match.only_if_changed_paths");
      expect(runtime.bundles.get("r-guard")?.version).toBe("1.0.0");
      // The installed guard still blocks fs.* calls only (match), and blocks because it is blocking.
      const fs = await runtime.fireProfile("repo-yaml", "PreAbilityCall", { input: { session_id: "s", ability_id: "fs.write" } });
      expect(fs).toMatchObject({ native: { error: "blocked_by_policy" }, exit_code: 2 });
      const net = await runtime.fireProfile("repo-yaml", "PreAbilityCall", { input: { session_id: "s", ability_id: "net.get" } });
      expect(net).toMatchObject({ native: {}, exit_code: 0 });
      expect(net.result.hook_results.map((h) => h.outcome)).toEqual(["skipped_matcher"]);
    } finally {
      await runtime.bundles.remove("r-guard");
    }
  }, 60_000);

  test("same action, different match: not deduplicated (the filter is part of the definition's identity)", async () => {
    await runtime.bundles.install(
      profileBundle("r-dup", "repo-yaml", [
        { name: "a_fs", event: "PreAbilityCall", action: "note", match: { ability_scope: "fs.*" } },
        { name: "b_any", event: "PreAbilityCall", action: "note" },
      ], { note: "() => ({ messages_to_user: ['seen'] })" }),
    );
    try {
      const out = await runtime.fireProfile("repo-yaml", "PreAbilityCall", { input: { session_id: "s", ability_id: "fs.read" } });
      expect(out.result.hook_results.map((h) => [h.hook, h.outcome])).toEqual([["a_fs", "ok"], ["b_any", "ok"]]);
      expect(out.native).toEqual({ messages_to_user: ["seen", "seen"] });
    } finally {
      await runtime.bundles.remove("r-dup");
    }
  }, 60_000);
});

describe("amplifier stampInput and reduceWithHooks", () => {
  test("the runtime stamps data.timestamp over the caller's; injections carry the hook and that timestamp; the size limit comes from the deployment", async () => {
    await runtime.bundles.install(
      profileBundle("a-inject", "amplifier", [
        { name: "small", event: "tool:pre", priority: 10 },
        { name: "big", event: "tool:pre", priority: 20 },
      ], {
        small: "(input) => ({ action: 'inject_context', context_injection: 'ts ' + (input.data.timestamp === 'mine' ? 'kept' : 'replaced') })",
        big: "() => ({ action: 'inject_context', context_injection: 'x'.repeat(21) })",
      }),
    );
    try {
      const before = Date.now();
      const out = await runtime.fireProfile("amplifier", "tool:pre", { input: { event: "tool:pre", data: { session_id: "s", timestamp: "mine" } } });
      const native = out.native as { injections: Array<{ hook: string; content: string; timestamp: string }>; errors: Array<{ code: string; hook: string; limit: number }> };
      expect(native.injections).toEqual([expect.objectContaining({ hook: "small", content: "ts replaced" })]);
      const stamped = Date.parse(native.injections[0]!.timestamp);
      expect(stamped).toBeGreaterThanOrEqual(before - 1000);
      expect(stamped).toBeLessThanOrEqual(Date.now() + 1000);
      expect(native.errors).toEqual([expect.objectContaining({ code: "INJECTION_TOO_LARGE", hook: "big", limit: 20 })]);
    } finally {
      await runtime.bundles.remove("a-inject");
    }
  }, 60_000);
});
