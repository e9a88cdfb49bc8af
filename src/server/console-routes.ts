/**
 * The operator console (issue 17): its static page under `/console`, the live decisions stream
 * `GET /v1/decisions/stream` (server-sent events), and the latest sandbox-bench security report.
 *
 * ```
 *  runtime "chain.completed" ─▶ filter (session, bundle, outcome: the client's query)
 *                             ─▶ token bucket, `maxEventsPerSecond` per client ─ over it ⇒ sampled_out++
 *                             ─▶ fits limits.stream_buffer_bytes unsent (server/sse.ts)? send : dropped++
 *  every statsMs: `event: stats` {sent, sampled_out, dropped}; every heartbeatMs: a `:` comment line
 * ```
 *
 * Static assets are read once at registration (built by `npm run build` into dist/console); every
 * console response carries `Content-Security-Policy: default-src 'self'` and no asset ever loads
 * anything from outside the server. The page itself needs no token to load; every API call it makes
 * sends the operator token (kept in sessionStorage) in the Authorization header, never in a URL.
 */
import type { EventStream, EventStreams } from "./sse.js";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, extname, join, resolve } from "node:path";
import type { FastifyInstance } from "fastify";
import { VcpError, type ChainCompletedEvent, type DecisionOutcome, type DecisionQuery, type Runtime } from "../index.js";
import { routes } from "./schemas.js";

export interface ConsoleOptions {
  /** Directory of the built console (index.html, app.js, style.css). Default: dist/console. */
  assetsDir?: string;
  /** Directory `npm run bench:sandbox` writes report.json / report.html to. Default: bench/reports/sandbox under the working directory. */
  securityReportDir?: string;
  /** Per-client decision stream settings (tests lower them). */
  stream?: Partial<StreamSettings>;
}

/** What the server hands the console routes: its event-stream registry and the live byte bound. */
export interface ConsoleStreams {
  streams: EventStreams;
  streamBufferBytes(): number;
}

export interface StreamSettings {
  /** Chains sent per second per client before it samples (the rest are counted as `sampled_out`). */
  maxEventsPerSecond: number;
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs: number;
  /** How often the `stats` event reports the client's counters. */
  statsMs: number;
}

export const DEFAULT_STREAM_SETTINGS: StreamSettings = { maxEventsPerSecond: 50, heartbeatMs: 15_000, statsMs: 1_000 };

/** Serialized events larger than this are sent without their annotations and diffs (marked `_truncated`). */
const MAX_EVENT_BYTES = 64 * 1024;

/** `default-src 'self'`: no inline script, no CDN, no fetch outside the server. */
const CONSOLE_CSP = "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";
/** The downloadable report.html is inline-styled and script-free: it gets no script at all. */
const REPORT_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; sandbox";

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".map": "application/json; charset=utf-8",
  ".json": "application/json; charset=utf-8",
};

const OPERATOR = { roles: ["operator"] } as const;
/** Operators read every decision; a client only the chains it fired. */
const OPERATOR_OR_CLIENT = { roles: ["operator", "client"] } as const;
const PUBLIC = { roles: null } as const;

/**
 * Register the console's routes on the server (called once from createServer).
 *
 * @example
 * ```ts
 * await registerConsoleRoutes(app, runtime, { streams, streamBufferBytes }, { securityReportDir: "bench/reports/sandbox" });
 * ```
 */
