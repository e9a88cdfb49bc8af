/**
 * `vcp-hooks hook <Event> --dialect gemini|llxprt|claude|ai-memory|repo-yaml` — the drop-in adapter
 * (PROFILES §5, §8.1, §8.11). An agent runs it as its command hook: it reads the event JSON from stdin
 * once, POSTs it to the server's profile route, prints the native answer and exits with the code the
 * agent reads as that answer.
 *
 *   agent ─stdin─► hook ─POST /v1/profiles/{profile}/events/{event}─► vcp-hooks serve
 *         ◄stdout/exit─┘ ◄──────────── { native, exit_code, stderr?, result } ──┘
 *   server down / slow / 4xx / 5xx / bad stdin ─► --on-error warn | block | allow
 *
 * Cold start matters (it runs once per agent event), so this module imports only node builtins and the
 * dependency-free secret scrubber: no zod, fastify, pino, isolated-vm, nor src/index.ts. A one-shot
 * plain-HTTP POST goes over node:net; node:http, node:https (TLS) and node:readline load only for an
 * https server or daemon mode. main.ts
 * dispatches here before loading anything else. Only `--embedded --bundle …` calls into the runtime,
 * through hook-embedded.ts, imported on that path alone.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import type { Agent as HttpAgent, IncomingMessage } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { redactString } from "../audit/redact-string.js";

export const DIALECTS = ["gemini", "llxprt", "claude", "ai-memory", "repo-yaml"] as const;
export type Dialect = (typeof DIALECTS)[number];
const PROFILE_OF: Record<Dialect, string> = { gemini: "gemini-cli", llxprt: "llxprt", claude: "claude-code", "ai-memory": "ai-memory", "repo-yaml": "repo-yaml" };
export const ON_ERROR = ["warn", "block", "allow"] as const;
export type OnError = (typeof ON_ERROR)[number];

const DEFAULT_SERVER = "http://127.0.0.1:8787";
const DEFAULT_TIMEOUT_MS = 10_000;
/** Largest event read from stdin and largest answer read from the server. */
const MAX_BYTES = 16 * 1024 * 1024;

export const HOOK_USAGE = `usage: vcp-hooks hook <Event> --dialect gemini|llxprt|claude|ai-memory|repo-yaml [options]
       vcp-hooks hook --dialect ai-memory [--daemon] [options]       (the event comes from the envelope)
       vcp-hooks hook --write-shim ai-memory --out <path> [--daemon] [options]

Reads one event JSON from stdin, asks the server's profile route, prints the agent's native answer.
  --server URL          vcp-hooks server (default ${DEFAULT_SERVER})
  --token-env NAME      environment variable holding the client token (default VCP_CLIENT_TOKEN)
  --on-error MODE       server down, slow, 4xx/5xx or bad stdin: warn (exit 1, one stderr line; the
                        agent's non-blocking error), block (the dialect's refusal), allow (exit 0, silent)
  --timeout-ms N        request deadline (default ${DEFAULT_TIMEOUT_MS}); the adapter ends by N + 1 s
  --record DIR          save each input and answer as a JSON file (for vcp-hooks test --replay)
  --daemon              ai-memory: stay resident, one NDJSON envelope in, one decision line out
  --embedded --bundle F no server: run the event through an in-process runtime over the bundles F
                        (.vcpb files or policy directories, repeatable; installed unsigned, as
                        'vcp-hooks fire' does). For CI; each event starts a sandbox (seconds, not ms)`;

interface HookOptions {
  dialect: Dialect;
  event: string | undefined;
  server: URL;
  tokenEnv: string;
  onError: OnError;
  timeoutMs: number;
  record: string | undefined;
  daemon: boolean;
  /** `--embedded`: the bundles to run in-process (absolute paths); undefined ⇒ ask the server. */
  embedded: string[] | undefined;
}

/** What the server's profile route answers (PROFILES §8.1). */
interface RouteAnswer {
  native: Record<string, unknown>;
  exit_code: number;
  stderr?: string;
}

