/**
 * The HTTP API of DESIGN §6.2: a thin fastify adapter over the runtime's public API.
 *
 * ```
 *  request ─▶ onRequest, on EVERY request (known route or not, authenticated or not), before any body byte is read:
 *               closing? · unknown route ⇒ 404 · route auth (bearer → sha256 → timingSafeEqual) · role
 *               · Content-Length vs the route's live limit ⇒ 413
 *          ─▶ preParsing: byte counter for bodies without Content-Length (chunked): over the limit ⇒ 413, stop reading
 *          (an error answered before the body was read closes the connection: the body is never drained)
 *          ─▶ JSON parse (secure-json-parse, __proto__ refused) ─▶ schema validation (ajv, compiled at registration)
 *          ─▶ handler: one runtime call ─▶ response serializer (compiled at registration)
 *  any throw ─▶ errorHandler: status from the error table (ERROR_CODES) ─▶ { "error": { code, message, details } }
 * ```
 *
 * Settings that may change on SIGHUP (tokens, limits, allowlist) live in one object that `update()`
 * replaces as a whole; a request reads it once at its start.
 *
 * Sessions belong to the token that opened them (DESIGN §6.5): every session route passes the
 * request's principal to the runtime, which answers SESSION_NOT_FOUND for another client's session
 * (the rule is src/pipeline/access.ts). Operators may read and act on every session.
 */
import { randomUUID } from "node:crypto";
import Fastify, { LogController, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyBaseLogger } from "fastify";
import swagger from "@fastify/swagger";
import { Transform, type TransformCallback } from "node:stream";
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { assertEvent, jsonValueDepth, VcpError, type AuditQuery, type Constitution, type HookEvent, type HookType, type OpenSessionInput, type Scope, type Runtime, type SessionAccess, type SessionView, type VcpArtifact, type VcpContext } from "../index.js";
import { registerConsoleRoutes, type ConsoleOptions } from "./console-routes.js";
import { createAuthenticator, requireRole, type AuthEntry, type Authenticator, type AuthPrincipal, type Role } from "./auth.js";
import { describeError, ERROR_SCHEMA, ERROR_SCHEMAS_BY_STATUS } from "./errors.js";
import { documentRouteSchema, OPENAPI_TAGS, routes, SharedSchemas } from "./schemas.js";
import { registerProfileRoutes } from "./profile-routes.js";
import { registerApprovalRoutes, type ApprovalStreamSettings } from "./approval-routes.js";
import { createEventStreams, DEFAULT_STREAM_LIMITS, type StreamLimits } from "./sse.js";

/** Settings the server reads per request and that a config reload may replace. */
export interface LiveSettings {
  auth: readonly AuthEntry[];
  /** `streams_per_principal` and `stream_buffer_bytes` default to DEFAULT_STREAM_LIMITS (src/server/sse.ts). */
  limits: { body_bytes: number; bundle_bytes: number; streams_per_principal?: number; stream_buffer_bytes?: number };
  /** `bundle/hook` entries clients may register per session. The runtime enforces its own list too. */
  sessionHookAllowlist: readonly string[];
}

export interface ServerOptions {
  runtime: Runtime;
  settings: LiveSettings;
  /** A pino logger; default silent. Never receives tokens (the Authorization header is redacted). */
  logger?: FastifyBaseLogger;
  /** Extra fields for GET /v1/status `server` (config source, reload state). */
  describe?: () => Record<string, unknown>;
  version?: string;
  /** Labels of `vcp_build_info` (e.g. `vcp-hooks version --json`); default the version and Node's. */
  buildInfo?: Readonly<Record<string, string | boolean | null>>;
  /** More Prometheus text for GET /metrics (the audit sink's metrics), read at scrape time. */
  extraMetrics?: ReadonlyArray<() => Promise<string>>;
  /** The operator console under /console (src/server/console-routes.ts). */
  console?: ConsoleOptions;
  /** The approval stream's per-client buffer and heartbeat (tests lower them). */
  approvalStream?: Partial<ApprovalStreamSettings>;
}

export interface VcpServer {
  readonly app: FastifyInstance;
  /** Listen and return the base URL (port 0 picks an ephemeral port). */
  listen(host: string, port: number): Promise<string>;
  /** Replace the live settings (config reload). */
  update(settings: LiveSettings): void;
  /** Stop accepting, answer new requests on kept-alive connections 503 SHUTTING_DOWN, wait for in-flight ones. */
  close(): Promise<void>;
}

/** prom-client's default metrics that are gauges with a counter's `_total` name (removed: see createServer). */
const PROM_CLIENT_GAUGES_NAMED_TOTAL = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"] as const;

