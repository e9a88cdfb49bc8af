/**
 * The supervisor's last line (issue 10, finding 2): the runtime bounds inputs before they reach the
 * sandbox, but a chain request that still cannot be serialized for IPC must fail alone. Before, the
 * send threw after the chain was marked in flight and its plan marked as sent: every later chain of
 * that plan failed SANDBOX_START_FAILED ("sandbox host has no plan") and the process died.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import type { Sandbox } from "../../../src/pool/index.js";
import { CONTINUE_CODE, VcpError, bundle, hook, startSandbox, task } from "./helpers.js";

let sandbox: Sandbox;
const ok = bundle("okay", CONTINUE_CODE);

beforeAll(async () => {
  sandbox = await startSandbox({ threads: 1 });
  await sandbox.loadBundle(ok);
});
afterAll(() => sandbox?.close());

test("a request IPC cannot serialize is INVALID_INPUT; not in flight, and its plan keeps working", async () => {
  const hooks = [hook("ok_hook", ok)];
  const bad = task(hooks, 1, { n: 10n as unknown as number });
  const err = await sandbox.runChain(bad).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(VcpError);
  expect((err as VcpError).code).toBe("INVALID_INPUT");
  expect(sandbox.stats()).toMatchObject({ inFlight: 0, queued: 0, restarts: 0 });
  // The same hook list (the same plan key): its first dispatch failed, so the plan is sent again.
  const { result } = await sandbox.runChain(task(hooks, 1));
  expect(result.hook_results).toMatchObject([{ hook: "ok_hook", outcome: "ok" }]);
});
