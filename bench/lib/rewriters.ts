/**
 * Ordinary rewriting policies and the input that makes them write the most audit (issue 24, "audit
 * amplification"): four deployment pre_inject hooks that each redact e-mail addresses from one part
 * of the context (`context.notes.<part>`) and annotate which fields they changed, as
 * policies/strip-pii does. The client controls only the input. Used by bench/audit-amplification.ts
 * and the test of the per-chain audit budget.
 */
import type { BundleSource } from "../../src/index.js";
import { makeContext } from "./fixtures.js";

const PARTS = ["a", "b", "c", "d"] as const;

export const REWRITERS: BundleSource = {
  manifest: {
    bundle: "rewriters",
    version: "1.0.0",
    trust: "deployment",
    hooks: PARTS.map((part, i) => ({ name: `redact_${part}`, type: "pre_inject", action: `redact_${part}`, priority: 90 - i, timeout_ms: 5000 })),
  } as unknown as BundleSource["manifest"],
  code: `function redact(input, part) {
  var notes = input.context.notes && input.context.notes[part];
  if (!Array.isArray(notes)) return { status: "continue" };
  var fields = [];
  var out = notes.map(function (text, i) {
    var next = String(text).replace(/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+/g, "[email]");
    if (next !== text) fields.push("context.notes." + part + "[" + i + "]");
    return next;
  });
  if (fields.length === 0) return { status: "continue" };
  var notesOut = Object.assign({}, input.context.notes);
  notesOut[part] = out;
  return { status: "modify", modified_context: Object.assign({}, input.context, { notes: notesOut }), annotations: { redacted_fields: fields } };
}
var __vcp_bundle = {
${PARTS.map((part) => `  redact_${part}: function (input) { return redact(input, "${part}"); }`).join(",\n")}
};`,
};

/**
 * A ≈ 200 KB context (well under the 1 MiB input limit) whose every part holds 900 addresses: each
 * hook's diff lands just under the 64 KiB per-hook diff cap, and its field list well under the
 * annotation caps, so no existing per-hook cap cuts anything.
 */
export function amplifyingContext(): Record<string, unknown> {
  const addresses = (part: string) => Array.from({ length: 900 }, (_, i) => `${part}:${`n${i} ${"x".repeat(30)}${i}@example.org`.slice(0, 60)}`);
  return { ...makeContext(42, 2048), notes: Object.fromEntries(PARTS.map((part) => [part, addresses(part)])) };
}
