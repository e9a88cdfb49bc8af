/**
 * Event-profile routes (PROFILES §2 "Interfaces", §8.1): `GET /v1/profiles` and
 * `POST /v1/profiles/{profile}/events/{event}`. The body is the agent's native input, size- and
 * depth-checked by the server's body limit like every other body before the runtime sees it; the
 * runtime bounds and validates it again before any work. `?answer=native` answers the native JSON
 * alone with the exit code in `X-VCP-Exit-Code`: the form a Claude Code http hook URL reads.
 *
 * Never silently open (issue 24): every answer carries the profile's guard (which events a fail-closed
 * hook guards, bound to the bundle revisions: the envelope's `guard`, or the `X-VCP-Guard-Revisions` /
 * `X-VCP-Fail-Closed-Events` headers), and any error of this route after authentication — in fastify
 * before the handler (413 from the headers or while reading, not JSON, `__proto__`, depth, schema) or in
 * the runtime (a bound, the sandbox, the audit log) — on a guarded event is answered 200 with the
 * profile's blocking answer (exit code 2, `refused`), since agents read a non-2xx as "go ahead":
 *
 *   error ─► route errorHandler ─► authenticated client? ─► runtime.profiles.refuse: guarded? ─► 200 block
 *                                        │ no                                   │ no
 *                                        └──────────────► the server's coded error (401 stays 401) ◄──┘
 */
