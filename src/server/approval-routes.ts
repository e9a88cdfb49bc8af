/**
 * Approval routes (PROFILES §3.4 "Coordinator", §8.9): `GET /v1/approvals`, `GET /v1/approvals/{id}`,
 * `POST /v1/approvals/{id}` and the server-sent events of `GET /v1/approvals/stream`.
 *
 * ```
 *  runtime.approvals "approval" ─▶ per client: may it see the approval? (owner or operator) ─▶ session filter
 *                               ─▶ socket writable? write : queue (≤ bufferEvents) ─ full ⇒ the stream ends
 *  on connect: `hello`, then every pending approval it may see as `new`; idle: a `:` heartbeat comment
 * ```
 * A client that falls behind is disconnected rather than silently missing a decision: on reconnect it
 * gets the pending approvals again. Who may see what is the runtime's rule (src/pipeline/access.ts):
 * another client's approval is 404 here and never appears on its stream.
 */
import { openEventStream } from "./sse.js";
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from "fastify";
import type { Role } from "./auth.js";
import type { Principal, Runtime } from "../index.js";
import { routes } from "./schemas.js";

interface Helpers {
  cfg(roles: readonly Role[] | null, extra?: { limit?: "body" | "bundle" }): object;
  principalOf(request: FastifyRequest): { principal: Principal };
}

export interface ApprovalStreamSettings {
  /** Events queued for a client whose socket is not draining; one more ends its stream. */
  bufferEvents: number;
  /** A comment line this often keeps proxies from closing an idle stream. */
  heartbeatMs: number;
}

export const DEFAULT_APPROVAL_STREAM: ApprovalStreamSettings = { bufferEvents: 256, heartbeatMs: 15_000 };

const BOTH = ["operator", "client"] as const;

/** Same rule as src/pipeline/access.ts `maySee`: operators see all; a client only what it owns. */
function maySee(owner: string | null, principal: Principal): boolean {
  return principal.role === "operator" || (owner !== null && owner === principal.id);
}

/**
 * @example
 * ```ts
 * registerApprovalRoutes(app, runtime, { cfg, principalOf });
 * ```
 */
export function registerApprovalRoutes(app: FastifyInstance, runtime: Runtime, { cfg, principalOf }: Helpers, stream: Partial<ApprovalStreamSettings> = {}): void {
  const settings: ApprovalStreamSettings = { ...DEFAULT_APPROVAL_STREAM, ...stream };
  const config = cfg(BOTH) as FastifyContextConfig;

  app.get("/v1/approvals", { schema: routes.listApprovals, config }, async (request) => {
    const query = request.query as { session?: string; state?: "pending" | "granted" | "denied" | "expired" };
    return { approvals: await runtime.shared.approvals.list({ ...query, ...principalOf(request) }) };
  });

  app.get("/v1/approvals/:id", { schema: routes.getApproval, config }, async (request) => {
    const { id } = request.params as { id: string };
    return runtime.shared.approvals.get(id, principalOf(request));
  });

  app.post("/v1/approvals/:id", { schema: routes.decideApproval, config: cfg(BOTH, { limit: "body" }) as FastifyContextConfig }, async (request) => {
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
    const res = openEventStream(request, reply);
    let ended = false;
    const out = boundedWriter(res, settings.bufferEvents, () => end("overflow"));
    const write = (text: string): void => {
      if (!ended) out.write(text);
    };
    const send = (type: string, approval: { id: string }): void => {
      // SECURITY: JSON.stringify never emits a raw newline: one `data:` line carries the whole approval.
      write(`event: ${type}\nid: ${approval.id}\ndata: ${JSON.stringify(approval)}\n\n`);
    };
    const wants = (a: { owner: string | null; session: string }) => maySee(a.owner, principal) && (session === undefined || a.session === session);
    const unsubscribe = approvals.on("approval", (event) => {
      if (wants(event.approval)) send(event.type, event.approval);
    });
    const heartbeat = setInterval(() => {
      if (!out.blocked) write(": heartbeat\n\n");
    }, settings.heartbeatMs).unref();
    const client = { end: () => end("server closing") };
    function end(why: string): void {
      if (ended) return;
      ended = true;
      clearInterval(heartbeat);
      unsubscribe();
      clients.delete(client);
      request.log.info({ principal: principal.id, why }, "approval stream closed");
      if (!res.writableEnded) res.end();
    }
    clients.add(client);
    write(`event: hello\ndata: ${JSON.stringify({ principal: principal.id, session: session ?? null, buffer_events: settings.bufferEvents, heartbeat_ms: settings.heartbeatMs })}\n\n`);
    // The pending ones now (from the shared store with `store: redis`, so the list is a round trip).
    runtime.shared.approvals.list({ ...(session !== undefined ? { session } : {}), state: "pending", principal }).then(
      (pending) => {
        for (const approval of pending) send("new", approval);
      },
      (err: unknown) => {
        request.log.warn({ err }, "approval stream: the pending approvals could not be listed");
        end("store unavailable");
      },
    );
    // The response's close, not the request's: a GET request "closes" as soon as its (empty) body is read.
    res.on("close", () => end("client closed"));
    res.on("error", () => end("socket error"));
  });

  // An open stream is never idle: end them all before the server waits for its connections.
  app.addHook("preClose", (done) => {
    for (const client of [...clients]) client.end();
    done();
  });
}

interface Sink {
  write(chunk: string): boolean;
  once(event: "drain", listener: () => void): unknown;
  readonly writableEnded: boolean;
}

/**
 * Writes to a socket; while it is not draining, up to `bufferEvents` events wait in order. One more
 * calls `overflow` (the route ends the stream) and is not queued: memory per client stays bounded.
 * Exported for its unit test (no sockets needed).
 */
export function boundedWriter(sink: Sink, bufferEvents: number, overflow: () => void) {
  const queue: string[] = [];
  const state = {
    blocked: false,
    get queued(): number {
      return queue.length;
    },
    write(text: string): void {
      if (sink.writableEnded) return;
      if (state.blocked) {
        // SECURITY: bounded per client: a reader that stops reading is cut off, not buffered for.
        if (queue.length >= bufferEvents) {
          queue.length = 0;
          overflow();
          return;
        }
        queue.push(text);
        return;
      }
      if (!sink.write(text)) {
        state.blocked = true;
        sink.once("drain", () => {
          state.blocked = false;
          while (!state.blocked && queue.length > 0) state.write(queue.shift()!);
        });
      }
    },
  };
  return state;
}
