// A chain carries what it is (issue 25): an agent-profile event crosses to the chain backend as its
// profile and event — never as a fake VCP `pre_inject` chain — and neither its hooks nor its result
// claim a VCP hook type. A VCP chain crosses as profile `vcp` with its hook type as the event, and its
// ChainResult (spec §4.3) keeps its `type`.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, type Runtime } from "../../../src/index.js";
import type { BackendChainTask, ChainBackend } from "../../../src/pool/backend.js";
import type { ChainResult } from "../../../src/model/chain.js";
import { registerProfile } from "../../../src/profiles/index.js";
import { profileBundle, testBundle } from "../../support/bundles.js";
import { fireInput } from "../../support/fixtures.js";
import echoProfile from "../../support/echo-profile.js";
import { createVmBackend } from "../../support/vm-backend.js";

registerProfile(echoProfile);

let runtime: Runtime;
const tasks: BackendChainTask[] = [];
const answers: ChainResult[] = [];
const client = { id: "app", role: "client" } as const;

beforeAll(async () => {
  const vm = createVmBackend();
  // The fake sandbox records what crosses and what comes back.
  const backend: ChainBackend = {
    ...vm,
    stats: () => vm.stats(),
    runChain: async (task) => {
      tasks.push(task);
      const ran = await vm.runChain(task);
      answers.push(ran.result);
      return ran;
    },
  };
  runtime = await createRuntime({ backend });
  await runtime.bundles.install(
    profileBundle("guard", "echo", [{ name: "no_rm", matcher: "^rm$" }], { no_rm: "() => ({ decision: 'block', reason: 'no rm' })" }, {}, "Check"),
  );
  await runtime.bundles.install(testBundle("vgate", [{ name: "gate", type: "pre_inject", priority: 50 }], { gate: "function () { return { status: 'continue' }; }" }));
}, 60_000);
afterAll(async () => {
  await runtime?.close();
});

describe("what crosses to the chain backend", () => {
  test("an agent event crosses as its profile and event; no hook, plan or result claims a VCP hook type", async () => {
    tasks.length = 0;
    answers.length = 0;
    const out = await runtime.fireProfile("echo", "Check", { input: { session_id: "s1", tool: "rm" }, principal: client });
    expect(out.exit_code).toBe(2);
    expect(tasks).toHaveLength(1);
    const plan = tasks[0]!.plan;
    expect(plan.profile).toMatchObject({ id: "echo", event: "Check" });
    expect(plan).not.toHaveProperty("type");
    for (const hook of plan.hooks) {
      expect(hook).toMatchObject({ profile: "echo", event: "Check" });
      expect(hook).not.toHaveProperty("type");
    }
    expect(answers[0]).not.toHaveProperty("type");
    expect(answers[0]!.profile).toMatchObject({ profile: "echo", event: "Check" });
  });

  test("a VCP chain crosses as profile vcp with its hook type as the event; its ChainResult keeps `type`", async () => {
    tasks.length = 0;
    const result = await runtime.fire("pre_inject", fireInput("pre_inject", {}, "v1"));
    expect(tasks).toHaveLength(1);
    expect(tasks[0]!.plan.profile).toMatchObject({ id: "vcp", event: "pre_inject" });
    expect(tasks[0]!.plan.hooks.map((h) => h.type)).toEqual(["pre_inject"]);
    expect(result).toMatchObject({ type: "pre_inject", status: "completed" });
  });
});