/** What the adapter prints and exits with. */
export interface Rendered {
  stdout: string;
  stderr: string;
  exitCode: 0 | 1 | 2;
}

class AdapterError extends Error {}

// ── rendering ─────────────────────────────────────────────────────────────────────────────────────

/** The server's answer as the agent expects it (PROFILES §5). */
export function renderAnswer(dialect: Dialect, answer: RouteAnswer): Rendered {
  const stderr = typeof answer.stderr === "string" && answer.stderr !== "" ? line(answer.stderr, true) : "";
  const json = jsonLine(answer.native);
  switch (dialect) {
    case "gemini":
    case "llxprt":
    case "claude":
      // Exit 0 with the JSON: the one code both forks and Claude read the same way, deny included.
      return { stdout: `${json}\n`, stderr, exitCode: 0 };
    case "ai-memory":
      // One decision line; ai-memory reads the last non-empty stdout line.
      return { stdout: `${json}\n`, stderr, exitCode: 0 };
    case "repo-yaml": {
      const blocked = answer.exit_code === 2 || answer.native["error"] === "blocked_by_policy";
      return { stdout: `${json}\n`, stderr, exitCode: blocked ? 2 : 0 };
    }
  }
}

/**
 * One line of JSON for the agent's stdout. JSON.stringify escapes every character below U+0020 but
 * leaves NEL (U+0085) and the Unicode line and paragraph separators raw: valid JSON, yet a line break
 * to readers that split on them (Python's `str.splitlines`), which would cut a decision line — an
 * ai-memory daemon reads one NDJSON line per decision — in two. Escaped, the JSON value is the same.
 */
