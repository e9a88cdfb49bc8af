// One sandboxed action as its own task (Sandbox.invokeAction): what a chain holding exec hooks uses for
// its sandboxed hooks, since its executor runs in the main process (PROFILES §6). The action's raw
// outcome comes back (the main-process executor decodes it); a spinning action times out; an action
// that kills the host is answered `crashed` and its bundle quarantined, as in a whole chain; the hook
// list crosses to the host once per hook.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Sandbox } from "../../../src/pool/index.js";
import type { InvokeRequest } from "../../../src/model/chain.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import { KILLER_CODE, SPIN_CODE, bundle, hook, startSandbox } from "./helpers.js";

const NATIVE = `var __vcp_bundle = { act(input) { return { decision: input.tool === "rm" ? "block" : "allow", reason: "saw " + input.tool }; } };`;

let n = 0;
const call = (h: ResolvedHook, input: unknown, budgetMs = 2000): InvokeRequest => ({ hook: h, chainId: `inv-${++n}`, sessionId: "s1", inputJson: JSON.stringify(input), budgetMs, native: true });

describe("sandbox pool: one-action tasks", () => {
  let sandbox: Sandbox;
  const native = bundle("native", NATIVE);
  const spin = bundle("spin", SPIN_CODE);
  const killer = bundle("killer-one", KILLER_CODE, { memoryMb: 64 });

  beforeAll(async () => {
    sandbox = await startSandbox({ threads: 1 });
    for (const b of [native, spin, killer]) await sandbox.loadBundle(b);
  });
  afterAll(() => sandbox?.close());

  test("the action's own result comes back as JSON text, undecoded; the hook list is sent once", async () => {
    const h = hook("n", native);
    const first = await sandbox.invokeAction(call(h, { tool: "rm" }));
    expect(first.kind).toBe("returned");
    expect(JSON.parse((first as { resultJson: string }).resultJson)).toEqual({ decision: "block", reason: "saw rm" });
    const sent = sandbox.stats().plansSent;
    const second = await sandbox.invokeAction(call(h, { tool: "ls" }));
    expect(JSON.parse((second as { resultJson: string }).resultJson)).toEqual({ decision: "allow", reason: "saw ls" });
    expect(sandbox.stats().plansSent).toBe(sent);
    expect(sandbox.stats()).toMatchObject({ inFlight: 0, queued: 0 });
  }, 60_000);

  test("a spinning action is stopped at its budget: timeout", async () => {
    const out = await sandbox.invokeAction(call(hook("s", spin, { timeout_ms: 300 }), {}, 300));
    expect(out.kind).toBe("timeout");
  }, 60_000);

  test("an action that kills the host: crashed, its bundle quarantined, the host restarted", async () => {
    const out = await sandbox.invokeAction(call(hook("k", killer), {}));
    expect(out).toMatchObject({ kind: "crashed" });
    expect(sandbox.stats().quarantined).toContain(killer.digest);
    expect(sandbox.stats().restarts).toBe(1);
    // The next action of another bundle runs on the new host.
    const after = await sandbox.invokeAction(call(hook("n2", native), { tool: "ls" }));
    expect(after.kind).toBe("returned");
    // A quarantined bundle's action is not run again.
    expect(await sandbox.invokeAction(call(hook("k2", killer), {}))).toMatchObject({ kind: "crashed", message: expect.stringMatching(/quarantined/) });
  }, 120_000);
});
