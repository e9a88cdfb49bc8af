// Select before crossing (issue 25 item 1): matchers and conditions run in the fire path, before
// anything is sent to the chain backend (the sandbox process). An event no hook selects makes no
// backend call at all; otherwise only the selected hooks are sent, and the result still lists every
// hook of the plan in plan order. Both walks: an agent-profile event and a VCP chain.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, type Runtime } from "../../../src/index.js";
import type { BackendChainTask, ChainBackend } from "../../../src/pool/backend.js";
import { registerProfile } from "../../../src/profiles/index.js";
import { profileBundle, testBundle } from "../../support/bundles.js";
import { fireInput } from "../../support/fixtures.js";
import echoProfile from "../../support/echo-profile.js";
import { createVmBackend } from "../../support/vm-backend.js";

registerProfile(echoProfile);

let runtime: Runtime;
const tasks: BackendChainTask[] = [];
const client = { id: "app", role: "client" } as const;

beforeAll(async () => {
  const vm = createVmBackend();
  // The fake sandbox: counts what crosses.
  const backend: ChainBackend = { ...vm, stats: () => vm.stats(), runChain: (task) => (tasks.push(task), vm.runChain(task)) };
  runtime = await createRuntime({ backend });
  await runtime.bundles.install(
    profileBundle("sel", "echo", [
      { name: "writes", matcher: "^write$" },
      { name: "rm_guard", matcher: "^rm$", condition: { field: "args", operator: "matches", value: "-rf" } },
    ], { writes: "() => ({ decision: 'block', reason: 'no writes' })", rm_guard: "() => ({ decision: 'block', reason: 'no rm -rf' })" }, {}, "Check"),
  );
  await runtime.bundles.install(
    testBundle("vsel", [
      { name: "secret_gate", type: "pre_inject", priority: 90, condition: { field: "context.secret", operator: "eq", value: true } },
      { name: "audit_all", type: "pre_inject", priority: 10 },
    ], { secret_gate: "function () { return { status: 'abort', reason: 'secret' }; }", audit_all: "function () { return { status: 'continue' }; }" }),
  );
}, 60_000);
afterAll(async () => {
  await runtime?.close();
});

const outcomes = (results: ReadonlyArray<{ hook: string; outcome: string }>) => results.map((h) => [h.hook, h.outcome]);

describe("an agent-profile event", () => {
  test("no matcher selects a hook: no backend call, every hook skipped_matcher, the neutral answer", async () => {
    tasks.length = 0;
    const out = await runtime.fireProfile("echo", "Check", { input: { session_id: "s1", tool: "ls" }, principal: client });
    expect(tasks).toHaveLength(0);
    expect(out.exit_code).toBe(0);
    expect(outcomes(out.result.hook_results)).toEqual([["writes", "skipped_matcher"], ["rm_guard", "skipped_matcher"]]);
  });

  test("a matching hook whose condition is false on the native input: no backend call, skipped_predicate", async () => {
    tasks.length = 0;
    const out = await runtime.fireProfile("echo", "Check", { input: { session_id: "s1", tool: "rm", args: "-i file" }, principal: client });
    expect(tasks).toHaveLength(0);
    expect(out.exit_code).toBe(0);
    expect(outcomes(out.result.hook_results)).toEqual([["writes", "skipped_matcher"], ["rm_guard", "skipped_predicate"]]);
  });

  test("only the selected hook crosses; the result lists every hook in plan order", async () => {
    tasks.length = 0;
    const out = await runtime.fireProfile("echo", "Check", { input: { session_id: "s1", tool: "rm", args: "-rf /" }, principal: client });
    expect(tasks).toHaveLength(1);
    expect(tasks[0]!.plan.hooks.map((h) => h.name)).toEqual(["rm_guard"]);
    expect(out).toMatchObject({ exit_code: 2, native: { decision: "block", reason: "no rm -rf" } });
    expect(outcomes(out.result.hook_results)).toEqual([["writes", "skipped_matcher"], ["rm_guard", "ok"]]);
  });
});

describe("a VCP chain", () => {
  test("a condition that is false is decided before crossing; the hooks after it cross", async () => {
    tasks.length = 0;
    const result = await runtime.fire("pre_inject", fireInput("pre_inject", { secret: false }, "v1"));
    expect(tasks).toHaveLength(1);
    expect(tasks[0]!.plan.hooks.map((h) => h.name)).toEqual(["audit_all"]);
    expect(result.status).toBe("completed");
    expect(outcomes(result.hook_results)).toEqual([["secret_gate", "skipped_predicate"], ["audit_all", "ok"]]);
  });

  test("a chain whose only candidate's condition is false makes no backend call", async () => {
    tasks.length = 0;
    const result = await runtime.fire("pre_inject", { ...fireInput("pre_inject", { secret: false }, "v2"), hooks: [{ name: "secret_gate", scope: "deployment" }] });
    expect(tasks).toHaveLength(0);
    expect(result).toMatchObject({ status: "completed", aborted_by: null });
    expect(outcomes(result.hook_results)).toEqual([["secret_gate", "skipped_predicate"]]);
  });

  test("a condition that holds crosses with the whole rest of the chain, and aborts it", async () => {
    tasks.length = 0;
    const result = await runtime.fire("pre_inject", fireInput("pre_inject", { secret: true }, "v3"));
    expect(tasks).toHaveLength(1);
    expect(tasks[0]!.plan.hooks.map((h) => h.name)).toEqual(["secret_gate", "audit_all"]);
    expect(result).toMatchObject({ status: "aborted", aborted_by: "secret_gate", reason: "secret" });
  });
});
