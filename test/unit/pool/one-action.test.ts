import { describe, expect, test } from "vitest";
import type { ChainTaskResult } from "../../../src/pool/api.js";
import { OneActionTasks } from "../../../src/pool/one-action.js";
import { hook } from "./fixtures.js";

// Sandbox.invokeAction's task and outcome, without a process.

describe("OneActionTasks", () => {
  test("one frozen one-hook list per hook object, so the plan key is reused; the input travels as it is behind its budget", () => {
    const tasks = new OneActionTasks();
    const h = hook("act", "sha256:a");
    const first = tasks.task({ hook: h, chainId: "c1", sessionId: "s1", inputJson: '{"x":1}', budgetMs: 250 });
    const second = tasks.task({ hook: h, chainId: "c2", sessionId: "s2", inputJson: "{}", budgetMs: 250 });
    expect(first.task.plan.hooks).toBe(second.task.plan.hooks);
    expect(Object.isFrozen(first.task.plan.hooks)).toBe(true);
    expect(first.task.plan.hooks).toEqual([h]);
    expect(first.invoke).toEqual({ inputJson: '{"x":1}', budgetMs: 250 });
    expect(first.task.request).toMatchObject({ chainId: "c1", session: { id: "s1" } });
    expect(tasks.task({ hook: hook("act", "sha256:a"), chainId: "c3", sessionId: "s", inputJson: "{}", budgetMs: 1 }).task.plan.hooks).not.toBe(first.task.plan.hooks);
  });

  test("a sessionless chain's action keeps its scope: the worker releases the chain's per-session contexts after it (PROFILES §8.3)", () => {
    const tasks = new OneActionTasks();
    const h = hook("act", "sha256:a");
    expect(tasks.task({ hook: h, chainId: "c1", sessionId: "(chain c1)", sessionScope: "chain", inputJson: "{}", budgetMs: 1 }).task.request).toMatchObject({ session: { id: "(chain c1)" }, sessionScope: "chain" });
    expect(tasks.task({ hook: h, chainId: "c2", sessionId: "s2", inputJson: "{}", budgetMs: 1 }).task.request).not.toHaveProperty("sessionScope");
  });

  test("the worker's outcome is passed through; a host death answers crashed, a watchdog overrun timeout", () => {
    const answered = (execution: object | undefined, invoked?: object): ChainTaskResult => ({ result: { hook_results: execution ? [execution] : [] }, events: [], ...(invoked ? { invoked } : {}) }) as unknown as ChainTaskResult;
    expect(OneActionTasks.outcome(answered({ outcome: "ok" }, { kind: "ok", output: {}, cpuMs: 1 }))).toEqual({ kind: "ok", output: {}, cpuMs: 1 });
    expect(OneActionTasks.outcome(answered({ outcome: "timeout", duration_ms: 4100 }))).toEqual({ kind: "timeout", elapsedMs: 4100 });
    expect(OneActionTasks.outcome(answered({ outcome: "crashed", error: "sandbox host crashed while the hook ran (signal SIGKILL)" }))).toEqual({
      kind: "crashed",
      message: "sandbox host crashed while the hook ran (signal SIGKILL)",
    });
    expect(OneActionTasks.outcome(answered(undefined))).toMatchObject({ kind: "crashed" });
  });
});