export function jsonLine(value: unknown): string {
  // SECURITY: hook text (reasons, messages) must not be able to split the answer line.
  return JSON.stringify(value).replace(/[\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** What `--on-error` makes of a failure (PROFILES §5, §8.11). `daemon`: a line is owed for every envelope. */
export function renderFailure(dialect: Dialect, mode: OnError, why: string, daemon = false): Rendered {
  const reason = `vcp-hooks unavailable: ${why}`;
  if (mode === "allow") {
    return { stdout: dialect === "ai-memory" && daemon ? `${jsonLine({ action: "allow" })}\n` : "", stderr: "", exitCode: 0 };
  }
  if (mode === "block") {
    if (dialect === "ai-memory") return { stdout: `${jsonLine({ action: "deny", reason, code: 503 })}\n`, stderr: line(`vcp-hooks hook: ${why}`), exitCode: 0 };
    if (dialect === "repo-yaml") {
      return { stdout: `${jsonLine({ error: "blocked_by_policy", logs: [{ level: "error", message: reason }] })}\n`, stderr: line(`vcp-hooks hook: ${why}`), exitCode: 2 };
    }
    // gemini/llxprt: exit 2 with the reason on stderr = deny with that reason; Claude: exit 2 = block.
    return { stdout: "", stderr: line(reason), exitCode: 2 };
  }
  // warn: the agent's own non-blocking error (exit 1 + stderr). A daemon owes a line: an action ai-memory
  // does not know is a hook error, so ai-memory's own fail_mode decides, as for exit 1.
  if (dialect === "ai-memory" && daemon) return { stdout: `${jsonLine({ action: "error", reason })}\n`, stderr: line(`vcp-hooks hook: ${why}`), exitCode: 1 };
  return { stdout: "", stderr: line(`vcp-hooks hook: ${why} (on-error=warn)`), exitCode: 1 };
}

/**
 * Redacted stderr text: secret shapes replaced, control characters spelled out, capped. `multiline`
 * keeps line breaks (a hook's own stderr); otherwise the text is one line (the adapter's messages).
 */
function line(text: string, multiline = false): string {
  // SECURITY: server messages and hook stderr may echo tokens; redact before the agent logs them.
  const controls = multiline ? /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g : /[\u0000-\u0008\u000a-\u001f\u007f-\u009f]/g;
  const safe = redactString(text.replace(/\n+$/, "")).replace(controls, (c) => (c === "\n" ? "\\n" : c === "\r" ? "\\r" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`));
  const capped = safe.length > 4096 ? `${safe.slice(0, 4096)}…` : safe;
  return capped.endsWith("\n") ? capped : `${capped}\n`;
}

// ── input ─────────────────────────────────────────────────────────────────────────────────────────

/** Parse one event; the error names what is wrong. ai-memory: `{"event","payload"}` and the event from it. */
export function parseEvent(dialect: Dialect, text: string, eventArg: string | undefined): { body: Record<string, unknown>; event: string } {
  if (text.trim() === "") throw new AdapterError("stdin is empty: expected one JSON object (the agent's hook input)");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new AdapterError(`stdin is not JSON: ${(err as Error).message}`);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new AdapterError(`stdin must be a JSON object, got ${Array.isArray(body) ? "an array" : body === null ? "null" : typeof body}`);
  const obj = body as Record<string, unknown>;
  if (dialect === "ai-memory") {
    const event = obj["event"];
    if (typeof event !== "string" || !/^[a-z_]{1,64}$/.test(event)) throw new AdapterError(`the ai-memory envelope needs "event": a hook event name such as "pre_store"`);
    if (typeof obj["payload"] !== "object" || obj["payload"] === null || Array.isArray(obj["payload"])) throw new AdapterError(`the ai-memory envelope needs "payload": an object`);
    if (eventArg !== undefined && eventArg !== event) throw new AdapterError(`the envelope's event "${event}" is not the command line's ${eventArg}`);
    return { body: obj, event };
  }
  if (eventArg === undefined) throw new AdapterError("no event: give it as the first argument (e.g. 'vcp-hooks hook BeforeTool --dialect gemini')");
  return { body: obj, event: eventArg };
}

function readStdin(): Promise<string> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    process.stdin.on("data", (c: Buffer) => {
      size += c.length;
      // SECURITY: the cap applies while reading, before anything is parsed or sent.
      if (size > MAX_BYTES) {
        process.stdin.destroy();
        fail(new AdapterError(`stdin is larger than ${MAX_BYTES} bytes`));
        return;
      }
      chunks.push(c);
    });
    process.stdin.once("end", () => done(Buffer.concat(chunks).toString("utf8")));
    process.stdin.once("error", (e) => fail(new AdapterError(`stdin could not be read: ${e.message}`)));
  });
}

// ── the route ─────────────────────────────────────────────────────────────────────────────────────

type AnyAgent = HttpAgent | HttpsAgent;

/** One HTTP exchange: the status and the body text (capped at MAX_BYTES). */
interface Exchanged {
  status: number;
  text: string;
}

async function postEvent(opts: HookOptions, event: string, bodyText: string, agent: AnyAgent | undefined): Promise<RouteAnswer> {
  const url = new URL(`v1/profiles/${encodeURIComponent(PROFILE_OF[opts.dialect])}/events/${encodeURIComponent(event)}`, opts.server.href.endsWith("/") ? opts.server : `${opts.server.href}/`);
  const token = process.env[opts.tokenEnv];
  const headers: Record<string, string> = { "content-type": "application/json", "content-length": String(Buffer.byteLength(bodyText)), accept: "application/json" };
  if (token !== undefined && token !== "") headers["authorization"] = `Bearer ${token}`;
  const { status, text } = url.protocol === "http:" && agent === undefined ? await exchangeNet(url, headers, bodyText, opts.timeoutMs) : await exchangeHttp(url, headers, bodyText, opts.timeoutMs, agent);
  if (status < 200 || status > 299) throw new AdapterError(`${url.origin} answered ${status}${serverMessage(text)}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AdapterError(`${url.origin} answered ${status} with a body that is not JSON`);
  }
  const answer = parsed as Partial<RouteAnswer> | null;
  if (typeof answer !== "object" || answer === null || typeof answer.native !== "object" || answer.native === null || Array.isArray(answer.native) || typeof answer.exit_code !== "number") {
    throw new AdapterError(`${url.origin} answered ${status} without { native, exit_code }: is --server a vcp-hooks server with profiles?`);
  }
  return answer as RouteAnswer;
}

/** node:http / node:https (loaded on first use): https servers and the daemon's keep-alive connection. */
async function exchangeHttp(url: URL, headers: Record<string, string>, bodyText: string, timeoutMs: number, agent: AnyAgent | undefined): Promise<Exchanged> {
  const send = url.protocol === "https:" ? (await import("node:https")).request : (await import("node:http")).request;
  return new Promise((done, fail) => {
    const req = send(url, { method: "POST", headers, agent, timeout: timeoutMs }, (res) => {
      readBody(res).then((text) => done({ status: res.statusCode ?? 0, text }), fail);
    });
    req.once("timeout", () => req.destroy(new AdapterError(`no answer from ${url.origin} within ${timeoutMs} ms`)));
    req.once("error", (err) => fail(err instanceof AdapterError ? err : new AdapterError(`${url.origin} unreachable: ${(err as NodeJS.ErrnoException).code ?? err.message}`)));
    req.end(bodyText);
  });
}

function readBody(res: IncomingMessage): Promise<string> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BYTES) {
        res.destroy(new AdapterError(`the server's answer is larger than ${MAX_BYTES} bytes`));
        return;
      }
      chunks.push(c);
    });
    res.once("end", () => done(Buffer.concat(chunks).toString("utf8")));
    res.once("error", (e) => fail(e instanceof AdapterError ? e : new AdapterError(`the answer was cut off: ${e.message}`)));
  });
}