export async function registerConsoleRoutes(app: FastifyInstance, runtime: Runtime, { streams, streamBufferBytes }: ConsoleStreams, options: ConsoleOptions = {}): Promise<void> {
  const assets = loadAssets(options.assetsDir ?? defaultAssetsDir());
  const reportDir = resolve(options.securityReportDir ?? join("bench", "reports", "sandbox"));
  const settings: StreamSettings = { ...DEFAULT_STREAM_SETTINGS, ...options.stream };

  const sendAsset = (name: string) => {
    const asset = assets.get(name);
    if (asset === undefined) {
      throw new VcpError("NOT_FOUND", assets.size === 0 ? "the console is not built: run npm run build (it writes dist/console)" : `no console asset ${name}`);
    }
    return asset;
  };
  app.get("/console", { schema: { hide: true }, config: PUBLIC }, async (_request, reply) => {
    const asset = sendAsset("index.html");
    return reply.headers(asset.headers).send(asset.body);
  });
  app.get("/console/*", { schema: { hide: true }, config: PUBLIC }, async (request, reply) => {
    const name = (request.params as { "*": string })["*"];
    // Client-side routes (/console/bundles, …) get the page; files are looked up by exact name only.
    const asset = name === "" || !name.includes(".") ? sendAsset("index.html") : sendAsset(name);
    return reply.headers(asset.headers).send(asset.body);
  });

  // ── the latest security report of `npm run bench:sandbox` ──────────────────────────────────────
  const noReport = () =>
    new VcpError("NOT_FOUND", "no security report yet: run npm run bench:sandbox (it writes report.json and report.html)", { dir: reportDir });
  app.get(
    "/v1/console/security-report",
    { schema: { tags: ["ops"], operationId: "getSecurityReport", summary: "The latest sandbox-bench report (report.json), 404 before the first run", security: [{ operator: [] }] }, config: OPERATOR },
    async (_request, reply) => {
      const text = await readFile(join(reportDir, "report.json"), "utf8").catch(() => {
        throw noReport();
      });
      return reply.header("content-type", "application/json; charset=utf-8").header("cache-control", "no-store").send(text);
    },
  );
  app.get(
    "/v1/console/security-report.html",
    { schema: { tags: ["ops"], operationId: "getSecurityReportHtml", summary: "The latest sandbox-bench report as self-contained HTML (a download)", security: [{ operator: [] }] }, config: OPERATOR },
    async (_request, reply) => {
      const html = await readFile(join(reportDir, "report.html")).catch(() => {
        throw noReport();
      });
      return reply
        .header("content-type", "text/html; charset=utf-8")
        .header("content-security-policy", REPORT_CSP)
        .header("x-content-type-options", "nosniff")
        .header("content-disposition", 'attachment; filename="vcp-hooks-security-report.html"')
        .header("cache-control", "no-store")
        .send(html);
    },
  );

  // ── live decisions (operator): server-sent events of chain.completed ───────────────────────────
  const clients = new Set<StreamClient>();
  let unsubscribe: (() => void) | undefined;
  const onChain = (event: ChainCompletedEvent): void => {
    // Serialized at most once per event, and only when a client takes it.
    let wire: string | undefined;
    for (const client of clients) {
      if (!client.wants(event)) continue;
      if (!client.admit()) continue;
      wire ??= serializeDecision(event);
      client.push(wire);
    }
  };

  app.get(
    "/v1/decisions/stream",
    {
      schema: {
        tags: ["ops"],
        operationId: "streamDecisions",
        summary: "Server-sent events: every chain as it completes (per-hook outcome, duration, annotations, modification diff), sampled above a per-client rate",
        security: [{ operator: [] }],
        querystring: {
          type: "object",
          additionalProperties: false,
          properties: {
            session: { type: "string", minLength: 1, maxLength: 256 },
            bundle: { type: "string", minLength: 1, maxLength: 64 },
            outcome: { type: "string", minLength: 1, maxLength: 32 },
          },
        },
      },
      config: OPERATOR,
    },
    (request, reply) => {
      const filter = request.query as StreamFilter;
      // STREAM_LIMIT (429) here, before anything is sent or subscribed.
      const out = streams.open(request, reply, request.principal!.id);
      const res = out.res;
      const client = new StreamClient(out, filter, settings, streamBufferBytes());
      clients.add(client);
      unsubscribe ??= runtime.on!("chain.completed", onChain);
      client.hello();
      const stop = (): void => {
        if (!clients.has(client)) return;
        client.close();
        clients.delete(client);
        request.log.info({ principal: request.principal?.id, sent: client.sent, sampled_out: client.sampledOut, dropped: client.dropped }, "decision stream closed");
        if (clients.size === 0 && unsubscribe !== undefined) {
          unsubscribe();
          unsubscribe = undefined;
        }
      };
      // The response's close, not the request's: a GET request "closes" as soon as its (empty) body is read.
      res.on("close", stop);
      res.on("error", stop);
      request.log.info({ principal: request.principal?.id, query: request.query }, "decision stream opened");
    },
  );

  // ── decisions read back from the audit log (operator: all; client: its own chains) ───────────────
  app.get("/v1/decisions", { schema: routes.listDecisions, config: OPERATOR_OR_CLIENT }, async (request) => {
    const q = request.query as DecisionsQueryString;
    const principal = request.principal!;
    const query: DecisionQuery = {
      ...(q.since !== undefined ? { since: timeParam("since", q.since) } : {}),
      ...(q.until !== undefined ? { until: timeParam("until", q.until) } : {}),
      ...(q.outcome !== undefined ? { outcome: q.outcome } : {}),
      ...(q.bundle !== undefined ? { bundle: q.bundle } : {}),
      ...(q.profile !== undefined ? { profile: q.profile } : {}),
      ...(q.event !== undefined ? { event: q.event } : {}),
      ...(q.hook !== undefined ? { hook: q.hook } : {}),
      ...(q.session !== undefined ? { session: q.session } : {}),
      ...(q.subject !== undefined ? { subject: q.subject } : {}),
      ...(q.limit !== undefined ? { limit: q.limit } : {}),
      ...(q.cursor !== undefined ? { beforeSeq: decodeCursor(q.cursor) } : {}),
      // SECURITY: tenant scope — a client sees only the chains it fired; only an operator sees every tenant's.
      ...(principal.role === "operator" ? {} : { client: principal.id }),
    };
    const page = await runtime.decisions.query(query);
    return { decisions: page.decisions, next_cursor: page.nextBeforeSeq === null ? null : encodeCursor(page.nextBeforeSeq) };
  });

  // An open stream is never idle: end them all before the server waits for its connections.
  app.addHook("preClose", (done) => {
    for (const client of clients) client.end();
    done();
  });
}

