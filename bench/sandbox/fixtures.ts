/**
 * Fixtures of the sandbox bench: the runtime options and fire inputs of the adversarial corpus
 * (sandbox/corpus/README.md "Fixtures"), and the well-behaved 3-hook chain that runs as background
 * load and as the "still serves" check after every case.
 *
 * The well-behaved chain is on `on_transition`, the one type no corpus case may use, so an attack
 * hook never runs inside a background chain and a background hook never runs inside an attack chain.
 */
import { isDeepStrictEqual } from "node:util";
import type { BundleSource, ChainResult, FireInput, Runtime, RuntimeOptions } from "../../src/index.js";
import { buildGuestText } from "../lib/guest-build.js";
import type { CorpusCase } from "./corpus.js";
import { profileAttackBundle } from "./profile-case.js";

export const RUNTIME_OPTIONS = {
  sandbox: {
    threads: 2,
    limits: { isolateMemoryMb: 64, resultBytes: 1_048_576 },
    fetch: { allowHosts: [], denyLlmHosts: ["api.openai.com", "api.anthropic.com"] },
  },
  requireSignatures: false,
  // Every case installs and removes a bundle; the per-principal registry rate limit would refuse
  // the 31st change within a minute.
  registrationsPerMinute: 100_000,
} as const;

export const BUNDLE_MEMORY_MB = 64;

export const BASE_CONTEXT = Object.freeze({ text: "hello", dimensions: Object.freeze({ data_sensitivity: 3 }) });
export const CONSTITUTION = { id: "c1", version: "1", rules: [{ id: "r1", text: "be kind" }] };
export const EVENTS: Record<string, Record<string, unknown>> = {
  pre_inject: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "be kind" },
  post_select: { candidates: [CONSTITUTION], selection_rationale: "only one", selection_algorithm: "fixed" },
  on_transition: { previous_state: "idle", new_state: "active", trigger: "sandbox-bench" },
  on_conflict: { conflicting_rules: [], composition_strategy: "most_restrictive", conflict_severity: "warning" },
  on_violation: { output: "text", violated_rules: [], severity: "minor", violation_evidence: "none", retry_count: 0 },
  periodic: { elapsed_ms: 1000, interval_ms: 1000, tick_count: 1 },
};

export function attackBundleName(c: CorpusCase): string {
  return `atk-${c.id}`;
}
export function attackHookName(c: CorpusCase): string {
  return `atk_${c.id.replaceAll("-", "_")}`;
}

/** The corpus README's default input for call `call` of a case. */
export function attackInput(c: CorpusCase, call: number, probeUrl: string): FireInput {
  const context: Record<string, unknown> = { ...structuredClone(BASE_CONTEXT), ...(c.input.context ?? {}) };
  if (c.networkProbe) context["probe_url"] = probeUrl;
  return {
    session: { id: c.sessions[call] ?? `s-${c.id}` },
    context,
    constitution: (c.input.constitution ?? structuredClone(CONSTITUTION)) as FireInput["constitution"],
    event: (c.input.event ?? structuredClone(EVENTS[c.hook.type ?? "pre_inject"])) as never,
  };
}

export function attackBundle(c: CorpusCase, code: string): BundleSource {
  if (c.profile !== null) return profileAttackBundle(c, code, { bundle: attackBundleName(c), hook: attackHookName(c), memoryMb: BUNDLE_MEMORY_MB });
  return {
    manifest: {
      bundle: attackBundleName(c),
      version: "1.0.0",
      trust: c.hook.trust,
      limits: { memory_mb: BUNDLE_MEMORY_MB },
      isolation: c.isolation,
      hooks: [
        {
          name: attackHookName(c),
          type: c.hook.type!,
          action: "action",
          priority: 50,
          timeout_ms: c.hook.timeout_ms,
          fail_closed: c.hook.fail_closed,
          condition: c.hook.condition as never,
        },
      ],
    } as BundleSource["manifest"],
    code,
  };
}

// ── the well-behaved chain ─────────────────────────────────────────────────────────────────────