/**
 * One-shot plain-HTTP exchange over node:net (`Connection: close`). Why not node:http: loading it costs
 * several times the rest of this adapter's start (bench/adapter.ts), and a one-shot POST needs only a
 * request line, headers, and a response read to EOF (Content-Length or chunked).
 */
async function exchangeNet(url: URL, headers: Record<string, string>, bodyText: string, timeoutMs: number): Promise<Exchanged> {
  const { connect } = await import("node:net");
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port || 80);
  const head = [`POST ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, "connection: close", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n");
  return new Promise((done, fail) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const finish = (err: Error | undefined, value?: Exchanged) => {
      if (settled) return;
      settled = true;
      socket.destroy();
      if (err) fail(err);
      else done(value!);
    };
    socket.setTimeout(timeoutMs, () => finish(new AdapterError(`no answer from ${url.origin} within ${timeoutMs} ms`)));
    socket.once("error", (err: NodeJS.ErrnoException) => finish(new AdapterError(`${url.origin} unreachable: ${err.code ?? err.message}`)));
    socket.on("data", (c: Buffer) => {
      size += c.length;
      // SECURITY: the cap applies while reading, before anything is parsed.
      if (size > MAX_BYTES + 65536) return finish(new AdapterError(`the server's answer is larger than ${MAX_BYTES} bytes`));
      chunks.push(c);
    });
    socket.once("end", () => {
      try {
        finish(undefined, parseResponse(Buffer.concat(chunks), url.origin));
      } catch (err) {
        finish(err as Error);
      }
    });
    // No half-close after the body: Node's HTTP server drops a request whose client ended its side
    // before the answer; `connection: close` makes the server end the connection after answering.
    socket.write(head);
    socket.write(bodyText);
  });
}

