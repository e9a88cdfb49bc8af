import type { ServerResponse } from "node:http";
import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * Take a request over as a server-sent-events stream (the console's decisions, the approvals stream):
 * fastify lets go of the reply, and the raw response gets the event-stream headers once. The caller
 * writes events, heartbeats, and ends it.
 */
export function openEventStream(request: FastifyRequest, reply: FastifyReply): ServerResponse {
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
  return res;
}