/** Time for a client to send a whole request; not a limit on the handler. */
const REQUEST_TIMEOUT_MS = 30_000;
/** A Host header the OpenAPI document may name as its server: a hostname or IP literal, optional port. */
const HOST = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;
/** Accepted X-Request-Id values: printable, no spaces, bounded. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Refusals an operator wants in the log at info (auth, size, rate); other 4xx stay at debug. */
const REFUSALS_LOGGED_AT_INFO = new Set([401, 403, 413, 429]);

/** Hard ceiling for any body, above which no live limit can go (the config schema's max). */
const BODY_CEILING = 64 * 1024 * 1024;
/**
 * Levels a client body adds around the fields the runtime bounds by `limits.json_depth`: the body
 * object, and the array of `conflict.constitutions`.
 */
const BODY_ENVELOPE_DEPTH = 2;
/** A bundle upload may exceed bundle_bytes (the code cap) by this much for the manifest, digest and signatures. */
const BUNDLE_ENVELOPE_BYTES = 64 * 1024;

interface RouteConfig {
  /** Roles allowed; `null` means no authentication (healthz, openapi). */
  roles: readonly Role[] | null;
  /** Which live limit applies to the body: `bundle` for uploads, `body` (the default) on every other route. */
  limit?: "body" | "bundle";
  /** The code of a schema failure on this route (default INVALID_REQUEST). */
  invalid?: "INVALID_BUNDLE";
}

declare module "fastify" {
  interface FastifyRequest {
    principal: AuthPrincipal | null;
    /** The matched route's config and URL pattern, read once per request (see routeOf). */
    vcpRoute: MatchedRoute | null;
  }
}

interface MatchedRoute {
  config: Partial<RouteConfig>;
  /** The route's URL pattern; undefined when no route matched. */
  url: string | undefined;
}

/**
 * The matched route of a request. fastify's `request.routeOptions` builds a new object of a dozen
 * fields on every read (≈ 0.4 µs); the hooks of one request read it four times, so it is read once.
 */
function routeOf(request: FastifyRequest): MatchedRoute {
  if (request.vcpRoute === null) {
    const options = request.routeOptions;
    request.vcpRoute = { config: options.config as Partial<RouteConfig>, url: options.url };
  }
  return request.vcpRoute;
}

