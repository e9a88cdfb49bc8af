import { describe, expect, test } from "vitest";
import { cascadeDisableTargets, countFailures, isCascade } from "../../../src/chain/cascade.js";
import { chainTimeBoundMs } from "../../../src/chain/deadline.js";
import type { HookExecution } from "../../../src/model/chain.js";
import type { Outcome } from "../../../src/model/result.js";

function ran(hook: string, outcome: Outcome, trust: HookExecution["trust"] = "deployment", scope: HookExecution["scope"] = "deployment"): HookExecution {
  return { hook, bundle: "b", scope, trust, status: "continue", outcome, duration_ms: 1 };
}

describe("cascades (spec §7.3)", () => {
  test("hooks that never ran or that the chain deadline stopped are not failures and are not counted as having failed", () => {
    const results = [ran("obs", "timeout", "session"), ran("pii", "skipped_deadline"), ran("audit", "deadline_exceeded")];
    expect(countFailures(results)).toEqual({ total: 2, failing: ["obs"] });
    expect(isCascade(countFailures(results))).toBe(false);
  });

  test("a session-trust hook's failures never disable a deployment hook", () => {
    // 3 of 4 failed: a cascade. Among deployment-trust hooks 1 of 2 failed: not theirs.
    const results = [ran("obs1", "timeout", "session"), ran("obs2", "error", "session"), ran("pii", "error"), ran("audit", "ok")];
    expect(isCascade(countFailures(results))).toBe(true);
    expect(cascadeDisableTargets(results).map((h) => h.hook)).toEqual(["obs1", "obs2"]);
  });

  test("session-scope hooks never count towards disabling a deployment-scope hook, even one of session trust", () => {
    const results = [
      ran("mine1", "error", "session", "session"),
      ran("mine2", "error", "session", "session"),
      ran("operator_observer", "error", "session", "deployment"),
      ran("operator_observer2", "ok", "session", "deployment"),
    ];
    expect(cascadeDisableTargets(results).map((h) => h.hook)).toEqual(["mine1", "mine2"]);
  });

  test("deployment hooks that cascade on their own are disabled", () => {
    const results = [ran("obs", "ok", "session"), ran("a", "error"), ran("b", "timeout"), ran("c", "ok", "system")];
    // 2 of 4 failed overall: exactly half is no cascade.
    expect(cascadeDisableTargets(results)).toEqual([]);
    const worse = [ran("a", "error"), ran("b", "timeout"), ran("c", "ok", "system")];
    expect(cascadeDisableTargets(worse).map((h) => h.hook)).toEqual(["a", "b"]);
  });

  test("a system hook is not disabled by deployment hooks' failures", () => {
    const results = [ran("a", "error"), ran("b", "error"), ran("sys", "error", "system"), ran("sys2", "ok", "system")];
    expect(cascadeDisableTargets(results).map((h) => h.hook)).toEqual(["a", "b"]);
  });
});

describe("chainTimeBoundMs", () => {
  test("without a deadline, the sum of timeout_ms; with one, one deadline per tier at most", () => {
    const hooks = [{ trust: "session" as const, timeout_ms: 5000 }, { trust: "deployment" as const, timeout_ms: 300 }, { trust: "system" as const, timeout_ms: 300 }];
    expect(chainTimeBoundMs(hooks, undefined)).toBe(5600);
    expect(chainTimeBoundMs(hooks, 1000)).toBe(600 + 1000);
    expect(chainTimeBoundMs(hooks, 100)).toBe(200);
  });
});
