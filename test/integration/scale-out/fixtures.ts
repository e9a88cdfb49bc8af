// Bundles and requests shared by the scale-out tests.
import type { Replica, ReplicaSet } from "../../support/replicas.js";

/** A VCP bundle whose one pre_inject hook annotates the chain with its version (so a chain says which revision ran). */
export function markerBundle(set: ReplicaSet, version: string, key?: { privateKeyPem: string; keyId: string }) {
  const manifest = {
    bundle: "marker",
    version,
    trust: "deployment",
    hooks: [{ name: "mark", type: "pre_inject", action: "mark", priority: 50, timeout_ms: 2000 }],
  };
  const code = `var __vcp_bundle = { mark: function (input) { return { status: "continue", annotations: { marker: ${JSON.stringify(version)} } }; } };`;
  return set.sign(manifest, code, key);
}

/** A gemini-cli bundle that blocks every BeforeTool event: a stateless profile chain. */
export function blockAllShell(set: ReplicaSet) {
  const manifest = {
    bundle: "block-shell",
    version: "1.0.0",
    profile: "gemini-cli",
    trust: "deployment",
    hooks: [{ name: "block_shell", event: "BeforeTool", matcher: "^run_shell_command$", action: "block", priority: 90, timeout_ms: 2000 }],
  };
  const code = `var __vcp_bundle = { block: function (input) { return { decision: "block", reason: "no shell here" }; } };`;
  return set.sign(manifest, code);
}

export const constitution = { id: "c1", version: "1", rules: [{ id: "r1", text: "Be kind." }] };

/** Open a session on `replica` (client token) and fire one pre_inject chain in it; the chain's result. */
export async function firePreInject(set: ReplicaSet, replica: Replica, sessionId: string): Promise<any> {
  const open = await replica.request("POST", "/v1/sessions", { token: set.tokens.client, body: { session_id: sessionId, context: { dimensions: {} }, constitution } });
  if (open.status !== 201 && open.status !== 409) throw new Error(`opening ${sessionId} on ${replica.name}: ${open.status} ${open.text}`);
  const fired = await replica.request("POST", `/v1/sessions/${sessionId}/chains/pre_inject`, {
    token: set.tokens.client,
    body: { event: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "Be kind." } },
  });
  if (fired.status !== 200) throw new Error(`firing on ${replica.name}: ${fired.status} ${fired.text}`);
  return fired.body;
}

/** The digest of `bundle` as `replica` runs it (undefined when not installed). */
export async function installedDigest(set: ReplicaSet, replica: Replica, bundle: string): Promise<string | undefined> {
  const r = await replica.request("GET", `/v1/bundles/${bundle}`, { token: set.tokens.operator });
  return r.status === 200 ? r.body.digest : undefined;
}

export async function status(set: ReplicaSet, replica: Replica): Promise<any> {
  const r = await replica.request("GET", "/v1/status", { token: set.tokens.operator });
  if (r.status !== 200) throw new Error(`status of ${replica.name}: ${r.status} ${r.text}`);
  return r.body;
}

export const geminiBeforeTool = {
  session_id: "g1",
  transcript_path: "/t",
  cwd: "/home/dev/app",
  hook_event_name: "BeforeTool",
  timestamp: "2026-11-26T04:30:00Z",
  tool_name: "run_shell_command",
  tool_input: { command: "ls" },
};