/** Three bundles, one hook each, in execution order (priority descending). */
const WELL_BEHAVED = [
  {
    bundle: "wb-redact",
    hook: "wb_redact",
    priority: 90,
    // Modifies: the next hooks and the caller must see the new context.
    source: `export function run(input) {
  return { status: "modify", modified_context: { ...input.context, canary: "served", seen_text: input.context.text }, annotations: { step: 1 } };
}`,
  },
  {
    bundle: "wb-inspect",
    hook: "wb_inspect",
    priority: 80,
    // Reports pollution of its own isolate's built-ins and that it saw hook 1's modification.
    source: `export function run(input) {
  return { status: "continue", annotations: { polluted: typeof ({}).polluted, array_map: [1, 2].map((x) => x * 3), saw: input.context.canary } };
}`,
  },
  {
    bundle: "wb-count",
    hook: "wb_count",
    priority: 70,
    source: `export function run(input) {
  let n = 0;
  for (const ch of String(input.context.text)) n += ch.charCodeAt(0);
  return { status: "continue", annotations: { checksum: n } };
}`,
  },
] as const;

export const WELL_BEHAVED_BUNDLES = WELL_BEHAVED.map((w) => w.bundle);

export async function installWellBehaved(runtime: Runtime): Promise<void> {
  for (const w of WELL_BEHAVED) {
    await runtime.bundles.install({
      manifest: {
        bundle: w.bundle,
        version: "1.0.0",
        trust: "deployment",
        limits: { memory_mb: BUNDLE_MEMORY_MB },
        hooks: [{ name: w.hook, type: "on_transition", action: "run", priority: w.priority, timeout_ms: 5000, condition: null }],
      },
      code: await buildGuestText(w.source),
    });
  }
}

export function wellBehavedInput(sessionId: string, text: string): FireInput<"on_transition"> {
  return {
    session: { id: sessionId },
    context: { text, dimensions: { data_sensitivity: 1 } },
    constitution: structuredClone(CONSTITUTION),
    event: structuredClone(EVENTS["on_transition"]) as never,
  };
}

function checksum(text: string): number {
  let n = 0;
  for (const ch of text) n += ch.charCodeAt(0);
  return n;
}

/**
 * Whether a well-behaved chain came back exactly right: null if so, otherwise a short kind
 * (`hook:crashed`, `wrong-result`, …) for the blast-radius counts and a detail for the report.
 */
export function checkWellBehaved(result: ChainResult, text: string): { kind: string; detail: string } | null {
  const hooks = result.hook_results;
  const bad = hooks.find((h) => h.outcome !== "ok");
  if (bad) return { kind: `hook:${bad.outcome}`, detail: `${bad.hook} ${bad.outcome}: ${String(bad.error ?? "").slice(0, 160)}` };
  if (result.status !== "completed" || result.aborted_by !== null) return { kind: "wrong-result", detail: `chain ${result.status}` };
  if (hooks.length !== 3 || hooks.map((h) => h.hook).join() !== WELL_BEHAVED.map((w) => w.hook).join()) {
    return { kind: "wrong-result", detail: `hooks ran: ${hooks.map((h) => h.hook).join(", ")}` };
  }
  const context = { text, dimensions: { data_sensitivity: 1 }, canary: "served", seen_text: text };
  if (!isDeepStrictEqual(result.context, context)) return { kind: "wrong-result", detail: `context ${JSON.stringify(result.context).slice(0, 160)}` };
  if (!isDeepStrictEqual(result.constitution, CONSTITUTION)) return { kind: "wrong-result", detail: "constitution changed" };
  if (!isDeepStrictEqual(hooks[1]?.annotations, { polluted: "undefined", array_map: [3, 6], saw: "served" })) {
    return { kind: "wrong-result", detail: `inspect annotations ${JSON.stringify(hooks[1]?.annotations).slice(0, 160)}` };
  }
  if (hooks[2]?.annotations?.["checksum"] !== checksum(text)) return { kind: "wrong-result", detail: "checksum hook saw a different context" };
  // The bench's own process must not have been polluted through parsing a result.
  if (({} as Record<string, unknown>)["polluted"] !== undefined || Object.getOwnPropertyNames(Object.prototype).includes("polluted")) {
    return { kind: "host-polluted", detail: "Object.prototype of the bench process was polluted" };
  }
  return null;
}

export type { RuntimeOptions };