export async function createServer(options: ServerOptions): Promise<VcpServer> {
  const { runtime } = options;
  let live = compileSettings(options.settings);
  let closing = false;

  const app = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    // Per-request log lines cost more than a chain on the hot path; errors are logged by the handler.
    // Every line logged for a request carries its id under ONE key, `request_id` (the name of the
    // X-Request-Id header and of an INTERNAL error's details): never add it to a log call by hand.
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: "request_id" }),
    bodyLimit: BODY_CEILING,
    // X-Request-Id: the caller's, when well-formed (it ties our log lines to theirs), else a new UUID;
    // echoed on every response (onSend below). A malformed one is never trusted into the logs.
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
    },
    // Session ids may be 256 characters (pipeline rule); fastify's default cap is 100.
    routerOptions: { maxParamLength: 300 },
    // A request (headers and body) must arrive within this time: fastify's default (0) would let a
    // slow client hold a connection forever. Chains are bounded by their own timeouts.
    requestTimeout: REQUEST_TIMEOUT_MS,
    return503OnClosing: false,
    forceCloseConnections: "idle",
    onProtoPoisoning: "error",
    onConstructorPoisoning: "error",
    ajv: { customOptions: { allErrors: false, removeAdditional: false, coerceTypes: "array", useDefaults: true } },
  });
  app.decorateRequest("principal", null);
  app.decorateRequest("vcpRoute", null);
  // JSON only: a text/plain body is 415, not a string that fails a schema later.
  app.removeContentTypeParser("text/plain");
  // fastify's prototype-safe JSON parser, with its refusal explained (it drops the reason): the upload
  // media type of DESIGN §3.2 is JSON too, read the same way.
  const jsonParser = explainedJsonParser(app.getDefaultJsonParser("error", "error"));
  app.removeContentTypeParser("application/json");
  app.addContentTypeParser("application/json", { parseAs: "string" }, jsonParser);
  app.addContentTypeParser("application/vnd.vcp.bundle+json", { parseAs: "string" }, jsonParser);

  // ── metrics of the adapter itself; the runtime's own metrics are appended at scrape time ──────
  const metricsRegistry = new Registry();
  // The stock process_* and nodejs_* families, under their stock names (the dashboards and alerts
  // written for every Node service find them). prom-client also exports three of them as gauges named
  // `…_total`, which Prometheus reserves for counters (promtool refuses them); the per-type gauges
  // nodejs_active_handles{type} / _requests{type} / _resources{type} hold the same numbers: sum them.
  collectDefaultMetrics({ register: metricsRegistry });
  for (const gaugeNamedTotal of PROM_CLIENT_GAUGES_NAMED_TOTAL) metricsRegistry.removeSingleMetric(gaugeNamedTotal);
  const httpRequests = new Counter({ name: "vcp_http_requests_total", help: "HTTP requests by route and status.", labelNames: ["method", "route", "status"], registers: [metricsRegistry] });
  const httpSeconds = new Histogram({
    name: "vcp_http_request_duration_seconds",
    help: "HTTP request latency by route, as seen by the server.",
    labelNames: ["route"],
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
    registers: [metricsRegistry],
  });
  // Every 429 by its code: RATE_LIMITED (registrations per principal, spec §8.2.5), SESSION_LIMIT.
  const rateLimitRefusals = new Counter({ name: "vcp_rate_limit_refusals_total", help: "Requests refused with 429, by error code (RATE_LIMITED, SESSION_LIMIT).", labelNames: ["reason"], registers: [metricsRegistry] });
  new Gauge({
    name: "vcp_build_info",
    help: "The running build (value 1): package version, commit, Node, V8 and isolated-vm versions.",
    labelNames: ["version", "commit", "node", "v8", "isolated_vm"],
    registers: [metricsRegistry],
  }).set(buildInfoLabels(options), 1);

  for (const schema of [ERROR_SCHEMA, ...ERROR_SCHEMAS_BY_STATUS, ...SharedSchemas]) app.addSchema(schema);

  // Every registered method of every path, so a known path with the wrong method is 405 with Allow
  // (RFC 9110 §15.5.6), not 404. Filled as routes register (route files included), read on a miss.
  const methodsByPattern = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  app.addHook("onRoute", (route) => {
    let entry = methodsByPattern.get(route.url);
    if (entry === undefined) methodsByPattern.set(route.url, (entry = { pattern: routePattern(route.url), methods: new Set() }));
    for (const method of [route.method].flat()) entry.methods.add(method);
  });
  const allowedMethods = (url: string): string[] => {
    const path = url.split("?")[0] ?? "";
    const methods = new Set<string>();
    for (const { pattern, methods: ms } of methodsByPattern.values()) if (pattern.test(path)) for (const m of ms) methods.add(m);
    return [...methods].sort();
  };

  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: { title: "vcp-hooks", version: options.version ?? "0.1.0", license: { name: "Apache-2.0", identifier: "Apache-2.0" }, description: "HTTP API of the vcp-hooks policy runtime (DESIGN §6.2). Errors are { error: { code, message, details } }." },
      tags: OPENAPI_TAGS.map((t) => ({ ...t })),
      components: {
        securitySchemes: {
          operator: { type: "http", scheme: "bearer", description: "operator token: bundles, audit, status, metrics" },
          client: { type: "http", scheme: "bearer", description: "client token: sessions and events" },
          approver: { type: "http", scheme: "bearer", description: "approver token: sees and decides approvals" },
          metrics: { type: "http", scheme: "bearer", description: "metrics token: GET /metrics and nothing else (for a Prometheus scraper)" },
          bearer: { type: "http", scheme: "bearer", description: "operator or client (approvals: operator, client or approver)" },
        },
      },
    },
    transform: ({ schema, url }) => ({ schema: documentRouteSchema(schema as Record<string, unknown> | undefined) as never, url }),
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (typeof json.$id === "string" ? json.$id : `def-${i}`) },
  });

  // Hooks use the callback form: on the hot path an async hook costs a promise per request.
  // SECURITY: every request passes here before fastify reads a byte of its body (onRequest runs
  // before preParsing and the content-type parsers), known route or not, authenticated or not. An
  // unknown route, a bad token and an oversized Content-Length are answered from the headers alone.
  app.addHook("onRequest", (request, reply, done) => {
    if (closing) return done(new VcpError("SHUTTING_DOWN", "the server is shutting down"));
    if (request.is404) {
      const allow = allowedMethods(request.url);
      if (allow.length === 0) return done(noRoute(request.method, request.url));
      void reply.header("allow", allow.join(", "));
      return done(new VcpError("METHOD_NOT_ALLOWED", `${request.method} is not allowed on ${request.url.split("?")[0]}: use ${allow.join(", ")}`, { allow }));
    }
    const route = routeOf(request);
    const config = route.config;
    try {
      const roles = config.roles;
      if (roles !== undefined && roles !== null) {
        const principal = live.authenticator.authenticate(request.headers.authorization);
        // Set before the role check so a 403 is logged with who was refused; the request ends there.
        request.principal = principal;
        requireRole(principal, roles, `${request.method} ${route.url ?? request.url}`);
      }
      const kind = config.limit ?? "body";
      const limit = limitOf(kind);
      const length = request.headers["content-length"];
      // Number("abc") is NaN: fastify refuses a malformed Content-Length before reading the body.
      if (length !== undefined && Number(length) > limit) return done(tooLarge(kind, limit));
    } catch (err) {
      return done(err as Error);
    }
    done();
  });

  // Bodies without Content-Length (chunked): count bytes as they arrive and stop at the live limit.
  // GET/HEAD bodies are never read by fastify; onSend below closes such connections instead.
  app.addHook("preParsing", (request, _reply, payload, done) => {
    if (request.headers["content-length"] !== undefined) return done(null, payload); // checked in onRequest; fastify checks the actual length matches
    const config = routeOf(request).config;
    const kind = config.limit ?? "body";
    const limit = limitOf(kind);
    let seen = 0;
    const counter = new Transform({
      transform(chunk: Buffer, _encoding, callback: TransformCallback) {
        seen += chunk.length;
        if (seen > limit) callback(tooLarge(kind, limit));
        else callback(null, chunk);
      },
    });
    payload.on("error", (err) => counter.destroy(err));
    done(null, payload.pipe(counter));
  });

  // SECURITY: the runtime's depth rule (model/json-bounds.ts), applied to the whole parsed body before
  // schema validation or any handler walks it; each field is then bounded exactly by the runtime.
  // Parsing itself is not recursive in V8, and the body size was capped before it.
  const bodyDepthLimit = runtime.limits.json_depth + BODY_ENVELOPE_DEPTH;
  app.addHook("preValidation", (request, _reply, done) => {
    const config = routeOf(request).config;
    if (config.limit !== "body" || request.body === undefined || request.body === null) return done();
    if (jsonValueDepth(request.body, bodyDepthLimit) > bodyDepthLimit) {
      return done(
        new VcpError("INVALID_INPUT", `body: nests arrays/objects deeper than ${bodyDepthLimit} levels (limits.json_depth + ${BODY_ENVELOPE_DEPTH} for the request envelope)`, {
          field: "body",
          rule: "max_depth",
          limit: bodyDepthLimit,
        }),
      );
    }
    done();
  });

  // While draining, every response closes its connection: a kept-alive socket that turns idle after
  // close() began would otherwise hold the server open until its keep-alive timeout.
  // SECURITY: so does a response sent before the request body was read (401, 404, 413 from the
  // headers, a GET with a body): on a kept-alive connection Node would read the rest of the body to
  // find the next request, so a refused 60 MB upload would still be received in full.
  app.addHook("onSend", (request, reply, payload, done) => {
    void reply.header("x-request-id", request.id);
    if (closing || !request.raw.complete) void reply.header("connection", "close");
    done(null, payload);
  });

  app.addHook("onResponse", (request, reply, done) => {
    const route = routeOf(request).url ?? "unmatched";
    httpRequests.inc({ method: request.method, route, status: reply.statusCode });
    httpSeconds.observe({ route }, reply.elapsedTime / 1000);
    done();
  });

  app.setErrorHandler((err: unknown, request, reply) => {
    const { status, body, internal } = describeError(err, routeOf(request).config.invalid);
    if (internal) request.log.error({ err }, "request failed");
    else if (REFUSALS_LOGGED_AT_INFO.has(status)) {
      // Who was refused and why, without the body or the token: enough to answer "why did my call fail?".
      const params = request.params as { id?: string } | undefined;
      request.log.info({ code: body.error.code, status, method: request.method, route: routeOf(request).url ?? request.url.split("?")[0], principal: request.principal?.id, session_id: params?.id }, "request refused");
    } else request.log.debug({ code: body.error.code }, "request refused");
    if (status === 429) rateLimitRefusals.inc({ reason: body.error.code });
    if (status === 500 && body.error.code === "INTERNAL") body.error.details = { request_id: request.id };
    if (status === 401) void reply.header("www-authenticate", 'Bearer realm="vcp-hooks"');
    // Retry-After (seconds) wherever waiting helps: the rate limit says how long; an overloaded or
    // restarting sandbox clears within a second or so. A session cap only clears when a session closes.
    const retryAfterMs = (body.error.details as { retry_after_ms?: unknown } | undefined)?.retry_after_ms;
    if (typeof retryAfterMs === "number" && Number.isFinite(retryAfterMs)) void reply.header("retry-after", String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
    else if (status === 503) void reply.header("retry-after", "1");
    return reply.code(status).send(body);
  });

  // Unreachable while onRequest answers unknown routes itself; kept so a 404 never depends on hook order.
  app.setNotFoundHandler((request) => {
    throw noRoute(request.method, request.url);
  });

  const cfg = (roles: readonly Role[] | null, extra: Omit<RouteConfig, "roles"> = {}): RouteConfig => ({ roles, ...extra });
  const OPERATOR = ["operator"] as const;
  const CLIENT = ["client"] as const;
  const BOTH = ["operator", "client"] as const;
  // SECURITY: the metrics role is named on GET /metrics alone; every other route lists operator and/or
  // client, so a scraper's token (often kept in a monitoring namespace) reads metrics and nothing else.
  const SCRAPERS = ["operator", "metrics"] as const;

  /** The authenticated caller, as the runtime's `{ principal }` option: the owner of what it opens. */
  const principalOf = (request: FastifyRequest) => {
    const { id, role, approves } = request.principal!;
    // SECURITY: a metrics principal never reaches the runtime (every route but GET /metrics refuses it first).
    if (role === "metrics") throw new VcpError("FORBIDDEN", "a metrics token may only read GET /metrics", { role, required: BOTH });
    return { principal: { id, role, ...(approves !== undefined ? { approves } : {}) } };
  };

  /**
   * The caller and whose session id it means: session ids are per owner (src/pipeline/access.ts). An
   * operator names a client's session with `?owner=<principal id>` (needed only when two owners use
   * the id: SESSION_AMBIGUOUS otherwise); a client always addresses its own, so its `owner` is dropped.
   */
  function accessOf(request: FastifyRequest) {
    const { owner } = (request.query ?? {}) as { owner?: string };
    // SECURITY: only an operator may pick another owner's namespace.
    return { ...principalOf(request), ...(owner !== undefined && request.principal!.role === "operator" ? { owner } : {}) };
  }

  /**
   * The session as the caller may see it, or SESSION_NOT_FOUND: another client's session gets the
   * same answer as one that does not exist (the runtime decides, src/pipeline/access.ts).
   */
  async function sessionOf(id: string, request: FastifyRequest): Promise<SessionView> {
    const view = await runtime.sessions.get(id, accessOf(request));
    if (view === undefined) throw new VcpError("SESSION_NOT_FOUND", `session '${id}' is not open`, { session_id: id });
    return view;
  }

  /**
   * The event's schema depends on the path's `{type}`, which the route's body schema cannot see: check
   * it here with the runtime's own validator, before `fire`, which checks nothing for an empty chain
   * (README: "Empty chains return immediately"). A bad event is then refused whether or not a hook is
   * installed for the type, like every other body field.
   */
  function checkChainEvent(type: HookType, event: unknown): void {
    try {
      assertEvent(type, event, "body.event");
    } catch (err) {
      if (!(err instanceof VcpError)) throw err;
      // The same code and details as a route-schema failure: it is one.
      throw new VcpError("INVALID_REQUEST", err.message, err.details);
    }
  }

  // ── ops ────────────────────────────────────────────────────────────────────────────────────────
  app.get("/healthz", { schema: routes.healthz, config: cfg(null) }, async () => ({ status: closing ? "draining" : "ok" }));
  // Readiness (a load balancer's question): not while draining, nor while the sandbox host restarts
  // or reloads its bundles — chains would wait — nor while Redis has not answered this replica for
  // store.unreachable_after_ms (every session call would be 503 here, not on its peers), nor while
  // this replica refuses the active shared revision of a bundle: it would serve without a guard its
  // peers apply. Liveness stays /healthz.
  app.get("/readyz", { schema: routes.readyz, config: cfg(null) }, async (_request, reply) => {
    if (closing) return reply.code(503).send({ status: "draining" });
    const status = runtime.status();
    if (status.sandbox.ready === false) return reply.code(503).send({ status: "sandbox_starting" });
    const connection = status.store.kind === "redis" ? status.store.connection : undefined;
    if (connection !== undefined && connection.unreachable_after_ms > 0 && connection.unreachable_ms >= connection.unreachable_after_ms) {
      return reply.code(503).send({ status: "store_unreachable", reason: `the shared store (Redis) has not answered this replica for ${connection.unreachable_ms} ms (store.unreachable_after_ms ${connection.unreachable_after_ms}); session calls would answer 503 STORE_UNAVAILABLE` });
    }
    const bundles = status.store.kind === "redis" ? status.store.bundles : undefined;
    if (bundles !== undefined && !bundles.ready) return reply.code(503).send({ status: "revision_refused", reason: bundles.not_ready_reason ?? "" });
    return reply.code(200).send({ status: "ready" });
  });
  // `servers`: this server as the caller reached it, so a client generated from the document targets
  // it; a Host header that is not a plain host[:port] gets the relative "/" instead of being echoed.
  app.get("/openapi.json", { schema: { hide: true }, config: cfg(null) }, async (request) => {
    const host = request.headers.host;
    const url = typeof host === "string" && HOST.test(host) ? `${request.protocol}://${host}` : "/";
    return { ...app.swagger(), servers: [{ url, description: "this vcp-hooks server" }] };
  });
  app.get("/metrics", { schema: routes.metrics, config: cfg(SCRAPERS) }, async (_request, reply) => {
    const parts = await Promise.all([runtime.metrics(), ...(options.extraMetrics ?? []).map((text) => text()), metricsRegistry.metrics()]);
    void reply.header("content-type", metricsRegistry.contentType);
    return `${parts.map((p) => p.trimEnd()).filter((p) => p.length > 0).join("\n")}\n`;
  });
  app.get("/v1/status", { schema: routes.status, config: cfg(OPERATOR) }, async () => ({
    ...runtime.status(),
    server: { version: options.version ?? "0.1.0", uptime_s: Math.round(process.uptime()), closing, ...(options.describe?.() ?? {}) },
  }));

  // ── bundles (operator) ─────────────────────────────────────────────────────────────────────────
  app.put("/v1/bundles/:name", { schema: routes.installBundle, config: cfg(OPERATOR, { limit: "bundle", invalid: "INVALID_BUNDLE" }) }, async (request, reply) => {
    const { name } = request.params as { name: string };
    const artifact = request.body as VcpArtifact;
    if (artifact.manifest.bundle !== name) {
      throw new VcpError("INVALID_BUNDLE", `the path names bundle '${name}' but the manifest is bundle '${artifact.manifest.bundle}'`, { field: "manifest.bundle", path: name, manifest: artifact.manifest.bundle });
    }
    // The digest already active under this name: installing is a no-op (the runtime returns its info);
    // 200 with `unchanged: true` tells a deploy script nothing changed, 201 that a new revision is live.
    const unchanged = runtime.bundles.get(name)?.digest === (request.body as { digest: string }).digest;
    const info = await runtime.bundles.install(artifact, principalOf(request));
    // With a shared store: which replicas took it and which refused it (their keyring, …), within store.upload_wait_ms.
    const replicas = await runtime.bundles.replicas(info.bundle, info.digest);
    const verdicts = replicas === null ? {} : { replicas };
    if (replicas !== null && replicas.refused.length > 0) {
      request.log.warn({ bundle: info.bundle, digest: info.digest, refused: replicas.refused }, "bundle upload: replicas refused the revision (they are not ready)");
    }
    if (unchanged && info.digest === (request.body as { digest: string }).digest) return reply.code(200).send({ ...info, unchanged: true, ...verdicts });
    request.log.info({ bundle: info.bundle, version: info.version, digest: info.digest, by: request.principal!.id }, "bundle installed over HTTP");
    return reply.code(201).send({ ...info, unchanged: false, ...verdicts });
  });
  app.get("/v1/bundles", { schema: routes.listBundles, config: cfg(OPERATOR) }, async () => ({ bundles: runtime.bundles.list() }));
  app.get("/v1/bundles/:name", { schema: routes.getBundle, config: cfg(OPERATOR) }, async (request) => {
    const { name } = request.params as { name: string };
    const info = runtime.bundles.get(name);
    if (info === undefined) throw new VcpError("UNKNOWN_BUNDLE", `bundle '${name}' is not installed`, { bundle: name });
    return info;
  });
  app.delete("/v1/bundles/:name", { schema: routes.removeBundle, config: cfg(OPERATOR) }, async (request) => {
    const { name } = request.params as { name: string };
    const info = await runtime.bundles.remove(name, principalOf(request));
    request.log.info({ bundle: name, by: request.principal!.id }, "bundle removed over HTTP");
    return info;
  });

  // Revisions kept in the data directory: list, read one's manifest, roll back to one.
  app.get("/v1/bundles/:name/revisions", { schema: routes.listBundleRevisions, config: cfg(OPERATOR) }, async (request) => {
    const { name } = request.params as { name: string };
    return { bundle: name, revisions: await runtime.bundles.revisions(name) };
  });
  app.get("/v1/bundles/:name/revisions/:digest", { schema: routes.getBundleRevision, config: cfg(OPERATOR) }, async (request) => {
    const { name, digest } = request.params as { name: string; digest: string };
    return runtime.bundles.revision(name, digest);
  });
  app.post("/v1/bundles/:name/rollback", { schema: routes.rollbackBundle, config: cfg(OPERATOR, { limit: "body" }) }, async (request, reply) => {
    const { name } = request.params as { name: string };
    const { digest } = request.body as { digest: string };
    const unchanged = runtime.bundles.get(name)?.digest === digest;
    const info = await runtime.bundles.rollback(name, digest, principalOf(request));
    request.log.info({ bundle: name, digest, by: request.principal!.id }, "bundle rolled back over HTTP");
    return reply.code(unchanged ? 200 : 201).send(info);
  });

  app.get("/v1/hooks", { schema: routes.hooks, config: cfg(BOTH) }, async (request) => {
    const { type, session, profile, event, bundle } = request.query as { type?: HookType; session?: string; profile?: string; event?: string; bundle?: string };
    // With a session the runtime checks it (fire/hooks-api.ts: another client's, or none, is
    // SESSION_NOT_FOUND) in the same read that finds it: no lookup here first.
    return { hooks: await runtime.hooks.list({ type, session, profile, event, bundle }, accessOf(request)) };
  });

  for (const [op, enabled] of [["enableHook", true], ["disableHook", false]] as const) {
    app.post(`/v1/hooks/:name/${enabled ? "enable" : "disable"}`, { schema: routes[op], config: cfg(BOTH) }, async (request) => {
      const { name } = request.params as { name: string };
      const { session, scope } = request.query as { session?: string; scope?: Scope };
      // The runtime checks the session (another client's is SESSION_NOT_FOUND) and who may switch what.
      return runtime.hooks.setEnabled(name, enabled, { ...accessOf(request), ...(session !== undefined ? { sessionId: session } : {}), ...(scope !== undefined ? { scope } : {}) });
    });
  }

  // Every server-sent-events route counts against one per-principal cap (src/server/sse.ts).
  const streams = createEventStreams(() => live.streams);
  const streamBufferBytes = () => live.streams.bufferBytes;
  registerProfileRoutes(app, runtime, { cfg, principalOf });
  registerApprovalRoutes(app, runtime, { cfg, principalOf, streams, streamBufferBytes }, options.approvalStream);

  // ── sessions and events (clients own the sessions they open; operators see and act on all) ──────
  app.post("/v1/sessions", { schema: routes.openSession, config: cfg(CLIENT, { limit: "body" }) }, async (request, reply) => {
    const view = await runtime.sessions.open(request.body as OpenSessionInput, principalOf(request));
    return reply.code(201).send(view);
  });
  app.get("/v1/sessions/:id", { schema: routes.getSession, config: cfg(BOTH) }, async (request) => {
    return sessionOf((request.params as { id: string }).id, request);
  });
  app.delete("/v1/sessions/:id", { schema: routes.closeSession, config: cfg(BOTH) }, async (request, reply) => {
    const { id } = request.params as { id: string };
    await sessionOf(id, request);
    await runtime.sessions.close(id, accessOf(request));
    return reply.code(204).send();
  });
  app.post("/v1/sessions/:id/hooks", { schema: routes.registerSessionHook, config: cfg(BOTH, { limit: "body" }) }, async (request, reply) => {
    const { id } = request.params as { id: string };
    const ref = request.body as { bundle: string; hook: string };
    await sessionOf(id, request);
    const key = `${ref.bundle}/${ref.hook}`;
    // The server's live allowlist can narrow the runtime's start-time list without a restart.
    if (!live.allowlist.has(key)) {
      throw new VcpError("SESSION_HOOK_NOT_ALLOWED", `'${key}' is not on the deployment's session_hook_allowlist (spec §8.2.1)`, { hook: key });
    }
    // The rate limit (spec §8.2.5) applies to the authenticated principal, the token, across all
    // of its sessions: per-session principals would let one client multiply its budget.
    const hook = await runtime.sessions.registerHook(id, ref, accessOf(request));
    return reply.code(201).send(hook);
  });
  app.post("/v1/sessions/:id/chains/:type", { schema: routes.fireChain, config: cfg(BOTH, { limit: "body" }) }, async (request) => {
    const { id, type } = request.params as { id: string; type: HookType };
    const body = request.body as { context?: VcpContext; constitution?: Constitution; event: HookEvent };
    const view = await sessionOf(id, request);
    checkChainEvent(type, body.event);
    // Omitted fields default to the session's own (the body schema allows leaving them out).
    const context = body.context ?? view.context;
    const constitution = body.constitution ?? view.constitution;
    return runtime.fire(type, { session: id, context, constitution, event: body.event as never, ...accessOf(request) });
  });
  for (const op of ["adapt", "transition", "conflict", "violation"] as const) {
    app.post(`/v1/sessions/:id/${op}`, { schema: routes[op], config: cfg(BOTH, { limit: "body" }) }, async (request) => {
      const { id } = request.params as { id: string };
      await sessionOf(id, request);
      // The route's body schema is the model's schema of this operation's input (schemas.ts).
      return (runtime[op] as (id: string, input: unknown, access: SessionAccess) => Promise<unknown>).call(runtime, id, request.body ?? {}, accessOf(request));
    });
  }

  // ── audit (operator) ───────────────────────────────────────────────────────────────────────────
  app.get("/v1/audit", { schema: routes.audit, config: cfg(OPERATOR) }, async (request) => {
    const query = request.query as AuditQuery;
    return { records: await runtime.audit.query(query) };
  });
  app.get("/v1/audit/head", { schema: routes.auditHead, config: cfg(OPERATOR) }, async () => {
    return runtime.audit.head();
  });

  await registerConsoleRoutes(app, runtime, { streams, streamBufferBytes }, options.console);

  function limitOf(kind: "body" | "bundle"): number {
    return kind === "bundle" ? live.bundleLimit : live.bodyLimit;
  }

  await app.ready();

  return {
    app,
    async listen(host, port) {
      return app.listen({ host, port });
    },
    update(settings) {
      live = compileSettings(settings);
    },
    async close() {
      closing = true;
      const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
      try {
        await app.close();
      } finally {
        clearInterval(sweep);
      }
    },
  };
}

