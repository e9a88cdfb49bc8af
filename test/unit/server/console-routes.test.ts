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

/**
 * A stream stand-in (server/sse.ts EventStream). Without `capacity` its reader keeps up (nothing stays
 * unsent); with one, nothing is read until drain() and sends past `capacity` unsent bytes are refused.
 */
function fakeSocket(capacity?: number) {
  const written: string[] = [];
  let unsent = 0;
  return {
    written,
    ended: false,
    send(text: string) {
      if (capacity === undefined) return void written.push(text), true;
      if (unsent + text.length > capacity) return false;
      written.push(text);
      unsent += text.length;
      return true;
    },
    unsentBytes: () => unsent,
    end() {
      this.ended = true;
    },
    /** The reader took everything. */
    drain() {
      unsent = 0;
    },
  };
}

describe("decision stream client", () => {
  test("above maxEventsPerSecond it samples: the rest are counted as sampled_out, and tokens refill with time", () => {
    let now = 0;
    const socket = fakeSocket();
    const client = new StreamClient(socket, {}, { ...DEFAULT_STREAM_SETTINGS, maxEventsPerSecond: 50 }, 65_536, () => now);
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

  test("a client that does not read: events are written up to the stream's unsent-bytes bound, then dropped and counted; stats wait until it catches up", () => {
    const socket = fakeSocket(100);
    const client = new StreamClient(socket, {}, DEFAULT_STREAM_SETTINGS, 100);
    const wire = (i: number) => `event: decision\nid: ${i}\ndata: {"pad":"xxxxxxxxxx"}\n\n`;
    for (let i = 0; i < 6; i++) client.push(wire(i));
    expect(socket.written).toEqual([wire(0), wire(1)]);
    expect(client.sent).toBe(2);
    expect(client.dropped).toBe(4);
    client.stats();
    expect(socket.written).toHaveLength(2);
    socket.drain();
    client.stats();
    expect(socket.written.at(-1)).toBe(`event: stats\ndata: {"sent":2,"sampled_out":0,"dropped":4}\n\n`);
  });

  test("hello, then a heartbeat comment every heartbeatMs and stats only when they changed; none of it after close", () => {
    vi.useFakeTimers();
    try {
      const socket = fakeSocket();
      const client = new StreamClient(socket, { session: "s1" }, { ...DEFAULT_STREAM_SETTINGS, heartbeatMs: 1000, statsMs: 500 }, 1_048_576);
      client.hello();
      expect(socket.written[0]).toBe(`event: hello\ndata: {"max_events_per_second":50,"buffer_bytes":1048576,"filter":{"session":"s1"}}\n\n`);
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
    const mk = (filter: Record<string, string>) => new StreamClient(fakeSocket(), filter, DEFAULT_STREAM_SETTINGS, 65_536);
    expect(mk({ session: "s1" }).wants(decision())).toBe(true);
    expect(mk({ session: "s2" }).wants(decision())).toBe(false);
    expect(mk({ bundle: "guard" }).wants(decision())).toBe(true);
    expect(mk({ bundle: "other" }).wants(decision())).toBe(false);
    expect(mk({ outcome: "timeout" }).wants(decision())).toBe(false);
    expect(mk({ outcome: "ok" }).wants(decision())).toBe(true);
    expect(mk({ outcome: "aborted" }).wants(decision({ status: "aborted" }))).toBe(true);
  });

  test("the outcome filter matches the decision record's outcome too (block, ask, modify, allow)", () => {
    const mk = (filter: Record<string, string>) => new StreamClient(fakeSocket(), filter, DEFAULT_STREAM_SETTINGS, 65_536);
    const blocked = decision({
      status: "aborted",
      decision: {
        chain_id: "c-1", at: "2026-01-01T00:00:00.000Z", profile: "gemini-cli", event: "BeforeTool", outcome: "block", errors: 0,
        decided_by: { hook: "redact", bundle: "guard", revision: null }, reason: "no", subject: { kind: "tool", tool: "run_shell_command", command: "rm -rf /", summary: "run_shell_command: rm -rf /" },
        hooks: [], changes: [], session: "s1", client: "app",
      },
    });
    expect(mk({ outcome: "block" }).wants(blocked)).toBe(true);
    expect(mk({ outcome: "ask" }).wants(blocked)).toBe(false);
    expect(mk({ outcome: "block" }).wants(decision())).toBe(false);
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
