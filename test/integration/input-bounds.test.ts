/**
 * Input bounds through the public library API on the real sandbox (issue 10, finding 2): a context
 * nested ~6,000 deep once left its chain in flight, failed every later chain of the plan with
 * SANDBOX_START_FAILED, and killed the embedding process. Now every input is bounded before any work:
 * a clean INVALID_INPUT naming the field and the limit, and nothing changes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRuntime, VcpError, type Runtime } from "../../src/index.js";
import { buildGuestSource } from "../support/guest-build.js";

const constitution = { id: "c1", version: "1", rules: [{ id: "r1", text: "be kind" }] };
const event = { injection_target: "system", injection_format: "system_prompt" as const, raw_constitution: "be kind" };

function deep(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < depth; i++) v = { d: v };
  return v;
}

async function refusal(p: Promise<unknown>): Promise<VcpError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, "must be refused").toBeInstanceOf(VcpError);
  return err as VcpError;
}

let runtime: Runtime;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "vcp-bounds-"));
  // With an audit log, so "nothing audited" can be checked; the review's crash needed none.
  runtime = await createRuntime({ requireSignatures: false, dataDir, sandbox: { threads: 2 } });
  await runtime.bundles.install({
    manifest: {
      bundle: "echo",
      version: "1.0.0",
      trust: "deployment",
      hooks: [{ name: "echo", type: "pre_inject", action: "echo", priority: 50, timeout_ms: 2000, condition: null }],
    },
    code: await buildGuestSource(`export function echo(input) { return { status: "continue", annotations: { keys: Object.keys(input.context).length } }; }`),
  });
}, 60_000);

afterAll(async () => {
  await runtime?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

async function assertStillServes(): Promise<void> {
  const result = await runtime.fire("pre_inject", { session: "ok", context: { a: 1, b: 2 }, constitution, event });
  expect(result.status).toBe("completed");
  expect(result.hook_results).toMatchObject([{ hook: "echo", outcome: "ok", annotations: { keys: 2 } }]);
}

describe("fire() bounds every input before any work", () => {
  test.each([
    ["a context nested 6,000 deep (the review's attack)", { context: { deep: deep(6000) } }, "context", "max_depth"],
    ["a context one level over limits.json_depth", { context: deep(64) }, "context", "max_depth"],
    ["a constitution with a field nested 3,000 deep", { constitution: { ...constitution, extra: deep(3000) } }, "constitution", "max_depth"],
    ["an event nested 3,000 deep", { event: { ...event, extra: deep(3000) } }, "event", "max_depth"],
    ["session metadata nested 3,000 deep", { session: { id: "s", metadata: deep(3000) } }, "session", "max_depth"],
    ["a 2 MiB context", { context: { blob: "x".repeat(2 * 1024 * 1024) } }, "context", "max_bytes"],
    ["a context holding a BigInt", { context: { n: 10n } }, "context", "json"],
  ])("%s: INVALID_INPUT naming the field; nothing in flight, nothing audited, the runtime serves", async (_what, change, field, rule) => {
    const headBefore = runtime.audit.head();
    const err = await refusal(runtime.fire("pre_inject", { session: "s", context: { a: 1 }, constitution, event, ...change } as never));
    expect(err.code).toBe("INVALID_INPUT");
    expect(err.details).toMatchObject({ field, rule });
    expect(runtime.status().sandbox).toMatchObject({ inFlight: 0, queued: 0, restarts: 0, quarantined: [] });
    expect(runtime.audit.head()).toEqual(headBefore);
    await assertStillServes();
  });

  test("a cyclic context is refused, not a stack overflow", async () => {
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic["self"] = cyclic;
    const err = await refusal(runtime.fire("pre_inject", { session: "s", context: cyclic, constitution, event } as never));
    expect(err.details).toMatchObject({ field: "context", rule: "max_depth" });
    await assertStillServes();
  });

  test("an empty chain stays free: no work on the input, the caller's own objects handed back (nothing crosses a boundary)", async () => {
    const context = deep(6000);
    const result = await runtime.fire("on_violation", { session: "s", context, constitution, event } as never);
    expect(result).toMatchObject({ status: "completed", hook_results: [] });
    expect(result.context).toBe(context);
    await assertStillServes();
  });

  test("the same plan keeps working after many refusals, and the process is alive seconds later", async () => {
    for (let i = 0; i < 5; i++) await refusal(runtime.fire("pre_inject", { session: "s", context: deep(6000), constitution, event } as never));
    await new Promise((resolve) => setTimeout(resolve, 1500));
    await assertStillServes();
    expect(runtime.status().sandbox.restarts).toBe(0);
  });

  test("sessions.open and the pipeline refuse the same way and keep no state", async () => {
    await expect(runtime.sessions.open({ session_id: "deep", context: deep(6000), constitution })).rejects.toThrowError(
      expect.objectContaining({ code: "INVALID_INPUT", details: expect.objectContaining({ field: "context", rule: "max_depth" }) }),
    );
    expect(await runtime.sessions.get("deep")).toBeUndefined();
    await runtime.sessions.open({ session_id: "live", context: { a: 1 }, constitution });
    const err = await refusal(runtime.adapt("live", { selected: constitution, candidates: [constitution], selection_rationale: "r", selection_algorithm: "a", context: deep(6000) }));
    expect(err.details).toMatchObject({ field: "context" });
    expect((await runtime.sessions.get("live"))!.context).toEqual({ a: 1 });
    await runtime.sessions.close("live");
  });

  test("a value exactly at the depth bound is accepted wherever it travels next (session.metadata, event.transition_metadata)", async () => {
    const edge = deep(63); // 64 levels: the bound
    await runtime.sessions.open({ session_id: "edge", context: edge, constitution, metadata: edge });
    const moved = await runtime.transition("edge", { to: "next", trigger: "t", metadata: edge });
    expect(moved.outcome).toBe("transitioned");
    const adapted = await runtime.adapt("edge", { selected: constitution, candidates: [constitution], selection_rationale: "r", selection_algorithm: "a" });
    expect(adapted.outcome).toBe("inject");
    expect(adapted.trace.at(-1)!.hook_results).toMatchObject([{ hook: "echo", outcome: "ok" }]);
    await runtime.sessions.close("edge");
  });

  test("limits are configurable: inputLimits.maxDepth / maxBytes, reported by runtime.limits", async () => {
    const small = await createRuntime({ requireSignatures: false, audit: false, inputLimits: { maxDepth: 4, maxBytes: 2048 }, sandbox: { threads: 1 } });
    try {
      expect(small.limits).toEqual({ json_depth: 4, input_bytes: 2048 });
      await small.bundles.install({
        manifest: { bundle: "echo", version: "1.0.0", trust: "deployment", hooks: [{ name: "echo", type: "pre_inject", action: "echo", priority: 50, timeout_ms: 2000, condition: null }] },
        code: await buildGuestSource(`export function echo() { return { status: "continue" }; }`),
      });
      const err = await refusal(small.fire("pre_inject", { session: "s", context: { blob: "y".repeat(3000) }, constitution, event } as never));
      expect(err.message).toMatch(/^context: serializes to 3\d{3} bytes, above the limit of 2048 \(limits\.input_bytes\)$/);
    } finally {
      await small.close();
    }
    await expect(createRuntime({ audit: false, inputLimits: { maxDepth: 100_000 } })).rejects.toMatchObject({ code: "INVALID_CONFIG" });
  });
});

describe("the review's setting: default runtime, no audit log", () => {
  test("a 6,000-deep context leaves nothing in flight and the same plan keeps serving", async () => {
    const plain = await createRuntime({ requireSignatures: false, audit: false, sandbox: { threads: 1 } });
    try {
      await plain.bundles.install({
        manifest: {
          bundle: "echo",
          version: "1.0.0",
          trust: "deployment",
          hooks: [{ name: "echo", type: "pre_inject", action: "echo", priority: 50, timeout_ms: 2000, condition: null }],
        },
        code: await buildGuestSource(`export function echo() { return { status: "continue" }; }`),
      });
      const err = await refusal(plain.fire("pre_inject", { session: "s", context: deep(6000), constitution, event } as never));
      expect(err.details).toMatchObject({ field: "context", rule: "max_depth" });
      expect(plain.status().sandbox).toMatchObject({ inFlight: 0, restarts: 0, plansSent: 0 });
      const ok = await plain.fire("pre_inject", { session: "s", context: { a: 1 }, constitution, event });
      expect(ok.hook_results).toMatchObject([{ hook: "echo", outcome: "ok" }]);
    } finally {
      await plain.close();
    }
  }, 30_000);
});
