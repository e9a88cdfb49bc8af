/**
 * Server-sent-event streams (the approvals stream, the console's decisions stream): one place takes
 * a request over as a stream, counts the streams each principal has open, and bounds what a stream
 * may have written but not yet sent.
 *
 * ```
 *  GET …/stream ─▶ principal has limits.streams_per_principal open? ─ yes ⇒ 429 STREAM_LIMIT (nothing sent)
 *               └▶ hijack, event-stream headers, count +1 ─▶ … ─▶ response closed ⇒ count −1
 *  send(event)  ─▶ unsent bytes (Node's buffer for the response and its socket) + event > stream_buffer_bytes?
 *                  yes ⇒ not written: the route drops it (decisions: counted) or ends the stream (approvals)
 *  end(last)    ─▶ last event written past the bound, response ended; not flushed within the grace ⇒ socket destroyed
 * ```
 * Without these a client could open streams without end and never read them: 300 unread approval
 * streams held 908 MB in the server's socket buffers (issue 24). Streams are counted per process:
 * with several replicas each one bounds its own memory.
 */
import type { ServerResponse } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";
import { DEFAULTS, VcpError } from "../index.js";

export interface StreamLimits {
  /** Event streams one principal may have open at once, over every stream route (`limits.streams_per_principal`). */
  streamsPerPrincipal: number;
  /** Bytes a stream may have written but not yet sent (`limits.stream_buffer_bytes`). */
  bufferBytes: number;
}

/** config/defaults.ts `limits.streams_per_principal` and `limits.stream_buffer_bytes`. */
export const DEFAULT_STREAM_LIMITS: Readonly<StreamLimits> = Object.freeze({ streamsPerPrincipal: DEFAULTS.limits.streams_per_principal, bufferBytes: DEFAULTS.limits.stream_buffer_bytes });

/** How long an ended stream may take to flush its last bytes before its socket is cut. */
const END_GRACE_MS = 5_000;

/** What a stream writes to: the raw response (a test passes a stand-in). */
export interface StreamSink {
  write(chunk: string): boolean;
  end(): void;
  destroy(): void;
  once(event: "finish" | "close", listener: () => void): unknown;
  readonly writableEnded: boolean;
  /** Bytes written and not yet handed to the kernel (Node counts the response's and its socket's buffers). */
  readonly writableLength: number;
}

/** One open stream. */
export interface EventStream {
  readonly res: ServerResponse;
  /** Write one event when it fits the unsent-bytes bound; false (nothing written) when it does not. */
  send(text: string): boolean;
  /** Bytes written and not yet sent: more than 0 means the reader is behind. */
  unsentBytes(): number;
  /** Write `last` (if any, past the bound: it is small) and end; a reader that does not take it within a grace period is cut off. */
  end(last?: string): void;
}

/**
 * The sending side of a stream over any sink; exported for the unit test (no sockets needed).
 *
 * @example
 * ```ts
 * const out = boundedStream(res, 1 << 20);
 * if (!out.send(`event: new\ndata: {}\n\n`)) out.end(`event: end\ndata: {"reason":"slow_consumer"}\n\n`);
 * ```
 */
export function boundedStream(sink: StreamSink, bufferBytes: number): Omit<EventStream, "res"> {
  let ended = false;
  return {
    send(text) {
      if (ended || sink.writableEnded) return false;
      // SECURITY: bounded per stream: a reader that stops reading gets no more than bufferBytes held for it.
      if (sink.writableLength + Buffer.byteLength(text, "utf8") > bufferBytes) return false;
      sink.write(text);
      return true;
    },
    unsentBytes: () => sink.writableLength,
    end(last) {
      if (ended) return;
      ended = true;
      if (sink.writableEnded) return;
      if (last !== undefined) sink.write(last);
      sink.end();
      // What it holds is freed only once sent: a reader that never reads is cut off.
      const cut = setTimeout(() => sink.destroy(), END_GRACE_MS);
      cut.unref();
      sink.once("close", () => clearTimeout(cut));
    },
  };
}

/**
 * The stream registry of one server.
 *
 * @example
 * ```ts
 * const streams = createEventStreams(() => ({ streamsPerPrincipal: 8, bufferBytes: 1 << 20 }));
 * const stream = streams.open(request, reply, request.principal!.id); // STREAM_LIMIT (429) past 8
 * ```
 */
export function createEventStreams(limits: () => StreamLimits) {
  const open = new Map<string, number>();
  return {
    /**
     * Take the request over as an event stream of `principal`. STREAM_LIMIT (429) before anything
     * is sent when the principal already has `streamsPerPrincipal` streams open.
     */
    open(request: FastifyRequest, reply: FastifyReply, principal: string): EventStream {
      const { streamsPerPrincipal, bufferBytes } = limits();
      const mine = open.get(principal) ?? 0;
      // SECURITY: before the stream exists: a refused stream holds nothing.
      if (mine >= streamsPerPrincipal) {
        throw new VcpError("STREAM_LIMIT", `principal '${principal}' already has ${mine} event streams open (limits.streams_per_principal ${streamsPerPrincipal}); close one first`, { limit: streamsPerPrincipal, open: mine });
      }
      reply.hijack();
      const res = reply.raw;
      res.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        // Proxies (nginx) must pass events through as they come, not buffer them.
        "x-accel-buffering": "no",
        "x-request-id": request.id,
        connection: "keep-alive",
      });
      open.set(principal, mine + 1);
      res.once("close", () => {
        const left = (open.get(principal) ?? 1) - 1;
        if (left <= 0) open.delete(principal);
        else open.set(principal, left);
      });
      return { res, ...boundedStream(res as ServerResponse & StreamSink, bufferBytes) };
    },
    /** Streams `principal` has open now. */
    count(principal: string): number {
      return open.get(principal) ?? 0;
    },
  };
}

export type EventStreams = ReturnType<typeof createEventStreams>;

/** The last event of a stream ended because its reader fell behind: why, and what to do. */
export function slowConsumerEvent(unsent: number, limit: number, what: string): string {
  return `event: end\ndata: ${JSON.stringify({ reason: "slow_consumer", unsent_bytes: unsent, limit_bytes: limit, message: `this stream fell ${unsent} bytes behind (limits.stream_buffer_bytes ${limit}) and was closed; reconnect to ${what}` })}\n\n`;
}