/** Status and body of a complete HTTP/1.1 response (read to EOF). */
export function parseResponse(raw: Buffer, origin: string): Exchanged {
  const split = raw.indexOf("\r\n\r\n");
  if (split === -1) throw new AdapterError(`${origin} closed the connection without a complete answer`);
  const lines = raw.subarray(0, split).toString("latin1").split("\r\n");
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
  if (!status) throw new AdapterError(`${origin} did not answer HTTP/1.1`);
  const header = (name: string) => lines.slice(1).find((l) => l.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim();
  let body = raw.subarray(split + 4);
  if (/\bchunked\b/i.test(header("transfer-encoding") ?? "")) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = body.indexOf("\r\n", at);
      if (eol === -1) throw new AdapterError(`${origin} sent a cut-off chunked answer`);
      const len = Number.parseInt(body.subarray(at, eol).toString("latin1"), 16);
      if (!Number.isFinite(len) || len < 0) throw new AdapterError(`${origin} sent a malformed chunked answer`);
      if (len === 0) break;
      parts.push(body.subarray(eol + 2, eol + 2 + len));
      at = eol + 2 + len + 2;
    }
    body = Buffer.concat(parts);
  } else {
    const length = header("content-length");
    if (length !== undefined) {
      const n = Number(length);
      if (!Number.isInteger(n) || n < 0 || body.length < n) throw new AdapterError(`${origin} sent a cut-off answer`);
      body = body.subarray(0, n);
    }
  }
  if (body.length > MAX_BYTES) throw new AdapterError(`the server's answer is larger than ${MAX_BYTES} bytes`);
  return { status: Number(status[1]), text: body.toString("utf8") };
}

/** `: CODE: message` from the server's `{ error: { code, message } }`, or nothing. */
function serverMessage(text: string): string {
  try {
    const e = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
    if (e && typeof e.message === "string") return `: ${typeof e.code === "string" ? `${e.code}: ` : ""}${e.message}`;
  } catch {
    // not JSON: say nothing more than the status
  }
  return "";
}

/** `--embedded`: the heavy runtime module loads here, on this path only. */
async function fireInProcess(opts: HookOptions, bundles: string[], event: string, body: Record<string, unknown>): Promise<RouteAnswer> {
  try {
    const { fireEmbedded } = await import("./hook-embedded.js");
    return await fireEmbedded(bundles, PROFILE_OF[opts.dialect], event, body);
  } catch (err) {
    throw new AdapterError(`embedded runtime: ${(err as Error).message}`);
  }
}

// ── recording ─────────────────────────────────────────────────────────────────────────────────────

let recordSeq = 0;

/** Save one input and its answer for `vcp-hooks test --replay` (files readable by the owner only). */
function record(dir: string, opts: HookOptions, event: string, input: unknown, answer: RouteAnswer | undefined, rendered: Rendered, error?: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stamp = new Date().toISOString().replace(/[:.]/g, "-");
    const safeEvent = event.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) || "event";
    const file = join(dir, `${stamp}-${process.pid}-${recordSeq++}-${safeEvent}.json`);
    const doc = {
      recorded_at: new Date().toISOString(),
      dialect: opts.dialect,
      profile: PROFILE_OF[opts.dialect],
      event,
      input,
      answer: answer === undefined ? null : { native: answer.native, exit_code: answer.exit_code, ...(answer.stderr !== undefined ? { stderr: answer.stderr } : {}) },
      rendered: { stdout: rendered.stdout, exit_code: rendered.exitCode },
      ...(error !== undefined ? { error } : {}),
    };
    // SECURITY: 'wx' (O_CREAT|O_EXCL) never follows or reuses an entry someone planted under this name
    // (a symlink in a shared --record directory would otherwise redirect the write anywhere).
    writeFileSync(`${file}.tmp`, `${JSON.stringify(doc, null, 2)}\n`, { mode: 0o600, flag: "wx" });
    renameSync(`${file}.tmp`, file);
  } catch (err) {
    // A recording failure never changes the agent's answer.
    process.stderr.write(line(`vcp-hooks hook: --record ${dir}: ${(err as Error).message}`));
  }
}

// ── one event ─────────────────────────────────────────────────────────────────────────────────────

