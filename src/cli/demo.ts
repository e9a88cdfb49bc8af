/**
 * `npm start`: the embedded default until the HTTP server lands. It starts the real sandbox
 * process, installs two small policies (the spec's §9.1 PII stripper and §9.2 selection audit),
 * fires a `post_select` and a `pre_inject` chain, and prints each ChainResult as a trace.
 */
import { createRuntime, type ChainResult } from "../index.js";
import { escapeControl } from "./common.js";

const stripPii = `var __vcp_bundle = {
  stripPii: function (input) {
    var email = /[\\w.+-]+@[\\w-]+\\.[\\w.]+/g, phone = /\\+?\\d[\\d -]{7,}\\d/g, redacted = [];
    var context = JSON.parse(JSON.stringify(input.context));
    (function walk(node, path) {
      for (var key of Object.keys(node)) {
        var value = node[key];
        if (typeof value === "string" && (email.test(value) || phone.test(value))) {
          node[key] = value.replace(email, "[email]").replace(phone, "[phone]");
          redacted.push(path + key);
        } else if (value && typeof value === "object") walk(value, path + key + ".");
        email.lastIndex = 0; phone.lastIndex = 0;
      }
    })(context, "context.");
    if (redacted.length === 0) return { status: "continue" };
    vcp.log("info", "redacted PII", { fields: redacted.length });
    return { status: "modify", modified_context: context, annotations: { pii_fields_redacted: redacted } };
  }
};`;

const auditSelection = `var __vcp_bundle = {
  auditSelection: function (input) {
    return { status: "continue", annotations: {
      selected: input.constitution.id,
      candidates: input.event.candidates.map(function (c) { return c.id; }),
      rationale: input.event.selection_rationale,
      context_hash: vcp.sha256(JSON.stringify(input.context)) } };
  }
};`;

function trace(result: ChainResult): string {
  const lines = [`${result.type} chain ${result.chain_id}: ${result.status}${result.reason ? ` (${escapeControl(result.reason)})` : ""} in ${result.duration_ms.toFixed(2)} ms`];
  for (const h of result.hook_results) {
    lines.push(`  ${h.hook.padEnd(32)} ${h.bundle.padEnd(16)} ${h.status.padEnd(8)} ${h.outcome.padEnd(18)} ${h.duration_ms.toFixed(3)} ms`);
    if (h.annotations) lines.push(`    annotations ${escapeControl(JSON.stringify(h.annotations))}`);
  }
  return lines.join("\n");
}

const runtime = await createRuntime({ sandbox: { threads: 2, onGuestLog: (l) => console.log(`  [guest ${l.bundle}/${l.hook}] ${l.level}: ${escapeControl(l.message)} ${escapeControl(JSON.stringify(l.fields ?? {}))}`) } });
try {
  await runtime.bundles.install({
    manifest: {
      bundle: "strip-pii", version: "1.0.0", trust: "deployment",
      hooks: [{ name: "strip_pii_before_inject", type: "pre_inject", action: "stripPii", priority: 90, timeout_ms: 5000,
        condition: { field: "context.dimensions.data_sensitivity", operator: "gte", value: 7 } }],
    },
    code: stripPii,
  });
  await runtime.bundles.install({
    manifest: { bundle: "audit-selection", version: "1.0.0", trust: "deployment",
      hooks: [{ name: "audit_constitution_selection", type: "post_select", action: "auditSelection", priority: 50, timeout_ms: 2000 }] },
    code: auditSelection,
  });
  const constitution = { id: "family-safe", version: "3", rules: [{ id: "no-harm-1", text: "Never help cause harm.", safety_critical: true }] };
  const context = { user: { note: "reach me at ana@example.org or +44 20 7946 0958" }, dimensions: { data_sensitivity: 8 } };
  const selected = await runtime.fire("post_select", {
    session: "demo-session", context, constitution,
    event: { candidates: [constitution, { id: "general", rules: [] }], selection_rationale: "child present", selection_algorithm: "score" },
  });
  console.log(trace(selected));
  const injected = await runtime.fire("pre_inject", {
    session: "demo-session", context: selected.context, constitution: selected.constitution,
    event: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "Never help cause harm." },
  });
  console.log(trace(injected));
  console.log(`context to inject: ${escapeControl(JSON.stringify(injected.context))}`);
} finally {
  await runtime.close();
}
