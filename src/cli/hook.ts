/**
 * `vcp-hooks hook <Event> --dialect gemini|llxprt|claude|codex|vscode|cursor|openhands|goose|ai-memory|repo-yaml` — the drop-in adapter
 * (PROFILES §5, §8.1, §8.11). An agent runs it as its command hook: it reads the event JSON from stdin
 * once, POSTs it to the server's profile route, prints the native answer and exits with the code the
 * agent reads as that answer.
 *
 *   agent ─stdin─► hook ─POST /v1/profiles/{profile}/events/{event}─► vcp-hooks serve
 *         ◄stdout/exit─┘ ◄──────── { native, exit_code, stderr?, guard?, result } ──┘
 *                                   guard ─► ~/.cache/vcp-hooks/guard-<hash>.json (hook-guard.ts)
 *   server down / slow / 4xx / 5xx / garbage / bad stdin ─► --on-error auto | warn | block | allow
 *     auto: block when the last plan seen from that server guards the event with a fail_closed hook
 *           (or, with none seen yet, when the event is a tool event), else warn
 *
 * Cold start matters (it runs once per agent event), so this module imports only node builtins, the
 * dependency-free secret scrubber and hook-guard.ts: no zod, fastify, pino, isolated-vm, nor
 * src/index.ts (nor node:crypto, about 10 ms). A one-shot plain-HTTP POST goes over node:net; node:http,
 * node:https (TLS) and node:readline load only for an https server or daemon mode. main.ts dispatches
 * here before loading anything else. Only `--embedded --bundle …` calls into the runtime, through
 * hook-embedded.ts, imported on that path alone.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, renameSync, writeFileSync } from "node:fs";
import type { Agent as HttpAgent, ClientRequest, IncomingMessage } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { redactString } from "../audit/redact-string.js";
import { decideFailure, guardOf, readGuard, writeGuard, type FailDecision, type GuardFacts } from "./hook-guard.js";
import { decodeHookEnv, encodeHookEnv, HOOK_ENV_HEADER } from "../tooling/hook-env.js";

export const DIALECTS = ["gemini", "llxprt", "claude", "codex", "vscode", "cursor", "openhands", "goose", "ai-memory", "repo-yaml"] as const;
export type Dialect = (typeof DIALECTS)[number];
export const PROFILE_OF: Record<Dialect, string> = { gemini: "gemini-cli", llxprt: "llxprt", claude: "claude-code", codex: "codex", vscode: "vscode", cursor: "cursor", openhands: "openhands", goose: "goose", "ai-memory": "ai-memory", "repo-yaml": "repo-yaml" };
export const ON_ERROR = ["auto", "warn", "block", "allow"] as const;
export type OnError = (typeof ON_ERROR)[number];
/** What a failure is rendered as, once `auto` is resolved for the event. */
export type FailMode = Exclude<OnError, "auto">;

const DEFAULT_SERVER = "http://127.0.0.1:8787";
/**
 * Default `--timeout-ms` per dialect: under the agent's own hook timeout, so that the adapter's answer
 * (a block, for a guarded event) arrives before the agent gives up on the hook and goes on without it.
 * Gemini CLI and LLxprt default to 60 s per hook, Claude Code to 600 s per command hook, docs/drop-in.md's
 * settings give 15 s; ai-memory's write-class deadline is 5 s and docs/drop-in.md's hooks.toml 5000 ms.
 * With --embedded it is the whole call's deadline, the runtime's start included.
 */
export const DEFAULT_TIMEOUT_MS: Record<Dialect, number> = { gemini: 10_000, llxprt: 10_000, claude: 10_000, codex: 10_000, vscode: 10_000, cursor: 10_000, openhands: 10_000, goose: 10_000, "ai-memory": 4_000, "repo-yaml": 10_000 };
/** Largest event read from stdin and largest answer read from the server. */
const MAX_BYTES = 16 * 1024 * 1024;
/** Largest token file read (a token is 43 characters; this leaves room for comments and newlines). */
const MAX_TOKEN_FILE_BYTES = 4096;
/** A request body goes out in pieces of this size, so that an early answer (a 413) is read before the rest is written. */
const WRITE_PIECE_BYTES = 64 * 1024;

export const HOOK_USAGE = `usage: vcp-hooks hook <Event> --dialect gemini|llxprt|claude|codex|vscode|cursor|openhands|goose|ai-memory|repo-yaml [options]
       vcp-hooks hook --dialect ai-memory [--daemon] [options]       (the event comes from the envelope)
       vcp-hooks hook --write-shim ai-memory --out <path> [--daemon] [options]
       vcp-hooks hook --print-sh > vcp-hook.sh   (the same adapter as a POSIX sh script with curl;
                                                  docs/sh-adapter.md)

Reads one event JSON from stdin, asks the server's profile route, prints the agent's native answer.
  --server URL          vcp-hooks server (default: VCP_SERVER, else ${DEFAULT_SERVER})
  --token-env NAME      environment variable holding the client token (default VCP_CLIENT_TOKEN)
  --token-file PATH     read the client token from this file (default: VCP_TOKEN_FILE when the token
                        variable is unset); for agents that start hooks with a stripped environment
  --on-error MODE       server down, slow, 4xx/5xx, a bad answer or bad stdin:
                          auto (default): block when the last plan seen from this server guards the
                            event with a fail_closed hook (with none seen yet: the tool events
                            BeforeTool, PreToolUse, PermissionRequest, pre_*, PreAbilityCall), else warn
                          warn: exit 1, one stderr line (the agent's non-blocking error)
                          block: the dialect's refusal      allow: exit 0, silent
  --timeout-ms N        request deadline (default 10000; ai-memory 4000); the adapter ends by N + 1 s
  --record DIR          save each input and answer as a JSON file (for vcp-hooks test --replay)
  --daemon              ai-memory: stay resident, one NDJSON envelope in, one decision line out
  --embedded --bundle F no server: run the event through an in-process runtime over the bundles F
                        (.vcpb files or policy directories, repeatable). Signatures are verified
                        against --keyring FILE as 'serve' verifies them; unsigned bundles (and policy
                        directories) only with --allow-unsigned. --timeout-ms is the whole call's
                        deadline, the runtime's start included. For CI`;

