/**
 * Two HTTP clients and an operator against one real server and runtime, for the tenant-isolation
 * scenarios (bench/sandbox/scenarios/http-*.ts) and the e2e tests of the same mechanics. Each start
 * gets its own data directory; close() stops everything and removes it.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRuntime, type BundleSource, type Runtime, type RuntimeOptions } from "../../src/index.js";
import { createServer, type VcpServer } from "../../src/server/index.js";

export const TENANT_TOKENS = {
  operator: "scn-operator-token-6b2c0f",
  a: "scn-client-a-token-91d7e3",
  b: "scn-client-b-token-4a08bc",
  /** The human who answers client A's approvals (role approver, approves client-a only). */
  approverA: "scn-approver-a-token-5e71d2",
} as const;

/** Principal ids of the tokens above (what `owner` shows). */
export const TENANT_IDS = { operator: "ops", a: "client-a", b: "client-b", approverA: "approver-a" } as const;

const sha256 = (s: string): string => createHash("sha256").update(s).digest("hex");

/** A bundle with a deployment hook per pipeline type and one allowlisted session hook. */
export const TENANT_BUNDLE: BundleSource = {
  manifest: {
    bundle: "tenant-probe",
    version: "1.0.0",
    trust: "deployment",
    hooks: [
      { name: "mark", type: "pre_inject", action: "mark", priority: 50, timeout_ms: 1000 },
      { name: "gate", type: "on_transition", action: "pass", priority: 50, timeout_ms: 1000 },
      { name: "resolve", type: "on_conflict", action: "pass", priority: 50, timeout_ms: 1000 },
      { name: "judge", type: "on_violation", action: "pass", priority: 50, timeout_ms: 1000 },
      { name: "pick", type: "post_select", action: "pass", priority: 50, timeout_ms: 1000 },
      { name: "watch", type: "pre_inject", action: "watch", priority: 10, timeout_ms: 1000, scope: "session" },
    ],
  },
  code: `var __vcp_bundle = {
  mark: function (input) { return { status: "continue", annotations: { session: input.session.id } }; },
  pass: function () { return { status: "continue" }; },
  watch: function () { return { status: "continue", annotations: { watched: true } }; }
};`,
};

export const CONSTITUTION = { id: "c1", version: "1", rules: [{ id: "r1", text: "be kind" }] };
export const PRE_INJECT_EVENT = { injection_target: "system", injection_format: "system_prompt", raw_constitution: "be kind" };

export interface TenantServer {
  url: string;
  runtime: Runtime;
  server: VcpServer;
  dataDir: string;
  close(): Promise<void>;
}