interface DecisionsQueryString {
  since?: string;
  until?: string;
  outcome?: DecisionOutcome;
  bundle?: string;
  profile?: string;
  event?: string;
  hook?: string;
  session?: string;
  subject?: string;
  limit?: number;
  cursor?: string;
}

/** `since` / `until`: epoch milliseconds (digits) or an ISO-8601 time; anything else is INVALID_REQUEST naming the parameter. */
export function timeParam(name: string, value: string): number {
  const ms = /^\d{1,16}$/.test(value) ? Number(value) : /^\d{4}-\d{2}-\d{2}/.test(value) ? Date.parse(value) : Number.NaN;
  if (!Number.isFinite(ms)) {
    throw new VcpError("INVALID_REQUEST", `${name}: expected an ISO-8601 time (2026-11-28T09:00:00Z) or epoch milliseconds, got ${JSON.stringify(value)}`, { field: `querystring.${name}`, value });
  }
  return ms;
}

/** The opaque cursor of `GET /v1/decisions`: the audit `seq` the next page starts below. */
function encodeCursor(beforeSeq: number): string {
  return Buffer.from(`d1:${beforeSeq}`).toString("base64url");
}

function decodeCursor(cursor: string): number {
  const match = /^d1:(\d{1,15})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (match === null) throw new VcpError("INVALID_REQUEST", "cursor: not a next_cursor this server returned", { field: "querystring.cursor" });
  return Number(match[1]);
}

interface StreamFilter {
  session?: string;
  bundle?: string;
  outcome?: string;
}

/**
 * One stream client: its filter, token bucket and counters; what it sends goes through the stream's
 * unsent-bytes bound (server/sse.ts). Exported for the unit test of sampling and dropping (no
 * sockets needed).
 */
export class StreamClient {
  sent = 0;
  sampledOut = 0;
  dropped = 0;
  private tokens: number;
  private refilledAt: number;
  private readonly timers: NodeJS.Timeout[] = [];
  private lastStats = "";

  constructor(
    private readonly out: Pick<EventStream, "send" | "unsentBytes" | "end">,
    private readonly filter: StreamFilter,
    private readonly settings: StreamSettings,
    private readonly bufferBytes: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = settings.maxEventsPerSecond;
    this.refilledAt = now();
  }