interface HookOptions {
  dialect: Dialect;
  event: string | undefined;
  server: URL;
  tokenEnv: string;
  /** `--token-file`, else VCP_TOKEN_FILE (read only when the token variable is unset). */
  tokenFile: { path: string; from: "--token-file" | "VCP_TOKEN_FILE" } | undefined;
  onError: OnError;
  timeoutMs: number;
  record: string | undefined;
  daemon: boolean;
  /** `--embedded`: the bundles to run in-process (absolute paths); undefined ⇒ ask the server. */
  embedded: string[] | undefined;
  keyring: string | undefined;
  allowUnsigned: boolean;
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

/** A failure of the adapter's own (never a policy decision); `event` when it was known. */
class AdapterError extends Error {
  constructor(
    message: string,
    readonly event?: string,
  ) {
    super(message);
  }
}

// ── rendering ─────────────────────────────────────────────────────────────────────────────────────

/** The server's answer as the agent expects it (PROFILES §5). */
export function renderAnswer(dialect: Dialect, answer: RouteAnswer): Rendered {
  const stderr = typeof answer.stderr === "string" && answer.stderr !== "" ? line(answer.stderr, true) : "";
  const json = jsonLine(answer.native);
  switch (dialect) {
    case "gemini":
    case "llxprt":
    case "claude":
    case "codex":
    case "vscode":
    case "cursor":
    case "openhands":
    case "goose":
      // Exit 0 with the JSON: the one code both forks, Claude, Codex and VS Code read the same way, deny included.
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

/**
 * What a failure becomes in `mode` (PROFILES §5, §8.11). `daemon`: a line is owed for every envelope.
 * `modeSaid`: `why` already names the mode (auto's reason), so the warning does not repeat it.
 */
export function renderFailure(dialect: Dialect, mode: FailMode, why: string, daemon = false, modeSaid = false): Rendered {
  const reason = `vcp-hooks unavailable: ${why}`;
  if (mode === "allow") {
    return { stdout: dialect === "ai-memory" && daemon ? `${jsonLine({ action: "allow" })}\n` : "", stderr: "", exitCode: 0 };
  }
  if (mode === "block") {
    if (dialect === "ai-memory") return { stdout: `${jsonLine({ action: "deny", reason, code: 503 })}\n`, stderr: line(`vcp-hooks hook: ${why}`), exitCode: 0 };
    if (dialect === "repo-yaml") {
      return { stdout: `${jsonLine({ error: "blocked_by_policy", logs: [{ level: "error", message: reason }] })}\n`, stderr: line(`vcp-hooks hook: ${why}`), exitCode: 2 };
    }
    // gemini/llxprt: exit 2 with the reason on stderr = deny with that reason; Claude, Codex, VS Code: exit 2 = block; Cursor, OpenHands, goose: exit 2 = deny.
    return { stdout: "", stderr: line(reason), exitCode: 2 };
  }
  // warn: the agent's own non-blocking error (exit 1 + stderr). A daemon owes a line: an action ai-memory
  // does not know is a hook error, so ai-memory's own fail_mode decides, as for exit 1.
  if (dialect === "ai-memory" && daemon) return { stdout: `${jsonLine({ action: "error", reason })}\n`, stderr: line(`vcp-hooks hook: ${why}`), exitCode: 1 };
  return { stdout: "", stderr: line(`vcp-hooks hook: ${why}${modeSaid ? "" : " (on-error=warn)"}`), exitCode: 1 };
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

// ── what a failure becomes (--on-error) ───────────────────────────────────────────────────────────

/**
 * Guard facts of the embedded run, once its bundles are read (hook-embedded.ts reports them): the
 * deadline's answer uses them instead of the server's guard file.
 */
let embeddedGuard: GuardFacts | undefined;

/**
 * `--on-error` for one event: `auto` resolved by what is known of the policy (hook-guard.ts).
 * SECURITY: under auto, a failure on an event the policy guards with a fail_closed hook (or, with
 * nothing known, a tool event) is the dialect's block: never the exit code an agent reads as "go ahead".
 */
function failureFor(opts: Pick<HookOptions, "dialect" | "onError" | "server" | "embedded">, event: string | undefined): FailDecision | { mode: FailMode; why?: undefined } {
  if (opts.onError !== "auto") return { mode: opts.onError };
  const profile = PROFILE_OF[opts.dialect];
  // An ai-memory envelope names its own event: one that could not be read may be any pre_* event.
  if (event === undefined && opts.dialect === "ai-memory") return { mode: "block", why: "the envelope's event could not be read (it may be a pre_* event)" };
  if (opts.embedded !== undefined) return decideFailure(profile, event, embeddedGuard, { plan: "the --bundle files", none: "the --bundle files are not read yet" });
  return decideFailure(profile, event, readGuard(opts.server.href, profile));
}

/** The failure `why` of `event`, rendered by `--on-error` (auto: with the reason it blocked or warned). */
function renderFailureFor(opts: Pick<HookOptions, "dialect" | "onError" | "server" | "embedded" | "daemon">, event: string | undefined, why: string): Rendered {
  const decision = failureFor(opts, event);
  if (decision.why === undefined) return renderFailure(opts.dialect, decision.mode, why, opts.daemon);
  return renderFailure(opts.dialect, decision.mode, `${why} (on-error=auto: ${decision.why})`, opts.daemon, true);
}

// ── input ─────────────────────────────────────────────────────────────────────────────────────────

/** Parse one event; the error names what is wrong. ai-memory: `{"event","payload"}` and the event from it. */
export function parseEvent(dialect: Dialect, text: string, eventArg: string | undefined): { body: Record<string, unknown>; event: string } {
  if (text.trim() === "") throw new AdapterError("stdin is empty: expected one JSON object (the agent's hook input)", eventArg);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new AdapterError(`stdin is not JSON: ${(err as Error).message}`, eventArg);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new AdapterError(`stdin must be a JSON object, got ${Array.isArray(body) ? "an array" : body === null ? "null" : typeof body}`, eventArg);
  const obj = body as Record<string, unknown>;
  if (dialect === "ai-memory") {
    const event = obj["event"];
    if (typeof event !== "string" || !/^[a-z_]{1,64}$/.test(event)) throw new AdapterError(`the ai-memory envelope needs "event": a hook event name such as "pre_store"`, eventArg);
    if (typeof obj["payload"] !== "object" || obj["payload"] === null || Array.isArray(obj["payload"])) throw new AdapterError(`the ai-memory envelope needs "payload": an object`, event);
    if (eventArg !== undefined && eventArg !== event) throw new AdapterError(`the envelope's event "${event}" is not the command line's ${eventArg}`, event);
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

/**
 * The client token: the token variable (`--token-env`, default VCP_CLIENT_TOKEN) unless `--token-file`
 * is given; VCP_TOKEN_FILE when neither is. Read once per process; a file that cannot be read is the
 * adapter's failure, naming the file (never a request without the token the user meant to send).
 */
let tokenMemo: { token: string | undefined } | undefined;
function clientToken(opts: HookOptions): string | undefined {
  if (tokenMemo !== undefined) return tokenMemo.token;
  const fromEnv = process.env[opts.tokenEnv];
  let token: string | undefined;
  if (opts.tokenFile !== undefined && (opts.tokenFile.from === "--token-file" || fromEnv === undefined || fromEnv === "")) token = readTokenFile(opts.tokenFile.path, opts.tokenFile.from);
  else token = fromEnv === "" ? undefined : fromEnv;
  tokenMemo = { token };
  return token;
}

export function readTokenFile(path: string, from: string): string {
  let fd: number;
  try {
    // SECURITY: O_NONBLOCK + regular files only: a FIFO or a device never stalls the adapter.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (err) {
    throw new AdapterError(`${from} ${path}: cannot read it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new AdapterError(`${from} ${path}: not a regular file`);
    // SECURITY: the bound applies before reading.
    if (st.size > MAX_TOKEN_FILE_BYTES) throw new AdapterError(`${from} ${path}: ${st.size} bytes, larger than a token file may be (${MAX_TOKEN_FILE_BYTES})`);
    const bytes = Buffer.alloc(st.size);
    let off = 0;
    while (off < st.size) {
      const n = readSync(fd, bytes, off, st.size - off, off);
      if (n === 0) break;
      off += n;
    }
    const token = bytes.subarray(0, off).toString("utf8").trim();
    if (token === "") throw new AdapterError(`${from} ${path}: the file is empty`);
    if (/[\s\u0000-\u001f\u007f]/.test(token)) throw new AdapterError(`${from} ${path}: a token is one word; the file holds whitespace or control characters inside it`);
    return token;
  } finally {
    closeSync(fd);
  }
}

// ── the route ─────────────────────────────────────────────────────────────────────────────────────

type AnyAgent = HttpAgent | HttpsAgent;

/** One HTTP exchange: the status and the body text (capped at MAX_BYTES). */
interface Exchanged {
  status: number;
  text: string;
}

async function postEvent(opts: HookOptions, event: string, bodyText: string, agent: AnyAgent | undefined, signal?: AbortSignal): Promise<RouteAnswer> {
  const url = new URL(`v1/profiles/${encodeURIComponent(PROFILE_OF[opts.dialect])}/events/${encodeURIComponent(event)}`, opts.server.href.endsWith("/") ? opts.server : `${opts.server.href}/`);
  let token: string | undefined;
  try {
    token = clientToken(opts);
  } catch (err) {
    throw new AdapterError((err as Error).message, event);
  }
  const headers: Record<string, string> = { "content-type": "application/json", "content-length": String(Buffer.byteLength(bodyText)), accept: "application/json" };
  if (token !== undefined) headers["authorization"] = `Bearer ${token}`;
  const hookEnv = hookEnvHeader(opts, event);
  if (hookEnv !== undefined) headers[HOOK_ENV_HEADER] = hookEnv;
  let exchanged: Exchanged;
  try {
    exchanged = url.protocol === "http:" && agent === undefined ? await exchangeNet(url, headers, bodyText, opts.timeoutMs) : await exchangeHttp(url, headers, bodyText, opts.timeoutMs, agent, signal);
  } catch (err) {
    throw err instanceof AdapterError ? new AdapterError(err.message, event) : err;
  }
  const { status, text } = exchanged;
  if (status >= 400 && status <= 499) {
    // The server refused the event (a bad token, a body over its limit, a key it does not take …): say
    // what it said. Guarded events are refused as a 200 block by servers that know the guard contract.
    const hint = status === 401 && token === undefined ? ` (no token was sent: set ${opts.tokenEnv}, or pass --token-file)` : "";
    const said = serverMessage(text);
    throw new AdapterError(`${url.origin} refused the event: ${status}${said === "" ? "" : ` ${said}`}${hint}`, event);
  }
  if (status < 200 || status > 299) {
    const said = serverMessage(text);
    throw new AdapterError(`${url.origin} answered ${status}${said === "" ? "" : `: ${said}`}`, event);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AdapterError(`${url.origin} answered ${status} with a body that is not JSON`, event);
  }
  const answer = parsed as Partial<RouteAnswer> | null;
  if (typeof answer !== "object" || answer === null || typeof answer.native !== "object" || answer.native === null || Array.isArray(answer.native) || typeof answer.exit_code !== "number") {
    throw new AdapterError(`${url.origin} answered ${status} without { native, exit_code }: is --server a vcp-hooks server with profiles?`, event);
  }
  // What this answer says of the plan's fail_closed guards, for the next failure (an older server says nothing).
  const guard = guardOf(answer);
  if (guard !== undefined) writeGuard(opts.server.href, PROFILE_OF[opts.dialect], guard);
  return answer as RouteAnswer;
}

/**
 * node:http / node:https (loaded on first use): https servers and the daemon's keep-alive connection.
 * `timeoutMs` bounds the whole exchange, and `signal` ends it early: either way the request is destroyed,
 * so a slow answer never keeps its connection from the next request.
 */
async function exchangeHttp(url: URL, headers: Record<string, string>, bodyText: string, timeoutMs: number, agent: AnyAgent | undefined, signal?: AbortSignal): Promise<Exchanged> {
  const send = url.protocol === "https:" ? (await import("node:https")).request : (await import("node:http")).request;
  return new Promise((done, fail) => {
    const settle = () => {
      clearTimeout(deadline);
      signal?.removeEventListener("abort", abort);
    };
    const req: ClientRequest = send(url, { method: "POST", headers, agent }, (res) => {
      readBody(res).then(
        (text) => {
          settle();
          done({ status: res.statusCode ?? 0, text });
        },
        (err: unknown) => {
          settle();
          fail(err);
        },
      );
    });
    const abort = () => req.destroy(new AdapterError(`no answer from ${url.origin} within ${timeoutMs} ms`));
    const deadline = setTimeout(abort, timeoutMs);
    signal?.addEventListener("abort", abort, { once: true });
    req.once("error", (err) => {
      settle();
      fail(err instanceof AdapterError ? err : new AdapterError(`${url.origin} unreachable: ${(err as NodeJS.ErrnoException).code ?? err.message}`));
    });
    if (signal?.aborted) abort();
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
    // A request destroyed while its answer streams in ends the answer without an error of its own.
    res.once("aborted", () => fail(new AdapterError("the answer was cut off")));
  });
}

/**
 * One-shot plain-HTTP exchange over node:net (`Connection: close`). Why not node:http: loading it costs
 * several times the rest of this adapter's start (bench/adapter.ts), and a one-shot POST needs only a
 * request line, headers, and one response.
 *
 * A server may answer before it has read the body — a 413 sent on the headers alone — and close the
 * connection while the body still goes out: the write fails (EPIPE, ECONNRESET) and Node discards the
 * connection with the answer unread. So the body goes out in pieces, the next only while no answer has
 * begun, the answer is taken as soon as it is complete, and a connection error after a complete answer
 * is not an error. If the write still loses the race, the same request head is sent once more without
 * its body: a server that decided on the head alone gives the same answer again; one that waits for a
 * body gets none within the probe's time, and the write's error stands.
 */
async function exchangeNet(url: URL, headers: Record<string, string>, bodyText: string, timeoutMs: number): Promise<Exchanged> {
  const started = Date.now();
  const body = Buffer.from(bodyText, "utf8");
  try {
    return await netOnce(url, headers, body, timeoutMs);
  } catch (err) {
    if (!(err instanceof AnswerLost)) throw err;
    const probeMs = Math.min(PROBE_MS, timeoutMs - (Date.now() - started));
    if (probeMs <= 0) throw err;
    try {
      return await netOnce(url, headers, undefined, probeMs);
    } catch {
      throw err;
    }
  }
}

/** The connection failed while the body was going out, before any answer was read. */
class AnswerLost extends AdapterError {}

/** How long the head-only probe waits for the answer a body write lost. */
const PROBE_MS = 2000;

/** One connection: the head, then `body` in pieces (none: the head alone, for the probe). */
async function netOnce(url: URL, headers: Record<string, string>, body: Buffer | undefined, timeoutMs: number): Promise<Exchanged> {
  const { connect } = await import("node:net");
  const host = url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
  const port = Number(url.port || 80);
  const head = [`POST ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, "connection: close", ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), "", ""].join("\r\n");
  return new Promise((done, fail) => {
    const socket = connect({ host, port });
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    let writing = body !== undefined && body.length > 0;
    const finish = (err: Error | undefined, value?: Exchanged) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      socket.destroy();
      if (err) fail(err);
      else done(value!);
    };
    const received = () => Buffer.concat(chunks);
    const deadline = setTimeout(() => finish(new AdapterError(`no answer from ${url.origin} within ${timeoutMs} ms`)), timeoutMs);
    socket.once("error", (err: NodeJS.ErrnoException) => {
      // The server may have answered and then reset the connection: its answer stands.
      let answer: Exchanged | undefined;
      try {
        answer = chunks.length > 0 ? readResponse(received(), url.origin, false) : undefined;
      } catch {
        answer = undefined;
      }
      if (answer !== undefined) finish(undefined, answer);
      else if (writing && chunks.length === 0 && (err.code === "EPIPE" || err.code === "ECONNRESET")) finish(new AnswerLost(`${url.origin} unreachable: ${err.code}`));
      else finish(new AdapterError(`${url.origin} unreachable: ${err.code ?? err.message}`));
    });
    socket.on("data", (c: Buffer) => {
      size += c.length;
      // SECURITY: the cap applies while reading, before anything is parsed.
      if (size > MAX_BYTES + 65536) return finish(new AdapterError(`the server's answer is larger than ${MAX_BYTES} bytes`));
      chunks.push(c);
      try {
        const answer = readResponse(received(), url.origin, false);
        if (answer !== undefined) finish(undefined, answer);
      } catch (err) {
        finish(err as Error);
      }
    });
    socket.once("end", () => {
      try {
        finish(undefined, readResponse(received(), url.origin, true));
      } catch (err) {
        finish(err as Error);
      }
    });
    // No half-close after the body: Node's HTTP server drops a request whose client ended its side
    // before the answer; `connection: close` makes the server end the connection after answering.
    socket.write(head);
    let at = 0;
    const writeNext = () => {
      if (settled || body === undefined || at >= body.length) {
        writing = false;
        return;
      }
      // An answer has begun before the body is all out: the server decided on what it had; stop sending.
      if (chunks.length > 0) return;
      const piece = body.subarray(at, at + WRITE_PIECE_BYTES);
      at += piece.length;
      // The next piece once this one is written and a turn of the event loop has read what came in.
      socket.write(piece, (err) => {
        if (err === undefined || err === null) setImmediate(writeNext);
      });
    };
    writeNext();
  });
}

/** Status and body of a complete HTTP/1.1 response (read to EOF). */
export function parseResponse(raw: Buffer, origin: string): Exchanged {
  return readResponse(raw, origin, true)!;
}

/**
 * Status and body of the HTTP/1.1 response in `raw`; undefined while it is incomplete and `eof` is
 * false (more may come). At EOF an incomplete response is an error naming what is missing. Interim
 * 1xx responses are skipped.
 */
function readResponse(raw: Buffer, origin: string, eof: boolean): Exchanged | undefined {
  let rest = raw;
  for (;;) {
    // Not HTTP from its first bytes (another service on the port, a proxy's banner): said at once.
    if (rest.length >= 8 && !/^HTTP\/1\.[01]/.test(rest.subarray(0, 8).toString("latin1"))) throw new AdapterError(`${origin} did not answer HTTP/1.1`);
    const split = rest.indexOf("\r\n\r\n");
    if (split === -1) {
      if (!eof) return undefined;
      throw new AdapterError(`${origin} closed the connection without a complete answer`);
    }
    const lines = rest.subarray(0, split).toString("latin1").split("\r\n");
    const status = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
    if (!status) throw new AdapterError(`${origin} did not answer HTTP/1.1`);
    const code = Number(status[1]);
    if (code >= 100 && code <= 199) {
      rest = rest.subarray(split + 4);
      continue;
    }
    const header = (name: string) => lines.slice(1).find((l) => l.toLowerCase().startsWith(`${name}:`))?.slice(name.length + 1).trim();
    let body = rest.subarray(split + 4);
    if (/\bchunked\b/i.test(header("transfer-encoding") ?? "")) {
      const parts: Buffer[] = [];
      let at = 0;
      for (;;) {
        const eol = body.indexOf("\r\n", at);
        if (eol === -1) {
          if (!eof) return undefined;
          throw new AdapterError(`${origin} sent a cut-off chunked answer`);
        }
        const len = Number.parseInt(body.subarray(at, eol).toString("latin1"), 16);
        if (!Number.isFinite(len) || len < 0) throw new AdapterError(`${origin} sent a malformed chunked answer`);
        if (len === 0) break;
        if (body.length < eol + 2 + len + 2) {
          if (!eof) return undefined;
          throw new AdapterError(`${origin} sent a cut-off chunked answer`);
        }
        parts.push(body.subarray(eol + 2, eol + 2 + len));
        at = eol + 2 + len + 2;
      }
      body = Buffer.concat(parts);
    } else {
      const length = header("content-length");
      if (length !== undefined) {
        const n = Number(length);
        if (!Number.isInteger(n) || n < 0) throw new AdapterError(`${origin} sent a malformed content-length`);
        if (body.length < n) {
          if (!eof) return undefined;
          throw new AdapterError(`${origin} sent a cut-off answer`);
        }
        body = body.subarray(0, n);
      } else if (!eof) {
        // No length: the body ends with the connection.
        return undefined;
      }
    }
    if (body.length > MAX_BYTES) throw new AdapterError(`the server's answer is larger than ${MAX_BYTES} bytes`);
    return { status: code, text: body.toString("utf8") };
  }
}

/** `CODE: message` from the server's `{ error: { code, message } }`, or "". */
function serverMessage(text: string): string {
  try {
    const e = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
    if (e && typeof e.message === "string") return `${typeof e.code === "string" ? `${e.code}: ` : ""}${e.message}`;
  } catch {
    // not JSON: say nothing more than the status
  }
  return "";
}

/**
 * The agent's hook environment for the request (src/tooling/hook-env.ts): the documented variables of
 * the dialect's profile that are set in this process's environment. One that does not fit the bounds
 * is the adapter's failure, naming it (never a request that silently drops what a script reads).
 */
function hookEnvHeader(opts: Pick<HookOptions, "dialect">, event: string): string | undefined {
  try {
    return encodeHookEnv(PROFILE_OF[opts.dialect], process.env);
  } catch (err) {
    throw new AdapterError(`the agent's hook environment cannot be sent: ${(err as Error).message}`, event);
  }
}

/** `--embedded`: the heavy runtime module loads here, on this path only. */
async function fireInProcess(opts: HookOptions, bundles: string[], event: string, body: Record<string, unknown>): Promise<RouteAnswer> {
  try {
    const { fireEmbedded } = await import("./hook-embedded.js");
    return await fireEmbedded({
      bundles,
      profile: PROFILE_OF[opts.dialect],
      event,
      input: body,
      ...hookEnvOfProcess(opts, event),
      ...(opts.keyring !== undefined ? { keyring: opts.keyring } : {}),
      allowUnsigned: opts.allowUnsigned,
      onGuard: (facts) => (embeddedGuard = facts),
    });
  } catch (err) {
    throw new AdapterError(`embedded runtime: ${(err as Error).message}`, event);
  }
}

/** `--embedded`: the same variables as the header carries, as an object. */
function hookEnvOfProcess(opts: Pick<HookOptions, "dialect">, event: string): { env?: Record<string, string> } {
  const header = hookEnvHeader(opts, event);
  if (header === undefined) return {};
  const decoded = decodeHookEnv(header);
  return decoded.env !== undefined ? { env: decoded.env } : {};
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

/** The event being answered, once known (the hard stop's answer depends on it). */
let currentEvent: string | undefined;

async function answerOne(opts: HookOptions, text: string, agent: AnyAgent | undefined, signal?: AbortSignal): Promise<Rendered> {
  let parsed: { body: Record<string, unknown>; event: string } | undefined;
  try {
    parsed = parseEvent(opts.dialect, text, opts.event);
    currentEvent = parsed.event;
    const answer = opts.embedded !== undefined ? await fireInProcess(opts, opts.embedded, parsed.event, parsed.body) : await postEvent(opts, parsed.event, text, agent, signal);
    const rendered = renderAnswer(opts.dialect, answer);
    if (opts.record !== undefined) record(opts.record, opts, parsed.event, parsed.body, answer, rendered);
    return rendered;
  } catch (err) {
    const why = err instanceof AdapterError ? err.message : `unexpected: ${(err as Error).message}`;
    const event = parsed?.event ?? (err instanceof AdapterError ? err.event : undefined) ?? opts.event;
    const rendered = renderFailureFor(opts, event, why);
    if (opts.record !== undefined) record(opts.record, opts, event ?? "unknown", parsed?.body ?? text.slice(0, 65536), undefined, rendered, why);
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
 * Resident mode: one envelope per stdin line, one decision line each, in order (the next envelope is
 * read after the previous answer is written), over keep-alive connections. Each envelope has its own
 * deadline: past it, its request is destroyed with its connection — a slow or trickling answer never
 * holds the connection the next envelope needs (at most one request is ever in flight).
 */
async function runDaemon(opts: HookOptions): Promise<number> {
  const agent = opts.server.protocol === "https:" ? new (await import("node:https")).Agent({ keepAlive: true, maxSockets: 1 }) : new (await import("node:http")).Agent({ keepAlive: true, maxSockets: 1 });
  for await (const text of boundedLines(process.stdin, MAX_BYTES)) {
    if (text === undefined) {
      await emit({ ...renderFailureFor(opts, undefined, `envelope larger than ${MAX_BYTES} bytes`), exitCode: 0 });
      continue;
    }
    if (text.trim() === "") continue;
    currentEvent = undefined;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      answerOne(opts, text, agent, controller.signal),
      new Promise<Rendered>((done) => {
        // A backstop over the request's own deadline (stdin parsing, the guard file, a stuck write).
        timer = setTimeout(() => done(renderFailureFor(opts, currentEvent, `no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs + 1000);
      }),
    ]);
    clearTimeout(timer);
    // Whatever is still in flight for this envelope ends here, and its connection with it.
    controller.abort();
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

interface Parsed {
  opts?: HookOptions;
  shim?: { dialect: string; out: string; args: string[] };
  help?: boolean;
  /** `--print-sh`: write the POSIX sh adapter (hook-sh.ts) to stdout. */
  printSh?: boolean;
  error?: string;
  /** For the failure answer of bad arguments: what could be read of them. */
  onError: OnError;
  dialect?: Dialect;
  event?: string;
  server?: URL;
}

const EVENT_NAME = /^[A-Za-z][A-Za-z0-9_:.-]{0,127}$/;

function parseOptions(argv: string[], env: NodeJS.ProcessEnv = process.env): Parsed {
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
        "token-file": { type: "string" },
        "on-error": { type: "string" },
        "timeout-ms": { type: "string" },
        record: { type: "string" },
        daemon: { type: "boolean" },
        embedded: { type: "boolean" },
        bundle: { type: "string", multiple: true },
        keyring: { type: "string" },
        "allow-unsigned": { type: "boolean" },
        "write-shim": { type: "string" },
        "print-sh": { type: "boolean" },
        out: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }) as { values: Record<string, string | boolean | undefined>; positionals: string[] });
  } catch (err) {
    // What the failure answer needs, read from the raw arguments as far as they go.
    const after = (flag: string) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : undefined);
    const onError = after("--on-error") as OnError | undefined;
    const dialect = after("--dialect") as Dialect | undefined;
    const event = argv[0] !== undefined && !argv[0].startsWith("-") && EVENT_NAME.test(argv[0]) ? argv[0] : undefined;
    let server: URL | undefined;
    try {
      server = new URL(after("--server") ?? env["VCP_SERVER"] ?? DEFAULT_SERVER);
    } catch {
      server = undefined;
    }
    return {
      error: (err as Error).message,
      onError: onError !== undefined && ON_ERROR.includes(onError) ? onError : "auto",
      ...(dialect && DIALECTS.includes(dialect) ? { dialect } : {}),
      ...(event !== undefined ? { event } : {}),
      ...(server !== undefined ? { server } : {}),
    };
  }
  const onErrorRaw = (values["on-error"] as string | undefined) ?? "auto";
  const onError: OnError = (ON_ERROR as readonly string[]).includes(onErrorRaw) ? (onErrorRaw as OnError) : "auto";
  const dialectRaw = values["dialect"] as string | undefined;
  const dialect = dialectRaw !== undefined && (DIALECTS as readonly string[]).includes(dialectRaw) ? (dialectRaw as Dialect) : undefined;
  const event = positionals[0];
  let serverForFailure: URL | undefined;
  try {
    serverForFailure = new URL((values["server"] as string | undefined) ?? env["VCP_SERVER"] ?? DEFAULT_SERVER);
  } catch {
    serverForFailure = undefined;
  }
  const base: Parsed = { onError, ...(dialect ? { dialect } : {}), ...(event !== undefined && EVENT_NAME.test(event) ? { event } : {}), ...(serverForFailure ? { server: serverForFailure } : {}) };
  if (values["help"] === true) return { ...base, help: true };
  if (values["print-sh"] === true) {
    if (argv.length > 1) return { ...base, error: "--print-sh takes no other argument: the script takes the adapter's options when the agent runs it" };
    return { ...base, printSh: true };
  }
  if (!(ON_ERROR as readonly string[]).includes(onErrorRaw)) return { ...base, error: `--on-error must be auto, warn, block or allow, not '${onErrorRaw}'` };
  const bundles = (values["bundle"] as unknown as string[] | undefined) ?? [];
  const embedded = values["embedded"] === true;
  const keyring = values["keyring"] as string | undefined;
  const allowUnsigned = values["allow-unsigned"] === true;
  if (!embedded && bundles.length > 0) return { ...base, error: "--bundle needs --embedded (without it the adapter asks the server, which has its own bundles)" };
  if (!embedded && (keyring !== undefined || allowUnsigned)) return { ...base, error: `${keyring !== undefined ? "--keyring" : "--allow-unsigned"} is for --embedded (the server verifies its own bundles)` };
  if (embedded && bundles.length === 0) return { ...base, error: "--embedded needs at least one --bundle <file.vcpb|policy dir>" };
  if (embedded && values["server"] !== undefined) return { ...base, error: "--embedded runs without a server: drop --server" };
  if (embedded && values["daemon"] === true) return { ...base, error: "--embedded with --daemon is not supported: run 'vcp-hooks serve' for a resident adapter" };
  if (embedded && keyring === undefined && !allowUnsigned) {
    return { ...base, error: "--embedded needs --keyring <file> (the bundles' signatures are verified as 'serve' verifies them) or --allow-unsigned (run unsigned bundles and policy directories; signatures are not checked)" };
  }
  if (bundles.some((b) => b === "")) return { ...base, error: "--bundle must name a file or directory" };
  if (keyring === "") return { ...base, error: "--keyring must name a file" };
  const timeoutDialect: Dialect = values["write-shim"] !== undefined ? "ai-memory" : (dialect ?? "gemini");
  let timeoutMs = DEFAULT_TIMEOUT_MS[timeoutDialect];
  if (values["timeout-ms"] !== undefined) {
    timeoutMs = Number(values["timeout-ms"]);
    if (!Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > 600_000) return { ...base, error: `--timeout-ms must be an integer from 1 to 600000, not '${String(values["timeout-ms"])}'` };
  }
  const serverRaw = (values["server"] as string | undefined) ?? env["VCP_SERVER"] ?? DEFAULT_SERVER;
  let server: URL;
  try {
    server = new URL(serverRaw);
    if (server.protocol !== "http:" && server.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    return { ...base, error: `${values["server"] !== undefined ? "--server" : "VCP_SERVER"} must be an http(s) URL, not '${serverRaw}'` };
  }
  const tokenEnv = (values["token-env"] as string | undefined) ?? "VCP_CLIENT_TOKEN";
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(tokenEnv)) return { ...base, error: `--token-env must name an environment variable, not '${tokenEnv}'` };
  const tokenFileRaw = values["token-file"] as string | undefined;
  if (tokenFileRaw === "") return { ...base, error: "--token-file must name a file" };
  const tokenFile: HookOptions["tokenFile"] =
    tokenFileRaw !== undefined ? { path: resolve(tokenFileRaw), from: "--token-file" } : env["VCP_TOKEN_FILE"] ? { path: resolve(env["VCP_TOKEN_FILE"]), from: "VCP_TOKEN_FILE" } : undefined;
  if (values["write-shim"] !== undefined) {
    if (values["write-shim"] !== "ai-memory") return { ...base, error: `--write-shim supports ai-memory only, not '${String(values["write-shim"])}'` };
    if (typeof values["out"] !== "string") return { ...base, error: "--write-shim needs --out <path>" };
    const target = embedded
      ? ["--embedded", ...bundles.flatMap((b) => ["--bundle", resolve(b)]), ...(keyring !== undefined ? ["--keyring", resolve(keyring)] : []), ...(allowUnsigned ? ["--allow-unsigned"] : [])]
      : ["--server", server.href, "--token-env", tokenEnv, ...(tokenFileRaw !== undefined ? ["--token-file", resolve(tokenFileRaw)] : [])];
    const args = ["--dialect", "ai-memory", ...target, "--on-error", onError, "--timeout-ms", String(timeoutMs)];
    if (values["daemon"] === true) args.push("--daemon");
    if (typeof values["record"] === "string") args.push("--record", resolve(values["record"]));
    return { ...base, shim: { dialect: "ai-memory", out: values["out"], args } };
  }
  if (dialectRaw === undefined) return { ...base, error: `--dialect is required (${DIALECTS.join(", ")})` };
  if (dialect === undefined) return { ...base, error: `--dialect must be one of ${DIALECTS.join(", ")}, not '${dialectRaw}'` };
  if (positionals.length > 1) return { ...base, error: `one event expected, got ${positionals.join(" ")}` };
  if (values["daemon"] === true && dialect !== "ai-memory") return { ...base, error: "--daemon is for --dialect ai-memory" };
  if (event !== undefined && !EVENT_NAME.test(event)) return { ...base, error: `'${event}' is not an event name` };
  return {
    ...base,
    opts: {
      dialect,
      event,
      server,
      tokenEnv,
      tokenFile,
      onError,
      timeoutMs,
      record: values["record"] as string | undefined,
      daemon: values["daemon"] === true,
      embedded: embedded ? bundles.map((b) => resolve(b)) : undefined,
      keyring: keyring !== undefined ? resolve(keyring) : undefined,
      allowUnsigned,
    },
  };
}

/**
 * Run the adapter with `argv` (after `hook`). Exits the process itself once the answer is written,
 * so that nothing left open (stdin, a socket, the embedded runtime) can keep an agent waiting.
 */
export async function runHook(argv: string[]): Promise<number> {
  const parsed = parseOptions(argv);
  if (parsed.help) {
    process.stdout.write(`${HOOK_USAGE}\n`);
    return 0;
  }
  if (parsed.printSh) {
    const [{ shAdapterText }, { getProfile }, { versionInfo }] = await Promise.all([import("./hook-sh.js"), import("../profile-kit.js"), import("./version.js")]);
    process.stdout.write(shAdapterText(versionInfo().version, (profile) => Object.keys(getProfile(profile).events)));
    return 0;
  }
  if (parsed.error !== undefined) {
    // A broken settings line is the adapter's failure: the --on-error rule, never a silent exit 2.
    const dialect = parsed.dialect ?? "gemini";
    const how = { dialect, onError: parsed.onError, server: parsed.server ?? new URL(DEFAULT_SERVER), embedded: undefined, daemon: false };
    return exitWith(renderFailureFor(how, parsed.dialect === undefined ? undefined : parsed.event, `bad arguments: ${parsed.error}; see 'vcp-hooks hook --help'`));
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
  currentEvent = opts.event;
  // SECURITY: a hard stop: stdin never closed, a server that trickles bytes, a runtime slow to start —
  // the --on-error answer (for a guarded event under auto: the block) by --timeout-ms + 1 s, or, with
  // --embedded, by --timeout-ms itself (the whole call's deadline), whatever is pending.
  const hardMs = opts.embedded !== undefined ? opts.timeoutMs : opts.timeoutMs + 1000;
  const hard = setTimeout(() => void exitWith(renderFailureFor(opts, currentEvent, `no answer within ${opts.timeoutMs} ms`)), hardMs);
  hard.unref();
  let text: string;
  try {
    text = await readStdin();
  } catch (err) {
    return exitWith(renderFailureFor(opts, currentEvent, (err as Error).message));
  }
  return exitWith(await answerOne(opts, text, undefined));
}
