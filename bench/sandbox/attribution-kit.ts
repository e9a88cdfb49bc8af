/**
 * Shared pieces of the attribution and fairness scenarios (bench/sandbox/scenarios/): a runtime with
 * the bench's sandbox settings, bundles built from guest source, and the guest code of the attacks.
 * Not a scenario itself (it lives outside scenarios/, which loadScenarios reads).
 */
import type { BundleInfo, ChainResult, FireInput, HookType, Runtime, RuntimeOptions } from "../../src/index.js";
import { createRuntime } from "../../src/index.js";
import { buildGuestText } from "../lib/guest-build.js";
import { CONSTITUTION, EVENTS, RUNTIME_OPTIONS } from "./fixtures.js";

/**
 * Guest module: `run` aborts the whole sandbox host process (a fatal V8 "invalid size" error, no
 * JavaScript runs afterwards, no catastrophic-error callback) when the context says `detonate`,
 * and otherwise continues. Attribution then rests on the slot records alone.
 */
export const DETONATOR_SOURCE = `export function run(input) {
  if (input.context.detonate === true) return { status: "continue", n: "1".repeat(2 ** 28).split("").length };
  return { status: "continue" };
}`;

/** Guest module: redacts \`context.text\` (a well-behaved deployment policy). */
export const REDACTOR_SOURCE = `export function run(input) {
  return { status: "modify", modified_context: { ...input.context, text: "[redacted]" } };
}`;

/**
 * Simple loop iterations per millisecond of one idle core (≈ 2 million measured here). The guest
 * clock is frozen for a whole call, so a busy-wait on Date.now() would never end: guests stay busy
 * by counting instead — about `ms` on an idle core, longer under load, so callers give such hooks
 * timeouts several times `ms`.
 */
export const GUEST_ITERATIONS_PER_MS = 2_000_000;

/** Guest statements that keep a core busy for about `ms` (see {@link GUEST_ITERATIONS_PER_MS}). */
export function busyLoop(ms: number): string {
  return `{ let x = 0; for (let i = 0; i < ${ms * GUEST_ITERATIONS_PER_MS}; i++) x += i & 1; if (x < 0) throw new Error("unreachable"); }`;
}

/** Guest module: busy for about `ms` of one core, then continues (well-behaved, just slow). */
export function busySource(ms: number): string {
  return `export function run(input) {
  ${busyLoop(ms)}
  return { status: "continue", annotations: { busy: ${ms} } };
}`;
}

export interface KitHook {
  name: string;
  type: HookType;
  priority: number;
  scope?: "deployment" | "session";
  /**
   * Default: the maximum. The scenarios are about attribution, not time, and isolated-vm ends ordinary
   * guest code on the wall clock: with 5 s a busy policy (150 ms of CPU) or a detonator on its way to
   * its fatal error timed out on a loaded 2-core machine (8 CPU burners, load ≈ 25).
   */
  timeout_ms?: number;
}

export async function startKitRuntime(extra: Partial<RuntimeOptions> = {}): Promise<Runtime> {
  return createRuntime({ ...RUNTIME_OPTIONS, sandbox: { ...RUNTIME_OPTIONS.sandbox }, ...extra } as RuntimeOptions);
}

export async function installKitBundle(runtime: Runtime, bundle: string, version: string, hooks: readonly KitHook[], source: string): Promise<BundleInfo> {
  return runtime.bundles.install({
    manifest: {
      bundle,
      version,
      trust: "deployment",
      limits: { memory_mb: 64 },
      hooks: hooks.map((h) => ({
        name: h.name,
        type: h.type,
        action: "run",
        priority: h.priority,
        timeout_ms: h.timeout_ms ?? 30_000,
        condition: null,
        ...(h.scope !== undefined ? { scope: h.scope } : {}),
      })),
    } as never,
    code: await buildGuestText(source),
  });
}

export function kitInput(type: HookType, sessionId: string, context: Record<string, unknown>): FireInput {
  return {
    session: { id: sessionId },
    context,
    constitution: structuredClone(CONSTITUTION) as FireInput["constitution"],
    event: structuredClone(EVENTS[type]) as never,
  };
}

export function quarantined(runtime: Runtime): string[] {
  return runtime.status().sandbox.quarantined;
}

/** The digest of an installed bundle; throws when it is not installed (the scenario cannot run). */
export function digestOf(runtime: Runtime, bundle: string): string {
  const info = runtime.bundles.get(bundle);
  if (info === undefined) throw new Error(`bundle ${bundle} is not installed`);
  return info.digest;
}

/** A one-line summary of a chain result for `observed`. */
export function describeChain(result: ChainResult): string {
  return result.hook_results.map((h) => `${h.bundle}/${h.hook}(${h.scope}):${h.outcome}`).join(" ");
}
