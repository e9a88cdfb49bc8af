// Event streams (src/server/sse.ts): what an unread stream may hold is bounded in bytes, a stream
// ended behind its reader is cut off after a grace period, and a principal's streams are capped.
import { EventEmitter } from "node:events";
import { describe, expect, test, vi } from "vitest";
import { boundedStream, createEventStreams } from "../../../src/server/sse.js";

/** A response whose reader never reads: everything written stays unsent. */
class UnreadResponse extends EventEmitter {
  written: string[] = [];
  writableEnded = false;
  destroyed = false;
  headers: Record<string, string> | undefined;
  get writableLength(): number {
    return this.written.reduce((n, w) => n + Buffer.byteLength(w), 0);
  }
  writeHead(_status: number, headers: Record<string, string>) {
    this.headers = headers;
    return this;
  }
  write(chunk: string): boolean {
    this.written.push(chunk);
    return false;
  }
  end(): void {
    this.writableEnded = true;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit("close");
  }
}

const approvalEvent = (i: number) => `event: new\nid: ${i}\ndata: ${JSON.stringify({ id: String(i), prompt: "x".repeat(4096), options: Array.from({ length: 16 }, () => "o".repeat(256)) })}\n\n`;

describe("event streams", () => {
  test("an unread stream holds at most bufferBytes: 300 approval events of ≈ 8 KB each leave under 1 MiB written", () => {
    const res = new UnreadResponse();
    const out = boundedStream(res, 1024 * 1024);
    let accepted = 0;
    for (let i = 0; i < 300; i++) if (out.send(approvalEvent(i))) accepted++;
    expect(res.writableLength).toBeLessThanOrEqual(1024 * 1024);
    expect(accepted).toBeLessThan(300);
    expect(out.unsentBytes()).toBe(res.writableLength);
  });

  test("ended with a last event past the bound, then cut off when the reader does not take it within the grace period", () => {
    vi.useFakeTimers();
    try {
      const res = new UnreadResponse();
      const out = boundedStream(res, 64 * 1024);
      while (out.send(approvalEvent(1)));
      out.end("event: end\ndata: {}\n\n");
      expect(res.written.at(-1)).toBe("event: end\ndata: {}\n\n");
      expect(res.writableEnded).toBe(true);
      expect(out.send(": heartbeat\n\n")).toBe(false);
      vi.advanceTimersByTime(10_000);
      expect(res.destroyed).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  test("a principal's streams are capped over every route (STREAM_LIMIT, 429), others are not affected; a closed stream frees its place", () => {
    const streams = createEventStreams(() => ({ streamsPerPrincipal: 2, bufferBytes: 65_536 }));
    const open = (who: string) => {
      const raw = new UnreadResponse();
      const reply = { hijacked: false, raw, hijack() { this.hijacked = true; } };
      const stream = streams.open({ id: "req-1" } as never, reply as never, who);
      return { raw, reply, stream };
    };
    const first = open("app");
    open("app");
    let refused: unknown;
    const raw = new UnreadResponse();
    const reply = { hijacked: false, raw, hijack() { this.hijacked = true; } };
    try {
      streams.open({ id: "req-3" } as never, reply as never, "app");
    } catch (err) {
      refused = err;
    }
    expect(refused).toMatchObject({ code: "STREAM_LIMIT", details: { limit: 2, open: 2 } });
    // Refused before anything was sent: the reply is still fastify's, to answer 429.
    expect(reply.hijacked).toBe(false);
    expect(raw.headers).toBeUndefined();
    expect(open("other").stream).toBeDefined();
    first.raw.emit("close");
    expect(streams.count("app")).toBe(1);
    expect(open("app").raw.headers?.["content-type"]).toBe("text/event-stream; charset=utf-8");
  });
});
