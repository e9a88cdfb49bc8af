import { describe, expect, test, vi } from "vitest";
import type { ChainCompletedEvent, ChainCompletedFields } from "../../../src/index.js";
import { DEFAULT_STREAM_SETTINGS, serializeDecision, StreamClient } from "../../../src/server/console-routes.js";

function decision(patch: Partial<ChainCompletedFields> = {}): ChainCompletedEvent {
  return {
    chain_id: "c-1", type: "pre_inject", ts: "2026-01-01T00:00:00.000Z", session_id: "s1", status: "completed", reason: null, aborted_by: null, cascade_failure: false, duration_ms: 1.5,
    hooks: [{ hook: "redact", bundle: "guard", scope: "deployment", status: "continue", outcome: "ok", duration_ms: 1 }],
    ...patch,
  };
}

/** A socket stand-in: accepts `capacity` writes, then reports backpressure until drain() is called. */
function fakeSocket(capacity = Infinity) {
  const written: string[] = [];
  let onDrain: (() => void) | undefined;
  return {
    written,
    writableEnded: false,
    write(chunk: string) {
      written.push(chunk);
      return written.length < capacity;
    },
    end() {
      this.writableEnded = true;
    },
    once(_event: "drain", listener: () => void) {
      onDrain = listener;
    },
    drain(more = Infinity) {
      capacity = written.length + more;
      onDrain?.();
    },
  };
}

describe("decision stream client", () => {
  test("above maxEventsPerSecond it samples: the rest are counted as sampled_out, and tokens refill with time", () => {
    let now = 0;
    const socket = fakeSocket();
    const client = new StreamClient(socket, {}, { ...DEFAULT_STREAM_SETTINGS, maxEventsPerSecond: 50 }, () => now);
    // 500 chains within one millisecond: a burst of 50 passes, 450 are sampled out.
    let admitted = 0;
    for (let i = 0; i < 500; i++) if (client.admit()) admitted++;
    expect(admitted).toBe(50);
    expect(client.sampledOut).toBe(450);
    // A second later the bucket is full again; at 500/s sustained, 50 per second get through.
    now += 1000;
    admitted = 0;
    for (let i = 0; i < 500; i++) {
      now += 2;
      if (client.admit()) admitted++;
    }
    expect(admitted).toBeGreaterThanOrEqual(50);
    expect(admitted).toBeLessThanOrEqual(51 + 50);
  });

  test("a client that does not read: events queue up to bufferEvents, then are dropped and counted; drain delivers the queue in order", () => {
    const socket = fakeSocket(1);
    const client = new StreamClient(socket, {}, { ...DEFAULT_STREAM_SETTINGS, bufferEvents: 3 });
    for (let i = 0; i < 6; i++) client.push(`e${i}`);
    expect(socket.written).toEqual(["e0"]);
    expect(client.dropped).toBe(2);
    socket.drain();
    expect(socket.written).toEqual(["e0", "e1", "e2", "e3"]);
    expect(client.sent).toBe(4);
    client.stats();
    expect(socket.written.at(-1)).toBe(`event: stats\ndata: {"sent":4,"sampled_out":0,"dropped":2,"queued":0}\n\n`);
  });

  test("hello, then a heartbeat comment every heartbeatMs and stats only when they changed; none of it after close", () => {
    vi.useFakeTimers();
    try {
      const socket = fakeSocket();
      const client = new StreamClient(socket, { session: "s1" }, { ...DEFAULT_STREAM_SETTINGS, heartbeatMs: 1000, statsMs: 500 });
      client.hello();
      expect(socket.written[0]).toBe(`event: hello\ndata: {"max_events_per_second":50,"buffer_events":256,"filter":{"session":"s1"}}\n\n`);
      vi.advanceTimersByTime(1000);
      expect(socket.written.filter((w) => w === ": heartbeat\n\n")).toHaveLength(1);
      expect(socket.written.filter((w) => w.startsWith("event: stats"))).toHaveLength(1);
      client.close();
      const before = socket.written.length;
      vi.advanceTimersByTime(5000);
      expect(socket.written).toHaveLength(before);
    } finally {
      vi.useRealTimers();
    }
  });

  test("filters by session, bundle and outcome (a chain's status counts as an outcome: aborted)", () => {
    const mk = (filter: Record<string, string>) => new StreamClient(fakeSocket(), filter, DEFAULT_STREAM_SETTINGS);
    expect(mk({ session: "s1" }).wants(decision())).toBe(true);
    expect(mk({ session: "s2" }).wants(decision())).toBe(false);
    expect(mk({ bundle: "guard" }).wants(decision())).toBe(true);
    expect(mk({ bundle: "other" }).wants(decision())).toBe(false);
    expect(mk({ outcome: "timeout" }).wants(decision())).toBe(false);
    expect(mk({ outcome: "ok" }).wants(decision())).toBe(true);
    expect(mk({ outcome: "aborted" }).wants(decision({ status: "aborted" }))).toBe(true);
  });

  test("an event is one SSE message on one data line, even with newlines in guest text", () => {
    const wire = serializeDecision(decision({ reason: "line 1\nline 2\r\n<b>x</b>" }));
    expect(wire.startsWith("event: decision\nid: c-1\ndata: {")).toBe(true);
    expect(wire.endsWith("}\n\n")).toBe(true);
    expect(wire.split("\n")).toHaveLength(5);
    expect(JSON.parse(wire.split("\n")[2]!.slice(6)).reason).toBe("line 1\nline 2\r\n<b>x</b>");
  });

  test("an oversized event keeps its outcomes but not its annotations", () => {
    const big = decision({ hooks: [{ hook: "h", bundle: "b", scope: "deployment", status: "modify", outcome: "ok", duration_ms: 1, annotations: { blob: "x".repeat(100_000) }, modification: [{ op: "replace", path: "/context/a", value: "y".repeat(10) }] }] });
    const parsed = JSON.parse(serializeDecision(big).split("\n")[2]!.slice(6));
    expect(parsed.hooks[0]).toMatchObject({ hook: "h", outcome: "ok", annotations: { _truncated: true } });
  });
});