async function answerOne(opts: HookOptions, text: string, agent: AnyAgent | undefined): Promise<Rendered> {
  let parsed: { body: Record<string, unknown>; event: string } | undefined;
  try {
    parsed = parseEvent(opts.dialect, text, opts.event);
    const answer = opts.embedded !== undefined ? await fireInProcess(opts, opts.embedded, parsed.event, parsed.body) : await postEvent(opts, parsed.event, text, agent);
    const rendered = renderAnswer(opts.dialect, answer);
    if (opts.record !== undefined) record(opts.record, opts, parsed.event, parsed.body, answer, rendered);
    return rendered;
  } catch (err) {
    const why = err instanceof AdapterError ? err.message : `unexpected: ${(err as Error).message}`;
    const rendered = renderFailure(opts.dialect, opts.onError, why, opts.daemon);
    if (opts.record !== undefined) record(opts.record, opts, parsed?.event ?? opts.event ?? "unknown", parsed?.body ?? text.slice(0, 65536), undefined, rendered, why);
    return rendered;
  }
}

function emit(r: Rendered): Promise<void> {
  return new Promise((done) => {
    if (r.stderr !== "") process.stderr.write(r.stderr);
    if (r.stdout === "") done();
    else process.stdout.write(r.stdout, () => done());
  });
}

/** Write and exit, whatever is still pending (an unread stdin, a socket): the adapter never hangs. */
async function exitWith(r: Rendered): Promise<never> {
  await emit(r);
  process.exit(r.exitCode);
}

// ── daemon (ai-memory) ────────────────────────────────────────────────────────────────────────────

/**
 * Resident mode: one envelope per stdin line, one decision line each, in order (single-flight: the
 * next envelope is read after the previous answer is written), over one keep-alive connection.
 */
async function runDaemon(opts: HookOptions): Promise<number> {
  const agent = opts.server.protocol === "https:" ? new (await import("node:https")).Agent({ keepAlive: true, maxSockets: 1 }) : new (await import("node:http")).Agent({ keepAlive: true, maxSockets: 1 });
  for await (const text of boundedLines(process.stdin, MAX_BYTES)) {
    if (text === undefined) {
      await emit(renderFailure(opts.dialect, opts.onError, `envelope larger than ${MAX_BYTES} bytes`, true));
      continue;
    }
    if (text.trim() === "") continue;
    // Each envelope has its own deadline; a stuck request is abandoned, never waited on past it.
    let timer: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      answerOne(opts, text, agent),
      new Promise<Rendered>((done) => {
        timer = setTimeout(() => done(renderFailure(opts.dialect, opts.onError, `no answer within ${opts.timeoutMs} ms`, true)), opts.timeoutMs + 1000);
      }),
    ]);
    clearTimeout(timer);
    await emit({ ...answer, exitCode: 0 });
  }
  agent.destroy();
  return 0;
}

/**
 * Lines of a stream, each at most `max` bytes; a longer line is skipped as it arrives (never buffered
 * whole) and yields `undefined` in its place, so the daemon still owes it one answer line.
 */
export async function* boundedLines(stream: NodeJS.ReadableStream, max: number): AsyncGenerator<string | undefined> {
  let parts: Buffer[] = [];
  let size = 0;
  let overflow = false;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    let at = 0;
    for (;;) {
      const nl = chunk.indexOf(10, at);
      const piece = chunk.subarray(at, nl === -1 ? chunk.length : nl);
      // SECURITY: the cap applies while reading: an endless line costs no more than `max` bytes.
      if (!overflow) {
        if (size + piece.length > max) {
          overflow = true;
          parts = [];
        } else {
          parts.push(piece);
          size += piece.length;
        }
      }
      if (nl === -1) break;
      yield overflow ? undefined : Buffer.concat(parts).toString("utf8");
      parts = [];
      size = 0;
      overflow = false;
      at = nl + 1;
    }
  }
  if (overflow) yield undefined;
  else if (size > 0) yield Buffer.concat(parts).toString("utf8");
}