import type { FastifyContextConfig, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { Role } from "./auth.js";
import { decodeHookEnv, HOOK_ENV_HEADER, redactString, VcpError, type Principal, type ProfileFireResult, type ProfileGuard, type Runtime } from "../index.js";
import { describeError } from "./errors.js";
import { routes } from "./schemas.js";

interface Helpers {
  cfg(roles: readonly Role[] | null, extra?: { limit?: "body" | "bundle" }): object;
  /** The runtime's principal of the request (never a metrics token: app.ts refuses it). */
  principalOf(request: FastifyRequest): { principal: Principal };
}

/** The exit-code header of `?answer=native` (PROFILES §8.1). */
export const EXIT_CODE_HEADER = "x-vcp-exit-code";
/** `?answer=native`: the envelope's `guard.revisions`. */
export const GUARD_REVISIONS_HEADER = "x-vcp-guard-revisions";
/** `?answer=native`: the envelope's `guard.fail_closed_events`, joined by ",". */
export const FAIL_CLOSED_EVENTS_HEADER = "x-vcp-fail-closed-events";
/**
 * `?answer=native`: the envelope's `stderr` (the text a command hook would print there, e.g. a block's
 * reason), as the Node adapter prints it — secret shapes redacted, control characters but newlines
 * spelled out, at most 4096 characters — then percent-encoded (RFC 3986). The sh adapter prints it.
 */
export const STDERR_HEADER = "x-vcp-stderr";
const STDERR_HEADER_CHARS = 4096;

/** Refusals that say the caller was not let in: answered as they are, never with a profile's answer. */
const NOT_LET_IN = new Set(["UNAUTHENTICATED", "FORBIDDEN"]);

// A guard keeps its identity until the bundles change: its header is joined once per guard.
const eventsHeaders = new WeakMap<ProfileGuard, string>();
function eventsHeaderOf(guard: ProfileGuard): string {
  let header = eventsHeaders.get(guard);
  if (header === undefined) eventsHeaders.set(guard, (header = guard.fail_closed_events.join(",")));
  return header;
}

/** The answer in the form the caller asked for: the envelope, or (`?answer=native`) the native JSON and the X-VCP-* headers. */
function sendAnswer(reply: FastifyReply, out: ProfileFireResult, native: boolean): FastifyReply | ProfileFireResult {
  if (!native) return out;
  void reply.header(EXIT_CODE_HEADER, String(out.exit_code));
  void reply.header(GUARD_REVISIONS_HEADER, out.guard.revisions);
  void reply.header(FAIL_CLOSED_EVENTS_HEADER, eventsHeaderOf(out.guard));
  if (typeof out.stderr === "string" && out.stderr !== "") void reply.header(STDERR_HEADER, stderrHeaderOf(out.stderr));
  return reply.code(200).send(out.native);
}

/** The `x-vcp-stderr` value of an answer's stderr (see STDERR_HEADER). */
function stderrHeaderOf(stderr: string): string {
  // SECURITY: a reason may echo a token; the header goes to the agent's log as the adapter's stderr does.
  const safe = redactString(stderr.replace(/\n+$/, "")).replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => (c === "\r" ? "\\r" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`));
  const capped = safe.length > STDERR_HEADER_CHARS ? `${safe.slice(0, STDERR_HEADER_CHARS).toWellFormed()}…` : safe;
  return encodeURIComponent(capped);
}

/**
 * The agent's hook environment the adapter sent (`x-vcp-hook-env`, src/tooling/hook-env.ts), bounds and
 * encoding checked; the runtime checks the names against the profile. A bad header is INVALID_REQUEST,
 * which the route's error handler turns into the block on a guarded event, like any refusal.
 */
function hookEnvOf(request: FastifyRequest): Record<string, string> | undefined {
  const header = request.headers[HOOK_ENV_HEADER];
  if (header === undefined) return undefined;
  // Node joins a repeated header with ", ", which no encoded value holds: refused below as not encoded.
  const decoded = decodeHookEnv(Array.isArray(header) ? header.join(", ") : header);
  if (decoded.problem !== undefined) throw new VcpError("INVALID_REQUEST", `${HOOK_ENV_HEADER}: ${decoded.problem}`, { field: `headers.${HOOK_ENV_HEADER}` });
  return decoded.env;
}

/**
 * @example
 * ```ts
 * registerProfileRoutes(app, runtime, { cfg, principalOf });
 * ```
 */
export function registerProfileRoutes(app: FastifyInstance, runtime: Runtime, { cfg, principalOf }: Helpers): void {
  // Requests waiting for an approval (?wait_approval=1): a closing server stops their wait (they
  // answer the pending ask) instead of holding shutdown until the approvals time out.
  const waiting = new Set<AbortController>();
  app.addHook("preClose", (done) => {
    for (const controller of waiting) controller.abort();
    done();
  });

  app.get("/v1/profiles", { schema: routes.listProfiles, config: cfg(["operator", "client"]) as FastifyContextConfig }, async () => ({ profiles: runtime.profiles.list() }));

  /**
   * The route's error handler (fastify runs it for errors of the route's hooks, body parsing, schema
   * validation and handler alike): a guarded event's refusal becomes the profile's blocking answer;
   * anything else is rethrown to the server's error handler, which answers the coded error.
   */
  async function failClosed(err: unknown, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    // SECURITY: only an authenticated client is answered for a guarded event; 401/403 stay as they are.
    const principal = request.principal;
    if (principal === null || principal.role !== "client") throw err;
    const { body } = describeError(err);
    const { code, message } = body.error;
    if (NOT_LET_IN.has(code)) throw err;
    const { profile, event } = (request.params ?? {}) as { profile?: unknown; event?: unknown };
    if (typeof profile !== "string" || typeof event !== "string") throw err;
    let refused: ProfileFireResult | undefined;
    try {
      refused = await runtime.profiles.refuse(profile, event, { code, message }, principalOf(request));
    } catch (refuseErr) {
      request.log.error({ err: refuseErr }, "could not answer a refused profile event with its fail-closed block");
    }
    if (refused === undefined) throw err;
    request.log.info({ code, principal: principal.id, profile, event, chain_id: refused.result.chain_id }, "request refused: answered with the profile's fail-closed block");
    // Read without the route's schema: the refusal may be that very query's.
    const native = (request.query as { answer?: unknown } | undefined)?.answer === "native";
    void reply.code(200);
    return sendAnswer(reply, refused, native);
  }

  app.post("/v1/profiles/:profile/events/:event", { schema: routes.fireProfileEvent, config: cfg(["client"], { limit: "body" }) as FastifyContextConfig, errorHandler: failClosed }, async (request, reply) => {
    const { profile, event } = request.params as { profile: string; event: string };
    const { answer, wait_approval } = request.query as { answer?: "envelope" | "native"; wait_approval?: 0 | 1 };
    // The session is the input's own `session_id`, owned by this caller (PROFILES §8.3). An Amplifier
    // ask_user answer carries its pending approval; `wait_approval=1` answers the decision (§8.9).
    let controller: AbortController | undefined;
    if (wait_approval === 1) {
      controller = new AbortController();
      waiting.add(controller);
      // The response's close before it was sent: the client went away; nobody waits for its approval.
      reply.raw.once("close", () => controller!.abort());
    }
    const env = hookEnvOf(request);
    let out: Awaited<ReturnType<Runtime["fireProfile"]>>;
    try {
      out = await runtime.fireProfile(profile, event, { input: request.body, ...principalOf(request), ...(env !== undefined ? { env } : {}), ...(controller !== undefined ? { waitApproval: true, signal: controller.signal } : {}) });
    } finally {
      if (controller !== undefined) waiting.delete(controller);
    }
    return sendAnswer(reply, out, answer === "native");
  });
}
