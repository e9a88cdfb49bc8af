/**
 * The hook logic the bench runs, in one place, so the sandbox, the in-process floor and the
 * spawned-process baselines execute the same work. Each action is self-contained: its source text
 * (`fn.toString()`) is what runs inside an isolate and inside a spawned `node`.
 */
import type { BundleSource, HookType } from "../../src/index.js";

/** Read a few context fields, return continue with one annotation. */
export function checkAction(input: any): unknown {
  const ctx = input.context;
  const dims = ctx.dimensions || {};
  const sensitivity = typeof dims.data_sensitivity === "number" ? dims.data_sensitivity : 0;
  const topics = Array.isArray(ctx.recent_topics) ? ctx.recent_topics.length : 0;
  const flagged = ctx.user != null && ctx.user.tier === "free" && sensitivity > 7;
  return { status: "continue", annotations: { check: { sensitivity: sensitivity, topics: topics, flagged: flagged } } };
}

/** Replace one context field (the modifying hook of the `modify` variant). */
export function redactAction(input: any): unknown {
  const ctx = input.context;
  const dims = Object.assign({}, ctx.dimensions, { data_sensitivity: 0 });
  return { status: "modify", modified_context: Object.assign({}, ctx, { dimensions: dims, redacted: true }), annotations: { redacted: true } };
}

/** Fills its isolate's heap (for the recreate-after-OOM measurement). */
export function exhaustAction(_input: any): unknown {
  const hog: unknown[] = [];
  for (;;) hog.push({ a: new Array(1000).fill(hog.length), s: "x".repeat(64) + hog.length });
}

/** Counts calls in module state: a fresh isolate starts again at 1. */
export function countAction(_input: any): unknown {
  const g = globalThis as any;
  g.__benchCalls = (g.__benchCalls || 0) + 1;
  return { status: "continue", annotations: { calls: g.__benchCalls } };
}

/** esbuild-shaped bundle code: the prelude reads `__vcp_bundle`. */
export function bundleCode(actions: Record<string, (input: any) => unknown>): string {
  const entries = Object.entries(actions).map(([name, fn]) => `${JSON.stringify(name)}: (${fn.toString()})`);
  return `var __vcp_bundle = {\n${entries.join(",\n")}\n};`;
}

export interface BenchHook {
  name: string;
  type: HookType;
  action: string;
  priority: number;
  timeout_ms?: number;
}

export function benchBundle(name: string, hooks: BenchHook[], actions: Record<string, (input: any) => unknown>, memoryMb?: number): BundleSource {
  return {
    manifest: {
      bundle: name,
      version: "1.0.0",
      trust: "deployment",
      ...(memoryMb !== undefined ? { limits: { memory_mb: memoryMb } } : {}),
      hooks: hooks.map((h) => ({ timeout_ms: 1000, ...h })),
    },
    code: bundleCode(actions),
  };
}

/** The actions of a chain of `n` hooks in execution order; in the modify variant the first one modifies. */
export function chainActions(n: number, variant: "continue" | "modify"): Array<(input: any) => unknown> {
  return Array.from({ length: n }, (_, i) => (variant === "modify" && i === 0 ? redactAction : checkAction));
}

export interface PlainInput {
  context: Record<string, unknown>;
  constitution: unknown;
  event: unknown;
  session: unknown;
  chain_state: Record<string, unknown>;
}

/**
 * The floor: the same hook logic as in-process functions, one structuredClone of the input per hook
 * (the least isolation that still stops a hook mutating what the next one sees), modify chaining.
 */
export function floorChain(actions: ReadonlyArray<(input: any) => unknown>, input: PlainInput): { context: Record<string, unknown>; results: unknown[] } {
  let context = input.context;
  const results: unknown[] = [];
  for (const action of actions) {
    const result = action(structuredClone({ ...input, context })) as { status: string; modified_context?: Record<string, unknown> };
    if (result.status === "modify" && result.modified_context != null) context = result.modified_context;
    results.push(result);
  }
  return { context, results };
}
