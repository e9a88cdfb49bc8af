// A stand-in for `vcp-hooks serve`'s profile route (PROFILES §8.1), on an ephemeral port: it answers
// POST /v1/profiles/{profile}/events/{event} with whatever the test scripts. The adapter tests talk to
// it through `AdapterTarget`, so swapping it for a real server (start `vcp-hooks serve` with a bundle
// whose actions give the same answers, then pass its url and token) changes no test body.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { spawn } from "node:child_process";
import { afterAll } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export interface SeenRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: string;
  /** Every request header (lower-case names), e.g. the agent's hook environment (x-vcp-hook-env). */
  headers: Record<string, string | string[] | undefined>;
  socket: number;
  /** When the request arrived and when its answer was sent (process.hrtime, ms). */
  receivedAt: number;
  answeredAt?: number;
}

export interface RouteReply {
  status?: number;
  body?: unknown;
  /** Wait before answering (a slow server). */
  delayMs?: number;
}

export interface AdapterTarget {
  url: string;
  token: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export type Reply = (profile: string, event: string, body: unknown) => RouteReply;

export async function startStandIn(reply: Reply, token = "test-token-123"): Promise<AdapterTarget> {
  const sockets = new Map<Socket, number>();
  const requests: SeenRequest[] = [];
  const target: AdapterTarget = { url: "", token, requests, close: async () => undefined };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const receivedAt = performance.now();
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      if (!sockets.has(req.socket)) sockets.set(req.socket, sockets.size);
      const seen: SeenRequest = { method: req.method ?? "", path: req.url ?? "", authorization: req.headers.authorization, body, headers: { ...req.headers }, socket: sockets.get(req.socket)!, receivedAt };
      requests.push(seen);
      // `?answer=native` (the sh adapter): the native JSON as the body, the rest as X-VCP-* headers, as the route does.
      const m = /^\/v1\/profiles\/([^/]+)\/events\/([^/?]+)(\?answer=native)?$/.exec(req.url ?? "");
      let r: RouteReply;
      if (req.method !== "POST" || !m) r = { status: 404, body: { error: { code: "NOT_FOUND", message: "no such route" } } };
      else if (req.headers.authorization !== `Bearer ${token}`) r = { status: 401, body: { error: { code: "UNAUTHENTICATED", message: "no or unknown bearer token" } } };
      else {
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          parsed = undefined;
        }
        // A body cut off (a client that gave up while sending) or not JSON: what the route answers it.
        r = parsed === undefined ? { status: 400, body: { error: { code: "INVALID_REQUEST", message: "body is not JSON" } } } : reply(decodeURIComponent(m[1]!), decodeURIComponent(m[2]!), parsed);
      }
      const send = () => {
        seen.answeredAt = performance.now();
        if (res.destroyed) return;
        const envelope = r.body as { native?: unknown; exit_code?: unknown; stderr?: unknown; guard?: { revisions?: unknown; fail_closed_events?: unknown } } | undefined;
        if (m?.[3] !== undefined && (r.status ?? 200) === 200 && typeof envelope === "object" && envelope !== null && "native" in envelope) {
          const headers: Record<string, string> = { "content-type": "application/json", "x-vcp-exit-code": String(envelope.exit_code) };
          if (typeof envelope.stderr === "string") headers["x-vcp-stderr"] = encodeURIComponent(envelope.stderr);
          if (typeof envelope.guard?.revisions === "string") headers["x-vcp-guard-revisions"] = envelope.guard.revisions;
          if (Array.isArray(envelope.guard?.fail_closed_events)) headers["x-vcp-fail-closed-events"] = envelope.guard.fail_closed_events.join(",");
          res.writeHead(200, headers);
          res.end(JSON.stringify(envelope.native));
          return;
        }
        res.writeHead(r.status ?? 200, { "content-type": "application/json" });
        res.end(typeof r.body === "string" ? r.body : JSON.stringify(r.body ?? {}));
      };
      if (r.delayMs) setTimeout(send, r.delayMs);
      else send();
    });
  });
  const open = new Set<Socket>();
  server.on("connection", (s) => {
    open.add(s);
    s.on("close", () => open.delete(s));
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  target.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  target.close = () =>
    new Promise<void>((done) => {
      for (const s of open) s.destroy();
      server.close(() => done());
    });
  return target;
}

/** A URL nothing listens on (a port that was just free). */
export async function refusedUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((done) => s.listen(0, "127.0.0.1", done));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((done) => s.close(() => done()));
  return `http://127.0.0.1:${port}`;
}

export const MAIN = resolve("dist/src/cli/main.js");

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * The adapter's cache directory for every process these helpers start (a test may pass its own
 * XDG_CACHE_HOME): guard files (src/cli/hook-guard.ts) of one test never reach another, nor the user's.
 */
export const TEST_CACHE = mkdtempSync(join(tmpdir(), "vcp-hook-cache-"));
afterAll(() => rmSync(TEST_CACHE, { recursive: true, force: true }));

/** Spawn a command as an agent does: stdin written (or held open), stdout/stderr and exit code collected. */
export function runProcess(file: string, args: string[], input: string | null, env: Record<string, string | undefined> = {}, killAfterMs = 60_000): Promise<Run> {
  return new Promise((done, fail) => {
    const started = Date.now();
    const merged: Record<string, string | undefined> = { ...process.env, XDG_CACHE_HOME: TEST_CACHE, VCP_SERVER: undefined, VCP_TOKEN_FILE: undefined, ...env };
    for (const k of Object.keys(merged)) if (merged[k] === undefined) delete merged[k];
    const child = spawn(file, args, { stdio: ["pipe", "pipe", "pipe"], env: merged as NodeJS.ProcessEnv });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("error", fail);
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, ms: Date.now() - started });
    });
    child.stdin.on("error", () => undefined);
    if (input !== null) child.stdin.end(input);
  });
}

/** `vcp-hooks hook …` from the built CLI, with the target's token in VCP_CLIENT_TOKEN. */
export function hook(target: { url: string; token: string }, args: string[], input: string | null, env: Record<string, string | undefined> = {}): Promise<Run> {
  return runProcess(process.execPath, [MAIN, "hook", ...args, "--server", target.url], input, { VCP_CLIENT_TOKEN: target.token, ...env });
}
