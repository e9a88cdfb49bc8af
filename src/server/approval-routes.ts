/**
 * Approval routes (PROFILES §3.4 "Coordinator", §8.9): `GET /v1/approvals`, `GET /v1/approvals/{id}`,
 * `POST /v1/approvals/{id}` and the server-sent events of `GET /v1/approvals/stream`.
 *
 * ```
 *  runtime.approvals "approval" ─▶ per stream: may it read the approval? (owner, its approver, operator) ─▶ session filter
 *                               ─▶ fits limits.stream_buffer_bytes unsent? send : `event: end` (slow_consumer), stream closed
 *  on connect: `hello`, then every pending approval it may see as `new`; idle: a `:` heartbeat comment
 * ```
 * A client that falls behind is disconnected rather than silently missing a decision: on reconnect it
 * gets the pending approvals again. Who may see and decide is the runtime's rule
 * (src/pipeline/access.ts): another client's approval is 404 here and never appears on its stream;
 * deciding needs an operator or an approver token (the client whose agent asked never decides).
 */
import { slowConsumerEvent, type EventStreams } from "./sse.js";
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from "fastify";
import type { Role } from "./auth.js";
import { mayReadApproval, type Principal, type Runtime } from "../index.js";
import { routes } from "./schemas.js";

interface Helpers {
  cfg(roles: readonly Role[] | null, extra?: { limit?: "body" | "bundle" }): object;
  principalOf(request: FastifyRequest): { principal: Principal };
  /** The server's event-stream registry (per-principal cap, unsent-bytes bound). */
  streams: EventStreams;
  /** limits.stream_buffer_bytes now (for the `hello` and `end` events). */
  streamBufferBytes(): number;
}

export interface ApprovalStreamSettings {
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs: number;
}

export const DEFAULT_APPROVAL_STREAM: ApprovalStreamSettings = { heartbeatMs: 15_000 };

/** Reading: the session's owner, an approver for it, operators. Deciding: an approver for it, operators. */
const READERS = ["operator", "approver", "client"] as const;
const DECIDERS = ["operator", "approver"] as const;

/**
 * @example
 * ```ts
 * registerApprovalRoutes(app, runtime, { cfg, principalOf, streams, streamBufferBytes });
 * ```
 */
export function registerApprovalRoutes(app: FastifyInstance, runtime: Runtime, { cfg, principalOf, streams, streamBufferBytes }: Helpers, stream: Partial<ApprovalStreamSettings> = {}): void {
  const settings: ApprovalStreamSettings = { ...DEFAULT_APPROVAL_STREAM, ...stream };
  const config = cfg(READERS) as FastifyContextConfig;

  app.get("/v1/approvals", { schema: routes.listApprovals, config }, async (request) => {
    const query = request.query as { session?: string; state?: "pending" | "granted" | "denied" | "expired" };
    return { approvals: await runtime.approvals.list({ ...query, ...principalOf(request) }) };
  });

  app.get("/v1/approvals/:id", { schema: routes.getApproval, config }, async (request) => {
    const { id } = request.params as { id: string };
    const { full } = request.query as { full?: 0 | 1 };
    return runtime.approvals.get(id, { ...principalOf(request), full: full === 1 });
  });

  // SECURITY: a client token never decides (FORBIDDEN before the approval is looked up): its agent asked.
  app.post("/v1/approvals/:id", { schema: routes.decideApproval, config: cfg(DECIDERS, { limit: "body" }) as FastifyContextConfig }, async (request) => {
    const { id } = request.params as { id: string };
    const { decision } = request.body as { decision: string };
    const decided = await runtime.approvals.decide(id, decision, principalOf(request));
    request.log.info({ approval: id, decision, by: request.principal?.id }, "approval decided over HTTP");
    return decided;
  });

  const clients = new Set<{ end(): void }>();
  app.get("/v1/approvals/stream", { schema: routes.streamApprovals, config }, (request, reply) => {
    const approvals = runtime.approvals;
    const { principal } = principalOf(request);
    const { session } = request.query as { session?: string };
    // STREAM_LIMIT (429) here, before anything is sent or subscribed.
    const out = streams.open(request, reply, principal.id);
    const limit = streamBufferBytes();
    let ended = false;
    const send = (type: string, approval: { id: string }): void => {
      if (ended) return;
      // SECURITY: JSON.stringify never emits a raw newline: one `data:` line carries the whole approval.
      if (!out.send(`event: ${type}\nid: ${approval.id}\ndata: ${JSON.stringify(approval)}\n\n`)) {
        // Behind by more than the bound: closed with a last event rather than silently missing a decision.
        end("slow consumer", slowConsumerEvent(out.unsentBytes(), limit, "get the pending approvals again"));
      }
    };
    const wants = (a: { owner: string | null; session: string }) => mayReadApproval(a.owner, principal) && (session === undefined || a.session === session);
    const unsubscribe = approvals.on("approval", (event) => {
      if (wants(event.approval)) send(event.type, event.approval);
    });
    const heartbeat = setInterval(() => {
      if (!ended && out.unsentBytes() === 0) out.send(": heartbeat\n\n");
    }, settings.heartbeatMs).unref();
    const client = { end: () => end("server closing") };
    function end(why: string, last?: string): void {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      unsubscribe();
      clients.delete(client);
      request.log.info({ principal: principal.id, why, unsent_bytes: out.unsentBytes() }, "approval stream closed");
      out.end(last);
    }
    clients.add(client);
    out.send(`event: hello\ndata: ${JSON.stringify({ principal: principal.id, session: session ?? null, buffer_bytes: limit, heartbeat_ms: settings.heartbeatMs })}\n\n`);
    // The pending ones now (from the shared store with `store: redis`, so the list is a round trip).
    runtime.approvals.list({ ...(session !== undefined ? { session } : {}), state: "pending", principal }).then(
      (pending) => {
        for (const approval of pending) send("new", approval);
      },
      (err: unknown) => {
        request.log.warn({ err }, "approval stream: the pending approvals could not be listed");
        end("store unavailable");
      },
    );
    // The response's close, not the request's: a GET request "closes" as soon as its (empty) body is read.
    out.res.on("close", () => end("client closed"));
    out.res.on("error", () => end("socket error"));
  });

  // An open stream is never idle: end them all before the server waits for its connections.
  app.addHook("preClose", (done) => {
    for (const client of [...clients]) client.end();
    done();
  });
}