interface CompiledSettings {
  authenticator: Authenticator;
  bodyLimit: number;
  bundleLimit: number;
  allowlist: ReadonlySet<string>;
  streams: StreamLimits;
}

function compileSettings(settings: LiveSettings): CompiledSettings {
  return {
    authenticator: createAuthenticator(settings.auth),
    bodyLimit: Math.min(settings.limits.body_bytes, BODY_CEILING),
    bundleLimit: Math.min(settings.limits.bundle_bytes + BUNDLE_ENVELOPE_BYTES, BODY_CEILING),
    allowlist: new Set(settings.sessionHookAllowlist),
    streams: {
      streamsPerPrincipal: settings.limits.streams_per_principal ?? DEFAULT_STREAM_LIMITS.streamsPerPrincipal,
      bufferBytes: settings.limits.stream_buffer_bytes ?? DEFAULT_STREAM_LIMITS.bufferBytes,
    },
  };
}

function buildInfoLabels(options: ServerOptions): Record<string, string> {
  const given = options.buildInfo ?? {};
  const text = (v: unknown, fallback: string) => (typeof v === "string" ? v : fallback);
  return {
    version: text(given["version"], options.version ?? "0.1.0"),
    commit: text(given["commit"], "unknown"),
    node: text(given["node"], process.versions.node),
    v8: text(given["v8"], process.versions.v8),
    isolated_vm: text(given["isolated-vm"], "unknown"),
  };
}