// ── shim ──────────────────────────────────────────────────────────────────────────────────────────

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The shim ai-memory runs (a command path with no arguments): this adapter with its arguments baked in. */
export function shimText(args: readonly string[], node = process.execPath, main = resolve(dirname(fileURLToPath(import.meta.url)), "main.js")): string {
  return `#!/bin/sh
# Written by 'vcp-hooks hook --write-shim ai-memory'. ai-memory runs hook commands without arguments;
# this passes the adapter's. Regenerate it rather than editing it.
exec ${shq(node)} ${shq(main)} hook ${args.map(shq).join(" ")}
`;
}

function writeShim(out: string, args: readonly string[]): void {
  const target = resolve(out);
  const tmp = `${target}.${process.pid}.tmp`;
  writeFileSync(tmp, shimText(args), { mode: 0o755 });
  renameSync(tmp, target);
}

// ── entry ─────────────────────────────────────────────────────────────────────────────────────────

function parseOptions(argv: string[]): { opts?: HookOptions; shim?: { dialect: string; out: string; args: string[] }; help?: boolean; error?: string; onError: OnError; dialect?: Dialect } {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        dialect: { type: "string" },
        server: { type: "string" },
        "token-env": { type: "string" },
        "on-error": { type: "string" },
        "timeout-ms": { type: "string" },
        record: { type: "string" },
        daemon: { type: "boolean" },
        embedded: { type: "boolean" },
        bundle: { type: "string", multiple: true },
        "write-shim": { type: "string" },
        out: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }) as { values: Record<string, string | boolean | undefined>; positionals: string[] });
  } catch (err) {
    const onError = argv.includes("--on-error") ? (argv[argv.indexOf("--on-error") + 1] as OnError) : "warn";
    const dialect = argv.includes("--dialect") ? (argv[argv.indexOf("--dialect") + 1] as Dialect) : undefined;
    return { error: (err as Error).message, onError: ON_ERROR.includes(onError) ? onError : "warn", ...(dialect && DIALECTS.includes(dialect) ? { dialect } : {}) };
  }
  const onErrorRaw = (values["on-error"] as string | undefined) ?? "warn";
  const onError: OnError = (ON_ERROR as readonly string[]).includes(onErrorRaw) ? (onErrorRaw as OnError) : "warn";
  const dialectRaw = values["dialect"] as string | undefined;
  const dialect = dialectRaw !== undefined && (DIALECTS as readonly string[]).includes(dialectRaw) ? (dialectRaw as Dialect) : undefined;
  const base = { onError, ...(dialect ? { dialect } : {}) };
  if (values["help"] === true) return { ...base, help: true };
  if (!(ON_ERROR as readonly string[]).includes(onErrorRaw)) return { ...base, error: `--on-error must be warn, block or allow, not '${onErrorRaw}'` };
  const bundles = (values["bundle"] as unknown as string[] | undefined) ?? [];
  const embedded = values["embedded"] === true;
  if (!embedded && bundles.length > 0) return { ...base, error: "--bundle needs --embedded (without it the adapter asks the server, which has its own bundles)" };
  if (embedded && bundles.length === 0) return { ...base, error: "--embedded needs at least one --bundle <file.vcpb|policy dir>" };
  if (embedded && values["server"] !== undefined) return { ...base, error: "--embedded runs without a server: drop --server" };
  if (embedded && values["daemon"] === true) return { ...base, error: "--embedded with --daemon is not supported: run 'vcp-hooks serve' for a resident adapter" };
  if (bundles.some((b) => b === "")) return { ...base, error: "--bundle must name a file or directory" };
  let timeoutMs = DEFAULT_TIMEOUT_MS;
  if (values["timeout-ms"] !== undefined) {
    timeoutMs = Number(values["timeout-ms"]);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 600_000) return { ...base, error: `--timeout-ms must be an integer from 1 to 600000, not '${String(values["timeout-ms"])}'` };
  }
  let server: URL;
  try {
    server = new URL((values["server"] as string | undefined) ?? DEFAULT_SERVER);
    if (server.protocol !== "http:" && server.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    return { ...base, error: `--server must be an http(s) URL, not '${String(values["server"])}'` };
  }
  const tokenEnv = (values["token-env"] as string | undefined) ?? "VCP_CLIENT_TOKEN";
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)) return { ...base, error: `--token-env must name an environment variable, not '${tokenEnv}'` };
  if (values["write-shim"] !== undefined) {
    if (values["write-shim"] !== "ai-memory") return { ...base, error: `--write-shim supports ai-memory only, not '${String(values["write-shim"])}'` };
    if (typeof values["out"] !== "string") return { ...base, error: "--write-shim needs --out <path>" };
    const target = embedded ? ["--embedded", ...bundles.flatMap((b) => ["--bundle", resolve(b)])] : ["--server", server.href, "--token-env", tokenEnv];
    const args = ["--dialect", "ai-memory", ...target, "--on-error", onError, "--timeout-ms", String(timeoutMs)];
    if (values["daemon"] === true) args.push("--daemon");
    if (typeof values["record"] === "string") args.push("--record", resolve(values["record"]));
    return { ...base, shim: { dialect: "ai-memory", out: values["out"], args } };
  }
  if (dialectRaw === undefined) return { ...base, error: `--dialect is required (${DIALECTS.join(", ")})` };
  if (dialect === undefined) return { ...base, error: `--dialect must be one of ${DIALECTS.join(", ")}, not '${dialectRaw}'` };
  if (positionals.length > 1) return { ...base, error: `one event expected, got ${positionals.join(" ")}` };
  if (values["daemon"] === true && dialect !== "ai-memory") return { ...base, error: "--daemon is for --dialect ai-memory" };
  const event = positionals[0];
  if (event !== undefined && !/^[A-Za-z][A-Za-z0-9_:.-]{0,127}$/.test(event)) return { ...base, error: `'${event}' is not an event name` };
  return {
    ...base,
    opts: { dialect, event, server, tokenEnv, onError, timeoutMs, record: values["record"] as string | undefined, daemon: values["daemon"] === true, embedded: embedded ? bundles.map((b) => resolve(b)) : undefined },
  };
}