/** `bundles`: installed after the tenant probe (event-profile bundles for the profile-boundary scenarios). */
export async function startTenantServer(options: { maxSessionsPerOwner?: number; bodyBytes?: number; bundles?: readonly BundleSource[]; approvals?: RuntimeOptions["approvals"]; streams?: { perPrincipal?: number; bufferBytes?: number } } = {}): Promise<TenantServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "vcp-tenants-"));
  let runtime: Runtime | undefined;
  try {
    runtime = await createRuntime({
      dataDir,
      requireSignatures: false,
      sessionHookAllowlist: ["tenant-probe/watch"],
      registrationsPerMinute: 10_000,
      ...(options.maxSessionsPerOwner !== undefined ? { maxSessionsPerOwner: options.maxSessionsPerOwner } : {}),
      ...(options.approvals !== undefined ? { approvals: options.approvals } : {}),
      sandbox: { threads: 1 },
    });
    await runtime.bundles.install(TENANT_BUNDLE);
    for (const bundle of options.bundles ?? []) await runtime.bundles.install(bundle);
    const server = await createServer({
      runtime,
      settings: {
        auth: [
          { id: TENANT_IDS.operator, role: "operator", token_sha256: sha256(TENANT_TOKENS.operator) },
          { id: TENANT_IDS.a, role: "client", token_sha256: sha256(TENANT_TOKENS.a) },
          { id: TENANT_IDS.b, role: "client", token_sha256: sha256(TENANT_TOKENS.b) },
          { id: TENANT_IDS.approverA, role: "approver", token_sha256: sha256(TENANT_TOKENS.approverA), approves: [TENANT_IDS.a] },
        ],
        limits: {
          body_bytes: options.bodyBytes ?? 64 * 1024,
          bundle_bytes: 256 * 1024,
          ...(options.streams?.perPrincipal !== undefined ? { streams_per_principal: options.streams.perPrincipal } : {}),
          ...(options.streams?.bufferBytes !== undefined ? { stream_buffer_bytes: options.streams.bufferBytes } : {}),
        },
        sessionHookAllowlist: ["tenant-probe/watch"],
      },
    });
    const url = await server.listen("127.0.0.1", 0);
    const rt = runtime;
    return {
      url,
      runtime: rt,
      server,
      dataDir,
      async close() {
        try {
          await server.close();
          await rt.close();
        } finally {
          rmSync(dataDir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    await runtime?.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
}

export interface Reply {
  status: number;
  body: any;
}

/** One JSON request; `token` null sends no Authorization header. */
export async function send(base: string, method: string, path: string, token: string | null, body?: unknown): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(`${base}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: res.status, body: parsed };
}

export interface HugeBodyOutcome {
  /** Status of the answer, or 0 when the connection ended without one. */
  status: number;
  code: string | undefined;
  /** Bytes the client had handed to the socket when the answer came (what the server could have read at most, plus kernel buffers). */
  sentBeforeAnswer: number;
  /** How long the answer took. */
  ms: number;
}

/**
 * Stream `totalBytes` of JSON-looking body to `method path`, with a Content-Length (`declared`) or
 * chunked, and stop as soon as the server answers. A server that reads a body it will refuse makes
 * `sentBeforeAnswer` reach `totalBytes`; one that answers from the headers stops the upload after at
 * most the socket buffers (a few MB on loopback).
 */
export function sendHugeBody(
  base: string,
  method: string,
  path: string,
  options: { totalBytes: number; declared: boolean; token?: string; timeoutMs?: number },
): Promise<HugeBodyOutcome> {
  const url = new URL(path, base);
  const chunk = Buffer.alloc(64 * 1024, 0x20); // spaces: valid JSON whitespace, if anything parses it
  const headers: Record<string, string | number> = { "content-type": "application/json" };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  // Node's client frames GET/DELETE bodies only when told: without either header the bytes would be
  // read as the next request.
  if (options.declared) headers["content-length"] = options.totalBytes;
  else headers["transfer-encoding"] = "chunked";
  const started = performance.now();
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    let settled = false;
    const finish = (outcome: HugeBodyOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = httpRequest({ host: url.hostname, port: url.port, method, path: url.pathname, headers, agent: false }, (res) => {
      answered = true;
      const sentBeforeAnswer = sent;
      const parts: Buffer[] = [];
      res.on("data", (d: Buffer) => parts.push(d));
      const done = () => {
        let code: string | undefined;
        try {
          code = (JSON.parse(Buffer.concat(parts).toString("utf8")) as { error?: { code?: string } }).error?.code;
        } catch {
          code = undefined;
        }
        finish({ status: res.statusCode ?? 0, code, sentBeforeAnswer, ms: performance.now() - started });
        req.destroy();
      };
      res.on("end", done);
      res.on("error", done);
    });
    const timer = setTimeout(() => {
      req.destroy();
      if (!settled) reject(new Error(`no answer to ${method} ${path} within ${options.timeoutMs ?? 60_000} ms (sent ${sent} bytes)`));
    }, options.timeoutMs ?? 60_000);
    // After the answer the server closes the connection: the write side then fails, as expected.
    req.on("error", (err) => {
      if (!answered && !settled) {
        settled = true;
        clearTimeout(timer);
        reject(err);
      }
    });
    const pump = (): void => {
      while (!answered && sent < options.totalBytes) {
        const n = Math.min(chunk.length, options.totalBytes - sent);
        sent += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once("drain", pump);
          return;
        }
      }
      if (!answered && sent >= options.totalBytes) req.end();
    };
    pump();
  });
}
