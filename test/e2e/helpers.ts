/**
 * End-to-end helpers: a real runtime (isolated-vm sandbox process) behind the real HTTP server on an
 * ephemeral loopback port. Everything comes from the sources; the runtime starts the compiled sandbox
 * host from dist/ (src/pool/host-entry.ts; `npm run build` first), as in test/conformance/sandbox.test.ts.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime, type VcpArtifact } from "../../src/index.js";
import { createArtifact, generateKeyPair, signArtifact } from "../../src/tooling.js";
import { createServer, type LiveSettings, type VcpServer } from "../../src/server/app.js";

export const TOKENS = { operator: "op-token-e2e-0123456789", client: "cl-token-e2e-0123456789" };
export const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

export const LIMITS = { body_bytes: 64 * 1024, bundle_bytes: 256 * 1024 };
export const ALLOWLIST = ["guard/session_observer"];

export function settings(overrides: Partial<LiveSettings> = {}): LiveSettings {
  return {
    auth: [
      { id: "ops", role: "operator", token_sha256: sha256(TOKENS.operator) },
      { id: "app", role: "client", token_sha256: sha256(TOKENS.client) },
    ],
    limits: LIMITS,
    sessionHookAllowlist: ALLOWLIST,
    ...overrides,
  };
}

export const keys = {
  ops: generateKeyPair(),
  low: generateKeyPair(),
  stranger: generateKeyPair(),
};

export interface Harness {
  url: string;
  server: VcpServer;
  runtime: Awaited<ReturnType<typeof createRuntime>>;
  dataDir: string;
  close(): Promise<void>;
}

export async function startHarness(options: { settings?: LiveSettings; runtime?: Record<string, unknown> } = {}): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), "vcp-e2e-"));
  const runtime = await createRuntime({
    dataDir,
    keyring: {
      keys: [
        { key_id: "ops", public_key: keys.ops.publicKeyPem, max_trust: "deployment" },
        { key_id: "low", public_key: keys.low.publicKeyPem, max_trust: "session" },
      ],
    },
    requireSignatures: true,
    maxBundleBytes: LIMITS.bundle_bytes,
    sessionHookAllowlist: [...ALLOWLIST, "guard/unlisted_observer"],
    sandbox: { threads: 2 },
    ...options.runtime,
  } as never);
  const server = await createServer({ runtime, settings: options.settings ?? settings() });
  const url = await server.listen("127.0.0.1", 0);
  return {
    url,
    server,
    runtime,
    dataDir,
    async close() {
      await server.close();
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The guest code of the test bundle: one action per pipeline hook type, plus session observers. */
export const GUARD_CODE = `var __vcp_bundle = {
  redact: function (input) {
    var ctx = JSON.parse(JSON.stringify(input.context));
    if (typeof ctx.note === "string" && ctx.note.indexOf("@") >= 0) {
      ctx.note = ctx.note.replace(/[\\w.+-]+@[\\w-]+\\.[\\w.]+/g, "[email]");
      return { status: "modify", modified_context: ctx, annotations: { redacted: true } };
    }
    return { status: "continue" };
  },
  audit: function (input) { return { status: "continue", annotations: { selected: input.constitution.id } }; },
  gate: function (input) {
    if (input.event.new_state === "forbidden") return { status: "abort", reason: "state forbidden" };
    return { status: "continue" };
  },
  resolve: function (input) { return { status: "continue" }; },
  judge: function (input) {
    if (input.event.severity === "critical") return { status: "abort", reason: "suppress critical" };
    return { status: "continue" };
  },
  observe: function (input) { return { status: "continue", annotations: { observed: true } }; },
  // ≈ 400 ms of one idle core by iteration count (guest clocks are frozen during a call).
  slow: function (input) { var x = 0; for (var i = 0; i < 8e8; i++) x += i & 1; return { status: "continue", annotations: { x: x > 0 } }; }
};`;

export function guardManifest(overrides: Record<string, unknown> = {}) {
  return {
    bundle: "guard",
    version: "1.0.0",
    trust: "deployment",
    hooks: [
      { name: "redact_pii", type: "pre_inject", action: "redact", priority: 90, timeout_ms: 1000 },
      { name: "audit_selection", type: "post_select", action: "audit", priority: 50, timeout_ms: 1000 },
      { name: "gate_transition", type: "on_transition", action: "gate", priority: 50, timeout_ms: 1000 },
      { name: "resolve_conflict", type: "on_conflict", action: "resolve", priority: 50, timeout_ms: 1000 },
      { name: "judge_violation", type: "on_violation", action: "judge", priority: 50, timeout_ms: 1000 },
      { name: "session_observer", type: "pre_inject", action: "observe", priority: 10, timeout_ms: 1000, scope: "session" },
      { name: "unlisted_observer", type: "pre_inject", action: "observe", priority: 10, timeout_ms: 1000, scope: "session" },
    ],
    ...overrides,
  };
}

export function signed(manifest: Record<string, unknown>, code: string, key = keys.ops, keyId = "ops"): VcpArtifact {
  return signArtifact(createArtifact(manifest, code) as VcpArtifact, key.privateKeyPem, keyId) as VcpArtifact;
}

export const constitution = {
  id: "family-safe",
  version: "3",
  rules: [{ id: "no-harm-1", text: "Never help cause harm.", safety_critical: true }, { id: "tone-1", text: "Be kind." }],
};

export const events = {
  pre_inject: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "Never help cause harm." },
  post_select: { candidates: [constitution], selection_rationale: "best", selection_algorithm: "score" },
};

export interface Reply {
  status: number;
  body: any;
  text: string;
  headers: Headers;
}

export async function call(
  base: string,
  method: string,
  path: string,
  options: { token?: string | null; body?: unknown; raw?: string; contentType?: string; headers?: Record<string, string> } = {},
): Promise<Reply> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.raw !== undefined) body = options.raw;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined) headers["content-type"] = options.contentType ?? "application/json";
  const res = await fetch(`${base}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
  const text = await res.text();
  let parsed: any = undefined;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, body: parsed, text, headers: res.headers };
}

export const op = (h: { url: string }, method: string, path: string, body?: unknown) => call(h.url, method, path, { token: TOKENS.operator, body });
export const cl = (h: { url: string }, method: string, path: string, body?: unknown) => call(h.url, method, path, { token: TOKENS.client, body });
