/**
 * Issue 27: audit retention deletes old rotated segments by count, bytes or age — only those the
 * decision-log sink has shipped to a real HTTP receiver — and `audit verify` still checks what is kept
 * (the log starts mid-chain, accounted for by a retention record in the chain). A sink pointed at a
 * down server holds everything; a cursor left by another log counts for nothing; a restart in between
 * changes nothing.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test, vi } from "vitest";
import {
  listSegments, openAuditLog, recordHash, startAuditRetention, startAuditSink, verifyAuditLog,
  type AuditRecord, type AuditRetention, type AuditRetentionOptions, type AuditSink, type AuditWriter,
} from "../../../src/audit/index.js";
import { VcpError } from "../../../src/errors.js";

const dirs: string[] = [];
const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A receiver taking JSON lines; `failAfter` batches it answers 503 to everything. */
async function receiver(options: { port?: number; failAfter?: number } = {}) {
  const seqs: number[] = [];
  let batches = 0;
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      if (options.failAfter !== undefined && batches >= options.failAfter) return void res.writeHead(503).end("down");
      batches++;
      for (const line of body.split("\n").filter(Boolean)) seqs.push((JSON.parse(line) as AuditRecord).seq);
      res.writeHead(200).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(options.port ?? 0, "127.0.0.1", r));
  const handle = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ingest`,
    seqs,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
  open.push(handle);
  return handle;
}

/** A loopback port nobody listens on (taken, then released). */
async function downPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

interface Log {
  dir: string;
  path: string;
  cursorFile: string;
  writer: AuditWriter;
  append(n: number): Promise<void>;
  reopen(extra?: { now?: () => number }): Promise<void>;
}

async function log(extra: { now?: () => number; dir?: string } = {}): Promise<Log> {
  const dir = extra.dir ?? mkdtempSync(join(tmpdir(), "vcp-retention-"));
  if (extra.dir === undefined) dirs.push(dir);
  const path = join(dir, "audit.jsonl");
  // Small rotations: ~11 records per segment.
  const openWriter = async (now?: () => number) => {
    const w = await openAuditLog({ path, fsync: "never", rotateBytes: 4096, maxPending: 10_000, replica: "r1", ...(now !== undefined ? { now } : {}), onRotate: () => self.onRotate?.() });
    open.push(w);
    return w;
  };
  const self: Log & { onRotate?: () => void } = {
    dir,
    path,
    cursorFile: join(dir, "sink.cursor"),
    writer: await openWriter(extra.now),
    async append(n) {
      // Five at a time: one write each, so the log rotates every ~10 records (a write is never split).
      for (let done = 0; done < n; done += 5) {
        await self.writer.appendMany(Array.from({ length: Math.min(5, n - done) }, (_, i) => ({ kind: "chain" as const, session: "s", chain_id: `c-${done + i}`, status: "completed", details: { pad: "x".repeat(200) } })));
      }
    },
    async reopen(more = {}) {
      await self.writer.close();
      self.writer = await openWriter(more.now);
    },
  };
  return self;
}

function sinkFor(l: Log, url: string): AuditSink {
  const sink = startAuditSink({ path: l.path, url, cursorFile: l.cursorFile, batchRecords: 10, intervalMs: 20, timeoutMs: 5000, maxBackoffMs: 100 });
  open.push(sink);
  return sink;
}

/** Retention over `l`, run by hand and, as the runtime wires it, after each rotation (the timer is an hour). */
function retentionFor(l: Log, policy: Partial<AuditRetentionOptions>): AuditRetention {
  const retention = startAuditRetention({ path: l.path, writer: l.writer, sinkCursorFile: l.cursorFile, intervalMs: 3_600_000, ...policy });
  (l as Log & { onRotate?: () => void }).onRotate = () => retention.kick();
  open.push(retention);
  return retention;
}

function records(file: string): AuditRecord[] {
  return readFileSync(file, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as AuditRecord);
}

/** Every record on disk, oldest first (segments, then the live file). */
async function onDisk(path: string): Promise<AuditRecord[]> {
  return [...(await listSegments(path)).flatMap((s) => records(s.path)), ...records(path)];
}

async function shippedThrough(sink: AuditSink, seq: number): Promise<void> {
  await vi.waitFor(() => expect(sink.stats().cursor_seq).toBeGreaterThanOrEqual(seq), { timeout: 30_000, interval: 20 });
}

describe("audit retention", { timeout: 90_000 }, () => {
  test("by count: the oldest shipped segments go, max_segments are kept, and verify checks the kept chain from where it starts", async () => {
    const l = await log();
    await l.append(100);
    const before = (await listSegments(l.path)).length;
    expect(before).toBeGreaterThan(4);
    const sink = sinkFor(l, (await receiver()).url);
    await shippedThrough(sink, 100);
    const retention = retentionFor(l, { maxSegments: 2 });
    const stats = await retention.run();

    const kept = await listSegments(l.path);
    expect(kept.length).toBe(2);
    expect(stats).toMatchObject({ segments: 2, blocked: false, held_segments: 0, held_bytes: 0, blocked_reason: null, last_error: null });
    // The retention record may itself rotate the live file: one more segment goes in the run after.
    expect(stats.deleted_segments).toBeGreaterThanOrEqual(before - 2);
    expect(stats.deleted_bytes).toBeGreaterThan(0);
    // The retention records name every deleted segment's last seq and hash.
    const disk = await onDisk(l.path);
    const retentionRecords = disk.filter((r) => r.kind === "retention");
    const retentionRecord = retentionRecords.at(-1)!;
    const named = retentionRecords.flatMap((r) => (r.details as { deleted: Array<{ last_seq: number; last_hash: string }> }).deleted);
    expect(named).toHaveLength(stats.deleted_segments);
    const deleted = (retentionRecord.details as { deleted: Array<{ last_seq: number; last_hash: string }> }).deleted;
    expect(deleted.at(-1)!.last_seq).toBe(disk[0]!.seq - 1);
    expect(deleted.at(-1)!.last_hash).toBe(disk[0]!.prev);
    // The kept records are exactly the tail of the chain, unbroken.
    expect(disk.map((r) => r.seq)).toEqual(Array.from({ length: disk.length }, (_, i) => disk[0]!.seq + i));

    const verdict = await verifyAuditLog([l.path]);
    expect(verdict).toMatchObject({ ok: true, records: disk.length, retained_from: { seq: disk[0]!.seq, recorded_at_seq: retentionRecord.seq } });
  });

  test("by bytes: the log (segments and live file) is brought under max_bytes, oldest first", async () => {
    const l = await log();
    await l.append(100);
    const sink = sinkFor(l, (await receiver()).url);
    await shippedThrough(sink, 100);
    const maxBytes = 3 * 4096;
    const stats = await retentionFor(l, { maxBytes }).run();
    const files = [...(await listSegments(l.path)).map((s) => s.path), l.path];
    const total = files.reduce((n, f) => n + statSync(f).size, 0);
    expect(total).toBeLessThanOrEqual(maxBytes);
    expect(stats.bytes).toBe(total);
    expect(stats.deleted_segments).toBeGreaterThan(0);
    expect(await verifyAuditLog([l.path])).toMatchObject({ ok: true });
  });

  test("by age: segments whose newest record is older than max_age go; a segment with a newer record stays", async () => {
    let clock = Date.now() - 3 * 86_400_000; // records written three days ago …
    const l = await log({ now: () => clock });
    await l.append(60);
    const oldSegments = (await listSegments(l.path)).length;
    clock = Date.now(); // … then today
    await l.append(40);
    const sink = sinkFor(l, (await receiver()).url);
    await shippedThrough(sink, 100);
    const stats = await retentionFor(l, { maxAgeMs: 86_400_000 }).run();
    const disk = await onDisk(l.path);
    // Every segment of old records went (the live file of then too, if it rotated exactly there); every new record is kept.
    expect(stats.deleted_segments).toBeGreaterThanOrEqual(oldSegments);
    expect(stats.deleted_segments).toBeLessThanOrEqual(oldSegments + 1);
    expect(disk.filter((r) => Date.parse(r.ts) > Date.now() - 86_400_000).length).toBeGreaterThanOrEqual(41); // 40 + the retention record
    for (const s of await listSegments(l.path)) expect(Date.now() - Date.parse(records(s.path).at(-1)!.ts)).toBeLessThan(86_400_000);
    expect(stats.oldest_segment_age_seconds).toBeLessThan(86_400);
    expect(await verifyAuditLog([l.path])).toMatchObject({ ok: true });
  });

  test("never deletes an unshipped record: a sink pointed at a down server holds every segment and status says so; once it ships, they go", async () => {
    const port = await downPort();
    const l = await log();
    await l.append(100);
    const segments = (await listSegments(l.path)).length;
    const sink = sinkFor(l, `http://127.0.0.1:${port}/ingest`);
    await vi.waitFor(() => expect(sink.stats().failures).toBeGreaterThan(0), { timeout: 30_000, interval: 20 });
    const retention = retentionFor(l, { maxSegments: 1 });
    const held = await retention.run();
    expect((await listSegments(l.path)).length).toBe(segments);
    expect(held).toMatchObject({ blocked: true, held_segments: segments - 1, deleted_segments: 0 });
    expect(held.held_bytes).toBeGreaterThan(0);
    expect(held.blocked_reason).toMatch(/not acknowledged any record/);
    const whole = await verifyAuditLog([l.path]);
    expect(whole).toMatchObject({ ok: true, records: 100 });
    expect(whole).not.toHaveProperty("retained_from");

    // The receiver comes up: shipping catches up, and only then does retention delete.
    await receiver({ port });
    await shippedThrough(sink, 100);
    const after = await retention.run();
    expect(after).toMatchObject({ blocked: false, held_segments: 0, segments: 1 });
    // Its own retention records can rotate the live file again: those segments go too, once shipped.
    expect(after.deleted_segments).toBeGreaterThanOrEqual(segments - 1);
    expect(await verifyAuditLog([l.path])).toMatchObject({ ok: true });
  });

  test("a receiver that stops part way: exactly the segments up to the cursor go, every record after it stays", async () => {
    const l = await log();
    await l.append(100);
    const rx = await receiver({ failAfter: 4 }); // 4 batches of 10: the cursor stops at seq 40
    const sink = sinkFor(l, rx.url);
    await shippedThrough(sink, 40);
    await vi.waitFor(() => expect(sink.stats().consecutive_failures).toBeGreaterThan(0), { timeout: 30_000, interval: 20 });
    const cursor = sink.stats().cursor_seq;
    expect(cursor).toBeLessThan(100);
    const stats = await retentionFor(l, { maxSegments: 0 }).run();
    expect(stats.deleted_segments).toBeGreaterThan(0);
    expect(stats.blocked).toBe(true);
    expect(stats.blocked_reason).toContain(`through seq ${cursor},`);
    const disk = await onDisk(l.path);
    // Nothing after the cursor is gone; the first kept record is at most one segment before it.
    expect(disk[0]!.seq).toBeLessThanOrEqual(cursor + 1);
    for (let seq = cursor + 1; seq <= 100; seq++) expect(disk.some((r) => r.seq === seq), `seq ${seq}`).toBe(true);
    expect(await verifyAuditLog([l.path])).toMatchObject({ ok: true });
  });

  test("a cursor left by a log moved aside counts for nothing: the new log's segments are held", async () => {
    const l = await log();
    await l.append(100);
    const sink = sinkFor(l, (await receiver()).url);
    await shippedThrough(sink, 100);
    await sink.close();
    await l.writer.close();
    // The README's recovery from AUDIT_LOG_CORRUPT: the log moved aside, a new one started; the cursor stays.
    const aside = mkdtempSync(join(tmpdir(), "vcp-retention-aside-"));
    dirs.push(aside);
    for (const s of await listSegments(l.path)) renameSync(s.path, join(aside, `seg-${s.n}`));
    renameSync(l.path, join(aside, "live"));
    await l.reopen();
    await l.append(60);
    expect((await listSegments(l.path)).length).toBeGreaterThan(2);
    const stats = await retentionFor(l, { maxSegments: 1 }).run();
    expect(stats).toMatchObject({ blocked: true, deleted_segments: 0 });
    expect(stats.blocked_reason).toMatch(/not this log's/);
    expect(await verifyAuditLog([l.path])).toMatchObject({ ok: true, records: 60 });
  });

  test("verify after deletion still catches an edited kept record, a kept segment deleted by hand, and a forged retention record", async () => {
    const l = await log();
    await l.append(100);
    const sink = sinkFor(l, (await receiver()).url);
    await shippedThrough(sink, 100);
    await retentionFor(l, { maxSegments: 3 }).run();
    await sink.close();
    await l.writer.close();
    expect(await verifyAuditLog([l.path])).toMatchObject({ ok: true });
    const [first, second] = await listSegments(l.path);
    const original = readFileSync(second!.path, "utf8");

    // An edited record in a kept segment.
    writeFileSync(second!.path, original.replace(/"chain_id":"c-(\d+)"/, '"chain_id":"forged"'));
    expect(await verifyAuditLog([l.path])).toMatchObject({ ok: false, reason: expect.stringMatching(/hash mismatch/) });
    writeFileSync(second!.path, original);

    // One more segment deleted by hand: retention never recorded it.
    const firstText = readFileSync(first!.path, "utf8");
    unlinkSync(first!.path);
    expect(await verifyAuditLog([l.path])).toMatchObject({ ok: false, first_bad_seq: 1, records: 0, reason: expect.stringMatching(/no retention record/) });
    writeFileSync(first!.path, firstText);

    // A retention record rewritten (its own hash recomputed) to claim another boundary.
    const live = readFileSync(l.path, "utf8").split("\n");
    const i = live.findIndex((line) => line.includes('"kind":"retention"'));
    const forged = JSON.parse(live[i]!) as AuditRecord & { details: { deleted: Array<{ last_hash: string }> } };
    forged.details.deleted.at(-1)!.last_hash = `sha256:${"1".repeat(64)}`;
    forged.hash = recordHash(forged);
    live[i] = JSON.stringify(forged);
    writeFileSync(l.path, live.join("\n"));
    expect(await verifyAuditLog([l.path])).toMatchObject({ ok: false });
  });

  test("restart in between: retention, stop, reopen, more records, retention again; the chain verifies and the sink resumes", async () => {
    const l = await log();
    await l.append(60);
    const rx = await receiver();
    let sink = sinkFor(l, rx.url);
    await shippedThrough(sink, 60);
    let retention = retentionFor(l, { maxSegments: 1 });
    const first = await retention.run();
    expect(first.deleted_segments).toBeGreaterThan(0);
    await retention.close();
    await sink.close();

    // Stop and start again on the same files.
    await l.reopen();
    await l.append(60);
    sink = sinkFor(l, rx.url);
    const written = l.writer.head().seq;
    await shippedThrough(sink, written);
    retention = retentionFor(l, { maxSegments: 1 });
    const second = await retention.run();
    expect(second.deleted_segments).toBeGreaterThan(0);
    expect((await listSegments(l.path)).length).toBe(1);

    const disk = await onDisk(l.path);
    expect(disk.filter((r) => r.kind === "retention").length).toBeGreaterThanOrEqual(1);
    const verdict = await verifyAuditLog([l.path]);
    expect(verdict).toMatchObject({ ok: true, head: l.writer.head(), retained_from: { seq: disk[0]!.seq } });
    // Every record reached the receiver: none was deleted before it did.
    for (let seq = 1; seq <= written; seq++) expect(rx.seqs.includes(seq), `seq ${seq} shipped`).toBe(true);
  });

  test("require_shipped false deletes by the limits alone; true without a sink cursor is refused", async () => {
    const l = await log();
    await l.append(60);
    expect(() => startAuditRetention({ path: l.path, writer: l.writer, maxSegments: 1 })).toThrow(VcpError);
    expect(() => startAuditRetention({ path: l.path, writer: l.writer, maxSegments: 1 })).toThrow(/require_shipped/);
    expect(() => startAuditRetention({ path: l.path, writer: l.writer, requireShipped: false })).toThrow(/max_segments/);
    const retention = startAuditRetention({ path: l.path, writer: l.writer, maxSegments: 1, requireShipped: false, intervalMs: 3_600_000 });
    open.push(retention);
    const stats = await retention.run();
    expect(stats).toMatchObject({ segments: 1, blocked: false, require_shipped: false });
    const retentionRecord = (await onDisk(l.path)).find((r) => r.kind === "retention")!;
    expect(retentionRecord.details).toMatchObject({ shipped_through_seq: null, require_shipped: false, reasons: ["max_segments"] });
    expect(await verifyAuditLog([l.path])).toMatchObject({ ok: true });
  });

  test("a rotation runs retention by itself (no timer, no call)", async () => {
    const l = await log();
    await l.append(50);
    const sink = sinkFor(l, (await receiver()).url);
    await shippedThrough(sink, 50);
    const retention = retentionFor(l, { maxSegments: 1 });
    // The run at start.
    await vi.waitFor(() => expect(retention.stats()).toMatchObject({ segments: 1, blocked: false }), { timeout: 10_000, interval: 20 });
    await l.append(30);
    await shippedThrough(sink, l.writer.head().seq);
    await vi.waitFor(() => expect(retention.stats().last_run_at).not.toBeNull(), { timeout: 10_000, interval: 20 });
    const before = retention.stats().deleted_segments;
    await l.append(15); // one more rotation: the shipped segments before it are past max_segments
    await vi.waitFor(() => expect(retention.stats().deleted_segments).toBeGreaterThan(before), { timeout: 20_000, interval: 20 });
  });
});