  hello(): void {
    this.out.send(`event: hello\ndata: ${JSON.stringify({ max_events_per_second: this.settings.maxEventsPerSecond, buffer_bytes: this.bufferBytes, filter: this.filter })}\n\n`);
    // A client that is behind gets no heartbeat: it has data waiting already, and nothing piles up behind it.
    const beat = (): void => {
      if (this.out.unsentBytes() === 0) this.out.send(": heartbeat\n\n");
    };
    this.timers.push(setInterval(beat, this.settings.heartbeatMs).unref());
    this.timers.push(setInterval(() => this.stats(), this.settings.statsMs).unref());
  }

  wants(event: ChainCompletedEvent): boolean {
    const f = this.filter;
    if (f.session !== undefined && event.session_id !== f.session) return false;
    if (f.bundle !== undefined && !event.hooks.some((h) => h.bundle === f.bundle)) return false;
    // A hook outcome (timeout, …), the chain status (aborted) or the decision's outcome (block, ask, …).
    if (f.outcome !== undefined && !event.hooks.some((h) => h.outcome === f.outcome) && event.status !== f.outcome && event.decision?.outcome !== f.outcome) return false;
    return true;
  }

  /** The token bucket: `maxEventsPerSecond` sustained, as many in a burst. */
  admit(): boolean {
    const now = this.now();
    const rate = this.settings.maxEventsPerSecond;
    this.tokens = Math.min(rate, this.tokens + ((now - this.refilledAt) / 1000) * rate);
    this.refilledAt = now;
    if (this.tokens < 1) {
      this.sampledOut++;
      return false;
    }
    this.tokens -= 1;
    return true;
  }

  /** One decision: sent when it fits the stream's unsent-bytes bound, else dropped and counted. */
  push(wire: string): void {
    if (this.out.send(wire)) this.sent++;
    else this.dropped++;
  }

  /** Counters as an SSE event, sent only when they changed (a quiet stream stays quiet) and the reader keeps up. */
  stats(): void {
    if (this.out.unsentBytes() > 0) return;
    const text = JSON.stringify({ sent: this.sent, sampled_out: this.sampledOut, dropped: this.dropped });
    if (text === this.lastStats) return;
    if (this.out.send(`event: stats\ndata: ${text}\n\n`)) this.lastStats = text;
  }

  end(): void {
    this.close();
    this.out.end();
  }

  close(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers.length = 0;
  }
}

/** One SSE `decision` event. Guest text stays JSON data here; the page renders it as text only. */
export function serializeDecision(event: ChainCompletedEvent): string {
  let json = JSON.stringify(event);
  if (json.length > MAX_EVENT_BYTES) {
    json = JSON.stringify({
      ...event,
      hooks: event.hooks.map(({ annotations, modification, ...rest }) => ({
        ...rest,
        ...(annotations !== undefined ? { annotations: { _truncated: true } } : {}),
        ...(modification !== undefined ? { modification: [{ op: "_truncated" }] } : {}),
      })),
    });
  }
  // SECURITY: JSON.stringify never emits a raw newline, so one `data:` line carries the whole event.
  return `event: decision\nid: ${event.chain_id}\ndata: ${json}\n\n`;
}

interface Asset {
  body: Buffer;
  headers: Record<string, string>;
}

/** Every file of the built console, read once; an unbuilt console is an empty map (404 with a hint). */
function loadAssets(dir: string): Map<string, Asset> {
  const out = new Map<string, Asset>();
  if (!existsSync(join(dir, "index.html"))) return out;
  for (const name of readdirSync(dir)) {
    const file = join(dir, name);
    if (!statSync(file).isFile()) continue;
    out.set(name, {
      body: readFileSync(file),
      headers: {
        "content-type": CONTENT_TYPES[extname(name)] ?? "application/octet-stream",
        "content-security-policy": CONSOLE_CSP,
        "x-content-type-options": "nosniff",
        "referrer-policy": "no-referrer",
        "cache-control": "no-cache",
      },
    });
  }
  return out;
}

/**
 * dist/console: next to the compiled server (dist/src/server → dist/console), or, when the server
 * runs from the sources (tests), the repository's dist/console.
 */
function defaultAssetsDir(): string {
  const here = import.meta.dirname;
  const compiled = resolve(here, "..", "..", "console");
  if (existsSync(join(compiled, "app.js"))) return compiled;
  return resolve(dirname(dirname(here)), "dist", "console");
}