/** `/v1/sessions/:id/chains/:type` → a RegExp matching concrete paths (a parameter is one segment). */
function routePattern(url: string): RegExp {
  const source = url
    .split("/")
    .map((segment) => (segment.startsWith(":") ? "[^/]+" : segment === "*" ? ".*" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}$`);
}

type JsonParser = (request: FastifyRequest, body: string, done: (err: Error | null, value?: unknown) => void) => void;

/**
 * fastify's JSON parser answers one error for a syntax error and for a refused `__proto__` /
 * `constructor.prototype` key alike, without the reason. On that (rare) path the body is read again
 * with JSON.parse — which keeps such keys as plain data and never recurses into a prototype — to say
 * which: MALFORMED_JSON with the syntax error, or naming the refused key.
 */
function explainedJsonParser(parse: JsonParser): JsonParser {
  return (request, body, done) => {
    parse(request, body, (err, value) => {
      if (err === null || (err as { code?: unknown }).code !== "FST_ERR_CTP_INVALID_JSON_BODY") return done(err, value);
      try {
        JSON.parse(body);
      } catch (syntax) {
        return done(new VcpError("MALFORMED_JSON", `request body is not valid JSON: ${(syntax as Error).message.slice(0, 200)}`));
      }
      done(new VcpError("MALFORMED_JSON", 'request body: a "__proto__" key, or a "constructor" key holding "prototype", is refused (it would reach an object\'s prototype)', { field: "body", rule: "forbidden_key" }));
    });
  };
}

function noRoute(method: string, url: string): VcpError {
  return new VcpError("NOT_FOUND", `no route ${method} ${url.split("?")[0]}`);
}

function tooLarge(kind: "body" | "bundle", limit: number): VcpError {
  return new VcpError("PAYLOAD_TOO_LARGE", `request body exceeds ${limit} bytes (${kind === "bundle" ? "limits.bundle_bytes plus 64 KiB for the manifest and signatures" : "limits.body_bytes"})`, { limit_bytes: limit });
}

export type { FastifyReply };
