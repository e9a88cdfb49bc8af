import { createHash } from "node:crypto";
import type { ChainRequest } from "../../../src/model/chain.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import { vcpPlanRef } from "../../../src/chain/plan.js";
import type { BundleCode } from "../../../src/sandbox-host/types.js";
import type { ChainTask } from "../../../src/pool/index.js";

/**
 * The pool from the sources: it forks the compiled host from dist/ (src/pool/host-entry.ts), so run
 * `npm run build` first (`npm test` does).
 */
export { startSandbox } from "../../../src/pool/index.js";
export { VcpError } from "../../../src/errors.js";

export function bundle(name: string, code: string, extra: Partial<BundleCode> = {}): BundleCode {
  return {
    name,
    digest: `sha256:${createHash("sha256").update(code).digest("hex")}`,
    code,
    trust: "deployment",
    ...extra,
  };
}

/** A bundle whose `act` appends its tag to `context.trail` and returns modify. */
export function trailBundle(name: string): BundleCode {
  return bundle(
    name,
    `var __vcp_bundle = { act(input) { return { status: "modify", modified_context: { ...input.context, trail: [...(input.context.trail || []), ${JSON.stringify(name)}] } }; } };`,
  );
}

export const CONTINUE_CODE = `var __vcp_bundle = { act(input) { return { status: "continue" }; } };`;
/** Spins until its timeout: the isolate's own timeout ends it. */
export const SPIN_CODE = `var __vcp_bundle = { act(input) { for (;;) {} } };`;
/** A fatal V8 error ("invalid size") that aborts the whole process, not just the isolate. */
export const KILLER_CODE = `var __vcp_bundle = { act(input) { return { status: "continue", n: '1'.repeat(2 ** 28).split('').length }; } };`;
/** Busy for `ms` of wall time, then continue: a slow but well-behaved hook. */
/**
 * Simple loop iterations per millisecond of one core, at full speed (≈ 2.3 million measured here).
 * Guest clocks are frozen for the whole call (a busy-wait on Date.now() never ends), so a hook stays
 * busy by iteration count: about `ms` on an idle core, longer under load; the tests give such hooks
 * timeouts several times that long.
 */
export const GUEST_ITERATIONS_PER_MS = 2_000_000;

export function busyCode(ms: number): string {
  return `var __vcp_bundle = { act(input) { let x = 0; for (let i = 0; i < ${ms * GUEST_ITERATIONS_PER_MS}; i++) x += i & 1; return { status: "continue", annotations: { x: x > 0 } }; } };`;
}

let seq = 1;

export function hook(name: string, b: BundleCode, extra: Partial<Omit<ResolvedHook, "action">> = {}): ResolvedHook {
  return Object.freeze({
    name,
    type: "pre_inject",
    priority: 50,
    timeout_ms: 2000,
    action: Object.freeze({ bundle: b.name, export: "act", digest: b.digest }),
    condition: null,
    enabled: true,
    metadata: Object.freeze({}),
    fail_closed: false,
    trust: "deployment",
    scope: "deployment",
    seq: seq++,
    ...extra,
  } satisfies ResolvedHook);
}

let chainNo = 0;

export function request(context: Record<string, unknown> = { user: "u1" }): ChainRequest {
  return {
    chainId: `chain-${++chainNo}`,
    context,
    constitution: { id: "const-1", version: "1", rules: [{ id: "r1", text: "be kind" }] },
    event: { kind: "test" },
    session: { id: "session-1" },
  };
}

export function task(hooks: readonly ResolvedHook[], revision = 1, context?: Record<string, unknown>): ChainTask {
  return { plan: { profile: vcpPlanRef("pre_inject"), revision, hooks }, request: request(context) };
}

/** Resolve once `predicate` holds, polling; a wait, never an assertion about time. */
export async function until(predicate: () => boolean, what: string, limitMs = 15_000): Promise<void> {
  const start = Date.now();
  while (!predicate()) {
    if (Date.now() - start > limitMs) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