/**
 * Run the adapter with `argv` (after `hook`). Exits the process itself once the answer is written,
 * so that nothing left open (stdin, a socket) can keep an agent waiting.
 */
export async function runHook(argv: string[]): Promise<number> {
  const parsed = parseOptions(argv);
  if (parsed.help) {
    process.stdout.write(`${HOOK_USAGE}\n`);
    return 0;
  }
  if (parsed.error !== undefined) {
    // A broken settings line is the adapter's failure: the --on-error rule, never a silent exit 2.
    return exitWith(renderFailure(parsed.dialect ?? "gemini", parsed.onError, `bad arguments: ${parsed.error}; see 'vcp-hooks hook --help'`));
  }
  if (parsed.shim) {
    try {
      writeShim(parsed.shim.out, parsed.shim.args);
    } catch (err) {
      process.stderr.write(line(`vcp-hooks hook: cannot write ${parsed.shim.out}: ${(err as Error).message}`));
      return 1;
    }
    process.stderr.write(`wrote ${resolve(parsed.shim.out)}: point ai-memory's hook command at it\n`);
    return 0;
  }
  const opts = parsed.opts!;
  if (opts.daemon) return runDaemon(opts);
  // SECURITY: a hard stop: stdin never closed, a server that trickles bytes — the --on-error answer by
  // --timeout-ms + 1 s, whatever is pending.
  const hard = setTimeout(() => void exitWith(renderFailure(opts.dialect, opts.onError, `no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs + 1000);
  hard.unref();
  let text: string;
  try {
    text = await readStdin();
  } catch (err) {
    return exitWith(renderFailure(opts.dialect, opts.onError, (err as Error).message));
  }
  return exitWith(await answerOne(opts, text, undefined));
}
