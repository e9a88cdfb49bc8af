/**
 * The decision-log sink against a real HTTP receiver that misbehaves: errors, hangs, garbage, and
 * going away. Nothing may be lost, the cursor moves only on a 2xx, appends never wait for the
 * receiver, and a new sink resumes at the cursor.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test, vi } from "vitest";
import { openAuditLog, startAuditSink, type AuditSink, type AuditWriter } from "../../../src/audit/index.js";

type Mode = "ok" | "500" | "hang" | "garbage" | "400";

/** A receiver that answers per `modes` (one entry per request, then "ok") and records what it accepted. */
async function receiver(modes: Mode[], port = 0) {
  const accepted: number[] = [];
  const bodies: string[] = [];
  const hanging: ServerResponse[] = [];
  let requests = 0;
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      requests++;
      const mode = modes.shift() ?? "ok";
      if (mode === "hang") return void hanging.push(res);
      if (mode === "500" || mode === "400") return void res.writeHead(Number(mode)).end("no");
      bodies.push(body);
      for (const line of body.split("\n").filter(Boolean)) {
        const parsed = JSON.parse(line) as { seq?: number; resourceLogs?: unknown };
        if (parsed.seq !== undefined) accepted.push(parsed.seq);
      }
      res.writeHead(200).end(mode === "garbage" ? "<<not json" : "{}");
    });
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}/ingest`,
    port: address.port,
    accepted,
    bodies,
    hanging,
    requests: () => requests,
    close: () => new Promise<void>((r) => { for (const h of hanging) h.destroy(); server.closeAllConnections(); server.close(() => r()); }),
  };
}

const dirs: string[] = [];
const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function log(): Promise<{ dir: string; path: string; writer: AuditWriter; append(n: number): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), "vcp-sink-"));
  dirs.push(dir);
  const path = join(dir, "audit.jsonl");
  // Small rotations: the sink must follow the log across them.
  const writer = await openAuditLog({ path, fsync: "never", rotateBytes: 4096, maxPending: 10_000 });
  open.push(writer);
  return {
    dir,
    path,
    writer,
    async append(n) {
      await writer.appendMany(Array.from({ length: n }, (_, i) => ({ kind: "chain" as const, session: "s", chain_id: `c-${i}`, status: "completed", details: { pad: "x".repeat(100) } })));
    },
  };
}

function sinkFor(path: string, url: string, extra: Partial<Parameters<typeof startAuditSink>[0]> = {}): AuditSink {
  const sink = startAuditSink({ path, url, cursorFile: join(path, "..", "sink.cursor"), batchRecords: 10, intervalMs: 20, timeoutMs: 5000, maxBackoffMs: 100, ...extra });
  open.push(sink);
  return sink;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
/**
 * Delivery is at least once: on a loaded machine a 2xx can arrive after the sink's timeout, and the
 * batch is sent again. What must hold is that every record arrives, in order of first arrival.
 */
const firstArrivals = (seqs: number[]): number[] => [...new Set(seqs)];

describe("audit sink", { timeout: 60_000 }, () => {
  test("errors, a hang and garbage are retried: every record arrives, in order, the cursor moves only on 2xx", async () => {
    const l = await log();
    await l.append(30);
    const rx = await receiver(["500", "hang", "400", "garbage"]);
    open.push(rx);
    const sink = sinkFor(l.path, rx.url, { timeoutMs: 1500 });
    await vi.waitFor(() => expect(sink.stats().cursor_seq).toBe(30), { timeout: 30_000, interval: 20 });
    expect(firstArrivals(rx.accepted)).toEqual(range(1, 30));
    const stats = sink.stats();
    expect(stats.failures).toBeGreaterThanOrEqual(3);
    expect(stats.last_error).not.toBeNull();
    expect(stats.lag_records).toBe(0);
    expect(JSON.parse(readFileSync(join(l.dir, "sink.cursor"), "utf8"))).toMatchObject({ seq: 30 });
  });

  test("appends never wait for a hanging receiver", async () => {
    const l = await log();
    const rx = await receiver(["hang", "hang", "hang"]);
    open.push(rx);
    sinkFor(l.path, rx.url, { timeoutMs: 60_000 });
    await l.append(5);
    await vi.waitFor(() => expect(rx.hanging.length).toBe(1), { timeout: 10_000, interval: 20 });
    // The receiver holds the request open; the log keeps taking records and they are durable.
    await l.append(50);
    expect(l.writer.head().seq).toBe(55);
    expect(rx.hanging.length).toBe(1);
  });

  test("a receiver that goes away loses nothing: it catches up when back, and a new sink resumes at the cursor", async () => {
    const l = await log();
    await l.append(12);
    const first = await receiver([]);
    const sink = sinkFor(l.path, first.url);
    await vi.waitFor(() => expect(sink.stats().cursor_seq).toBe(12), { timeout: 20_000, interval: 20 });
    const port = first.port;
    await first.close();

    await l.append(20); // seq 13..32 while nobody listens
    await vi.waitFor(() => expect(sink.stats().consecutive_failures).toBeGreaterThanOrEqual(2), { timeout: 20_000, interval: 20 });
    expect(sink.stats().cursor_seq).toBe(12);
    await vi.waitFor(() => expect(sink.stats().lag_records).toBe(20), { timeout: 20_000, interval: 20 });

    const back = await receiver([], port);
    open.push(back);
    await vi.waitFor(() => expect(sink.stats().cursor_seq).toBe(32), { timeout: 20_000, interval: 20 });
    expect(firstArrivals(back.accepted)).toEqual(range(13, 32));
    await sink.close();

    await l.append(5);
    const again = sinkFor(l.path, back.url);
    await vi.waitFor(() => expect(again.stats().cursor_seq).toBe(37), { timeout: 20_000, interval: 20 });
    expect(firstArrivals(back.accepted)).toEqual(range(13, 37));
  });

  test("format otlp sends OTLP/JSON logs with every record field as an attribute", async () => {
    const l = await log();
    await l.append(3);
    const rx = await receiver([]);
    open.push(rx);
    const sink = sinkFor(l.path, rx.url, { format: "otlp" });
    await vi.waitFor(() => expect(sink.stats().cursor_seq).toBe(3), { timeout: 20_000, interval: 20 });
    const body = JSON.parse(rx.bodies[0]!) as { resourceLogs: Array<{ scopeLogs: Array<{ logRecords: Array<{ timeUnixNano: string; attributes: Array<{ key: string; value: Record<string, unknown> }> }> }> }> };
    const records = body.resourceLogs[0]!.scopeLogs[0]!.logRecords;
    expect(records).toHaveLength(3);
    expect(records[0]!.attributes).toEqual(expect.arrayContaining([{ key: "vcp.seq", value: { intValue: "1" } }, { key: "vcp.kind", value: { stringValue: "chain" } }]));
    expect(records[0]!.timeUnixNano).toMatch(/^\d{19}$/);
  });

  test("after the README's recovery (the log moved aside) the sink restarts at the new log's first record, with a warning", async () => {
    const l = await log();
    await l.append(30);
    const rx = await receiver([]);
    open.push(rx);
    const sink = sinkFor(l.path, rx.url);
    await vi.waitFor(() => expect(sink.stats().cursor_seq).toBe(30), { timeout: 20_000, interval: 20 });
    await sink.close();
    await l.writer.close();
    // "move the log aside": the live file and its rotations; the cursor stays where it was.
    const { readdirSync, renameSync, mkdirSync } = await import("node:fs");
    mkdirSync(join(l.dir, "aside"));
    for (const name of readdirSync(l.dir).filter((n) => n.startsWith("audit.jsonl"))) renameSync(join(l.dir, name), join(l.dir, "aside", name));
    const fresh = await openAuditLog({ path: l.path, fsync: "never", rotateBytes: 4096, maxPending: 10_000 });
    open.push(fresh);
    // The new log grows past the old cursor's seq: every one of its records must still arrive.
    await fresh.appendMany(Array.from({ length: 40 }, (_, i) => ({ kind: "chain" as const, session: "s2", chain_id: `n-${i}`, status: "completed" })));
    const warnings: Array<{ obj: object; msg?: string }> = [];
    const logger = { isLevelEnabled: () => true, debug() {}, info() {}, error() {}, warn: (obj: object, msg?: string) => void warnings.push({ obj, msg }) };
    const before = rx.accepted.length;
    const again = sinkFor(l.path, rx.url, { logger });
    await vi.waitFor(() => expect(again.stats().cursor_seq).toBe(40), { timeout: 20_000, interval: 20 });
    expect(firstArrivals(rx.accepted.slice(before))).toEqual(range(1, 40));
    expect(warnings.some((w) => /not the log the cursor/.test(w.msg ?? ""))).toBe(true);
    expect(JSON.parse(readFileSync(join(l.dir, "sink.cursor"), "utf8"))).toMatchObject({ seq: 40, hash: expect.stringMatching(/^sha256:/) });
  });

  test("a cursor past the end of a fresh, shorter log restarts at its first record", async () => {
    const l = await log();
    await l.append(5);
    const { writeFileSync } = await import("node:fs");
    // An old cursor (before cursors carried a hash) left over from a log moved aside.
    writeFileSync(join(l.dir, "sink.cursor"), JSON.stringify({ seq: 500 }));
    const rx = await receiver([]);
    open.push(rx);
    const sink = sinkFor(l.path, rx.url);
    await vi.waitFor(() => expect(sink.stats().cursor_seq).toBe(5), { timeout: 20_000, interval: 20 });
    expect(firstArrivals(rx.accepted)).toEqual(range(1, 5));
  });

  test("a redirect is a failed delivery: nothing and no header goes to the other origin, the Location is logged, the cursor stays", async () => {
    const l = await log();
    await l.append(3);
    const elsewhere = await receiver([]);
    open.push(elsewhere);
    const redirector: Server = createServer((req, res) => {
      req.resume();
      req.on("end", () => res.writeHead(307, { location: `${elsewhere.url}?stolen=1` }).end());
    });
    await new Promise<void>((r) => redirector.listen(0, "127.0.0.1", r));
    open.push({ close: () => new Promise<void>((r) => { redirector.closeAllConnections(); redirector.close(() => r()); }) });
    const warnings: Array<Record<string, unknown>> = [];
    const logger = { isLevelEnabled: () => true, debug() {}, info() {}, error() {}, warn: (obj: object) => void warnings.push(obj as Record<string, unknown>) };
    const url = `http://127.0.0.1:${(redirector.address() as AddressInfo).port}/ingest`;
    const sink = sinkFor(l.path, url, { headers: { "x-api-key": "secret-key-1" }, logger });
    await vi.waitFor(() => expect(sink.stats().failures).toBeGreaterThanOrEqual(2), { timeout: 20_000, interval: 20 });
    expect(elsewhere.requests()).toBe(0);
    expect(sink.stats().cursor_seq).toBe(0);
    expect(sink.stats().last_error).toMatch(/307/);
    expect(warnings.some((w) => typeof w.location === "string" && (w.location as string).includes("stolen=1"))).toBe(true);
  });

  test("a damaged cursor file is an error naming it, not a silent resend", async () => {
    const l = await log();
    const { writeFileSync } = await import("node:fs");
    writeFileSync(join(l.dir, "sink.cursor"), "garbage");
    expect(() => startAuditSink({ path: l.path, url: "http://127.0.0.1:9/x", cursorFile: join(l.dir, "sink.cursor") })).toThrow(/sink\.cursor/);
  });
});
