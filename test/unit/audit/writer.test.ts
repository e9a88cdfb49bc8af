import { constants as fsConstants, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { appendFile, readdir, readFile, stat, truncate as truncateFile } from "node:fs/promises";
import { dirname } from "node:path";
import { describe, expect, test } from "vitest";
import { GENESIS_HASH, createRedactor, openAuditLog, recordHash, verifyAuditLog, type AuditRecordInput } from "../../../src/audit/index.js";
import { VcpError } from "../../../src/errors.js";
import { hookRecord, options, readLines, tempLogPath, writeLog } from "./helpers.js";

describe("audit writer", () => {
  test("append/verify round trip: records are hash-chained JSONL with the input fields", async () => {
    const path = await tempLogPath();
    const log = await openAuditLog(options(path, { now: () => Date.UTC(2026, 0, 2, 3, 4, 5) }));
    expect(log.head()).toEqual({ seq: 0, hash: GENESIS_HASH });
    const acks = await Promise.all([0, 1, 2].map((i) => log.append(hookRecord(i))));
    expect(acks.map((a) => a.seq)).toEqual([1, 2, 3]);
    expect(log.head()).toEqual(acks[2]);
    await log.close();

    const lines = await readLines(path);
    expect(lines).toHaveLength(3);
    const records = lines.map((l) => JSON.parse(l));
    expect(records[0]).toMatchObject({ seq: 1, ts: "2026-01-02T03:04:05.000Z", prev: GENESIS_HASH, ...hookRecord(0) });
    expect(records[1].prev).toBe(records[0].hash);
    expect(records[2].prev).toBe(records[1].hash);
    for (const [i, r] of records.entries()) {
      expect(r.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(recordHash(r)).toBe(r.hash);
      expect(acks[i]!.hash).toBe(r.hash);
    }
    expect(await verifyAuditLog([path])).toEqual({ ok: true, records: 3, head: acks[2] });
  });

  test("only the known input fields are recorded; seq/prev/hash cannot be injected", async () => {
    const path = await tempLogPath();
    const log = await openAuditLog(options(path));
    const sneaky = { ...hookRecord(0), seq: 99, prev: "sha256:evil", hash: "sha256:evil", context: { ssn: "123-45-6789" } } as AuditRecordInput;
    await log.append(sneaky);
    await log.close();
    const [record] = (await readLines(path)).map((l) => JSON.parse(l));
    expect(record.seq).toBe(1);
    expect(record.prev).toBe(GENESIS_HASH);
    expect(record.context).toBeUndefined();
    expect(JSON.stringify(record)).not.toContain("123-45-6789");
  });

  test("a record that is not JSON data is rejected without using a seq", async () => {
    const path = await tempLogPath();
    const log = await openAuditLog(options(path));
    const cyclic: any = { kind: "chain" };
    cyclic.details = { self: cyclic };
    await expect(log.append(cyclic)).rejects.toThrow();
    await expect(log.append({ kind: "bogus" } as never)).rejects.toThrow(/kind/);
    expect((await log.append({ kind: "chain", chain_id: "c1" })).seq).toBe(1);
    await log.close();
  });

  test("group commit: concurrent appends share writes and fsyncs (batch), not so with always", async () => {
    const batchPath = await tempLogPath();
    const batch = await openAuditLog(options(batchPath, { fsync: "batch" }));
    await Promise.all(Array.from({ length: 200 }, (_, i) => batch.append(hookRecord(i))));
    const b = batch.stats();
    await batch.close();
    expect(b.written).toBe(200);
    expect(b.fsyncs).toBe(b.batches);
    expect(b.batches).toBeLessThan(20);

    const alwaysPath = await tempLogPath();
    const always = await openAuditLog(options(alwaysPath, { fsync: "always" }));
    await Promise.all(Array.from({ length: 50 }, (_, i) => always.append(hookRecord(i))));
    const a = always.stats();
    await always.close();
    expect(a).toMatchObject({ written: 50, batches: 50, fsyncs: 50, pending: 0 });
    expect((await verifyAuditLog([alwaysPath])).ok).toBe(true);
  });

  // Linux: the batch's write is its sync (O_DSYNC), so an acknowledged record is durable without a
  // separate fdatasync; `never` must not pay for it. Read from the kernel's view of the open file.
  test.runIf(process.platform === "linux")("the live file is opened O_DSYNC unless fsync is never, after a rotation too", async () => {
    const openFlags = (path: string): number[] => {
      const flags: number[] = [];
      for (const fd of readdirSync("/proc/self/fd")) {
        let target: string;
        try {
          target = readlinkSync(`/proc/self/fd/${fd}`);
        } catch {
          continue; // closed since the listing
        }
        if (target !== path) continue;
        const line = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, "utf8"))?.[1];
        if (line !== undefined) flags.push(Number.parseInt(line, 8));
      }
      return flags;
    };
    const dsync = fsConstants.O_DSYNC;
    for (const fsync of ["batch", "always", "never"] as const) {
      const path = await tempLogPath();
      const log = await openAuditLog(options(path, { fsync, rotateBytes: 4096 }));
      // One at a time: each its own batch, so the 4 KiB files rotate between them.
      for (let i = 0; i < 40; i++) await log.append(hookRecord(i));
      expect(log.stats().rotations).toBeGreaterThan(0);
      const flags = openFlags(path);
      expect(flags).toHaveLength(1);
      expect((flags[0]! & dsync) !== 0, `fsync ${fsync}`).toBe(fsync !== "never");
      expect(flags[0]! & fsConstants.O_APPEND).not.toBe(0);
      expect(log.stats()).toMatchObject({ written: 40, writeFailures: 0 });
      expect(log.stats().fsyncs).toBe(fsync === "never" ? 0 : log.stats().batches);
      await log.close();
      expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 40, head: { seq: 40 } });
    }
  });

  test("a group-commit window: the next batch waits out the window, and records appended meanwhile join it", async () => {
    const path = await tempLogPath();
    let acknowledged = 0;
    const appends: Array<Promise<unknown>> = [];
    const append = (i: number) => appends.push(log.append(hookRecord(i)).then(() => acknowledged++));
    // Long enough that the appends below (one per event-loop turn) all fall inside it even on a busy machine.
    // Record 1 arrives while the first batch is being synced: without the window it would be written
    // as soon as that batch is done, alone.
    const log = await openAuditLog(options(path, { flushIntervalMs: 1000, onSync: () => void (appends.length === 0 && append(1)) }));
    await log.append(hookRecord(0));
    expect(appends).toHaveLength(1);
    for (let i = 2; i <= 10; i++) {
      append(i);
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(acknowledged).toBe(0);
    expect(await readLines(path)).toHaveLength(1);
    await Promise.all(appends);
    expect(log.stats()).toMatchObject({ written: 11, batches: 2, fsyncs: 2, pending: 0 });
    await log.close();
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 11 });
  });

  test("a group-commit window adds no wait to a writer that was idle for longer than the window", async () => {
    const path = await tempLogPath();
    // A minute: were the first record held for the window, this append would outlive the test's timeout.
    const log = await openAuditLog(options(path, { flushIntervalMs: 60_000 }));
    expect((await log.append(hookRecord(0))).seq).toBe(1);
    expect(await readLines(path)).toHaveLength(1);
    await log.close();
  });

  test("an append resolves only after its record is in the file", async () => {
    const path = await tempLogPath();
    const log = await openAuditLog(options(path));
    for (let i = 0; i < 5; i++) {
      const { seq } = await log.append(hookRecord(i));
      const lines = await readLines(path);
      expect(lines).toHaveLength(seq);
      expect(JSON.parse(lines[seq - 1]!).seq).toBe(seq);
    }
    await log.close();
  });

  test("backpressure: with maxPending 1, many concurrent appends all land, in call order", async () => {
    const path = await tempLogPath();
    const log = await openAuditLog(options(path, { maxPending: 1 }));
    let maxPendingSeen = 0;
    const acks = Array.from({ length: 300 }, (_, i) => {
      const p = log.append({ kind: "chain", chain_id: `c${i}` });
      maxPendingSeen = Math.max(maxPendingSeen, log.stats().pending);
      return p;
    });
    expect(maxPendingSeen).toBe(300); // queued, none dropped
    const results = await Promise.all(acks);
    expect(results.map((r) => r.seq)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    const s = log.stats();
    expect(s).toMatchObject({ written: 300, pending: 0, lagMs: 0 });
    expect(s.batches).toBe(300); // one record admitted at a time
    await log.close();
    const records = (await readLines(path)).map((l) => JSON.parse(l));
    expect(records.map((r) => r.chain_id)).toEqual(Array.from({ length: 300 }, (_, i) => `c${i}`));
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 300 });
  });

  test("appendMany gives consecutive seqs; flush waits for everything appended before it", async () => {
    const path = await tempLogPath();
    const log = await openAuditLog(options(path, { maxPending: 3, flushIntervalMs: 5 }));
    const many = log.appendMany(Array.from({ length: 10 }, (_, i) => hookRecord(i)));
    const single = log.append({ kind: "registry", event: "hook.registered", hook: "x" });
    await log.flush();
    expect(log.head().seq).toBe(11);
    expect((await many).map((r) => r.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect((await single).seq).toBe(11);
    await log.close();
  });

  test("appendMany: a record that cannot be written rejects the call; the others are written, in order", async () => {
    const path = await tempLogPath();
    const log = await openAuditLog(options(path));
    const bad = { kind: "nope" } as unknown as AuditRecordInput;
    await expect(log.appendMany([hookRecord(0), bad, hookRecord(2)])).rejects.toThrow(/kind must be/);
    await expect(log.appendMany([])).resolves.toEqual([]);
    await log.flush();
    await log.close();
    expect((await readLines(path)).map((l) => (JSON.parse(l) as { seq: number; hook: string }).hook)).toEqual([hookRecord(0).hook, hookRecord(2).hook]);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 2 });
  });

  test("resume after reopen continues seq and prev", async () => {
    const path = await tempLogPath();
    await writeLog(path, 5);
    const again = await openAuditLog(options(path));
    expect(again.recovery).toBeNull();
    expect(again.head().seq).toBe(5);
    const lastBefore = JSON.parse((await readLines(path))[4]!);
    expect(again.head().hash).toBe(lastBefore.hash);
    const ack = await again.append(hookRecord(5));
    expect(ack.seq).toBe(6);
    await again.close();
    const sixth = JSON.parse((await readLines(path))[5]!);
    expect(sixth.prev).toBe(lastBefore.hash);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 6 });
  });

  test("reopen after a crash cuts off a torn final line, then the chain continues", async () => {
    const path = await tempLogPath();
    await writeLog(path, 4);
    const full = await stat(path);
    const torn = '{"seq":5,"ts":"2026-01-01T00:00:00.000Z","kind":"ho';
    await appendFile(path, torn);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 4, torn_tail: true });
    const log = await openAuditLog(options(path));
    expect(log.recovery).toEqual({ truncated_bytes: Buffer.byteLength(torn) });
    expect((await stat(path)).size).toBe(full.size);
    expect(log.head().seq).toBe(4);
    expect((await log.append(hookRecord(4))).seq).toBe(5);
    await log.close();
    expect(await verifyAuditLog([path])).toEqual({ ok: true, records: 5, head: expect.objectContaining({ seq: 5 }) });
  });

  test("reopen refuses to continue a log whose last record fails its hash", async () => {
    const path = await tempLogPath();
    await writeLog(path, 3);
    const lines = await readLines(path);
    const text = (await readFile(path, "utf8")).replace(lines[2]!, lines[2]!.replace('"status":"continue"', '"status":"abort"'));
    await (await import("node:fs/promises")).writeFile(path, text);
    await expect(openAuditLog(options(path))).rejects.toThrow(/fails its hash/);
  });

  test("rotation renames to ordered segments, keeps the chain across files, and verify spans them", async () => {
    const path = await tempLogPath();
    const log = await openAuditLog(options(path, { rotateBytes: 2048, maxPending: 4 }));
    for (let i = 0; i < 60; i++) await log.append(hookRecord(i));
    expect(log.stats().rotations).toBeGreaterThanOrEqual(3);
    await log.close();
    const names = (await readdir(dirname(path))).sort();
    expect(names[0]).toBe("audit.jsonl");
    expect(names.slice(1)).toEqual(names.slice(1).map((_, i) => `audit.jsonl.${String(i + 1).padStart(6, "0")}`));
    for (const name of names) expect((await stat(`${dirname(path)}/${name}`)).size).toBeLessThanOrEqual(2048);
    // Each file's first record chains to the previous file's last.
    const seg1 = (await readLines(`${path}.000001`)).map((l) => JSON.parse(l));
    const seg2 = (await readLines(`${path}.000002`)).map((l) => JSON.parse(l));
    expect(seg2[0].prev).toBe(seg1.at(-1).hash);
    expect(seg2[0].seq).toBe(seg1.at(-1).seq + 1);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 60, head: { seq: 60 } });
    // Reopen resumes from the live file, and from the newest segment when the live file is empty.
    const again = await openAuditLog(options(path, { rotateBytes: 2048 }));
    expect(again.head().seq).toBe(60);
    await again.close();
  });

  test("reopen resumes from the newest segment when the live file is missing (crash right after rename)", async () => {
    const path = await tempLogPath();
    await writeLog(path, 10);
    const { rename } = await import("node:fs/promises");
    await rename(path, `${path}.000001`);
    const log = await openAuditLog(options(path));
    expect(log.head().seq).toBe(10);
    await log.append(hookRecord(10));
    await log.close();
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 11 });
  });

  test("redaction runs before hashing and before the size cap", async () => {
    const path = await tempLogPath();
    const redact = createRedactor({ keys: ["password"] });
    const log = await openAuditLog(options(path, { redact, maxFieldBytes: 256 }));
    await log.append({
      kind: "hook",
      annotations: { password: "hunter2", note: "token Bearer abc.def.ghi" },
      modification: [{ op: "add", path: "/auth", value: "sk-abcdefghijklmnop1234" }],
      details: { blob: "x".repeat(1000) },
    });
    await log.close();
    const line = (await readLines(path))[0]!;
    expect(line).not.toMatch(/hunter2|abc\.def|sk-abcdef/);
    const record = JSON.parse(line);
    expect(record.annotations).toEqual({ password: "[REDACTED]", note: "token Bearer [REDACTED]" });
    expect(record.details).toMatchObject({ truncated: true, bytes: expect.any(Number), hash: expect.stringMatching(/^sha256:/) });
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true });
  });

  test("invalid options name the field; a path is opened by one writer at a time; closed writers refuse appends", async () => {
    const path = await tempLogPath();
    await expect(openAuditLog({ ...options(path), maxPending: 0 })).rejects.toMatchObject({ code: "INVALID_CONFIG", details: { field: "audit.max_pending" } });
    await expect(openAuditLog({ ...options(path), fsync: "sometimes" as never })).rejects.toBeInstanceOf(VcpError);
    const log = await openAuditLog(options(path));
    await expect(openAuditLog(options(path))).rejects.toThrow(/already open/);
    await log.close();
    await expect(log.append(hookRecord(0))).rejects.toThrow(/closed/);
    const again = await openAuditLog(options(path));
    await again.close();
  });

  test("a failed write rejects the pending appends and poisons the writer", async () => {
    const path = await tempLogPath();
    const log = await openAuditLog(options(path));
    await log.append(hookRecord(0));
    // Sabotage: close the descriptor underneath the writer.
    await (log as unknown as { fd: { close(): Promise<void> } }).fd.close();
    await expect(log.append(hookRecord(1))).rejects.toThrow(/seq 2 were not acknowledged/);
    await expect(log.append(hookRecord(2))).rejects.toThrow(/write failed/);
    await log.close();
    await truncateFile(path, (await stat(path)).size); // file untouched and still valid
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 1 });
  });
});
