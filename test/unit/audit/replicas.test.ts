/**
 * Issue 18: each replica keeps its own hash chain with its id in every record; a set of replica logs
 * is verified chain by chain and reported per replica; the OTLP export keeps replicas apart.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { openAuditLog, REPLICA_SET_EVENT, toOtlpLogs, verifyAuditLog, verifyAuditLogSet, type AuditRecord } from "../../../src/audit/index.js";
import { VcpError } from "../../../src/errors.js";
import { resolveReplicaId, REPLICA_ID_FILE } from "../../../src/store/replica-id.js";
import { hookRecord, options, readLines, writeLines } from "./helpers.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});
async function scratch(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "vcp-replicas-"));
  dirs.push(d);
  return d;
}

/** A data directory's log (`<dataDir>/audit/audit.jsonl`) holding `n` records written as `replica`. */
async function replicaLog(root: string, name: string, n: number, replica: string | null = name): Promise<string> {
  const path = join(root, name, "audit", "audit.jsonl");
  const log = await openAuditLog(options(path, replica === null ? {} : { replica }));
  for (let i = 0; i < n; i++) await log.append(hookRecord(i));
  await log.close();
  return path;
}

describe("the writer stamps the replica id", () => {
  test("every record carries it, a caller cannot set another, and the chain verifies naming it", async () => {
    const root = await scratch();
    const path = join(root, "audit.jsonl");
    const log = await openAuditLog(options(path, { replica: "vcp-0" }));
    await log.append({ ...hookRecord(0), replica: "forged" } as never);
    await log.append(hookRecord(1));
    await log.close();
    const records = (await readLines(path)).map((l) => JSON.parse(l) as AuditRecord);
    expect(records.map((r) => r.replica)).toEqual(["vcp-0", "vcp-0"]);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 2, replicas: ["vcp-0"] });
  });

  test("a log written before replicas had ids continues under an id and still verifies, naming it", async () => {
    const root = await scratch();
    const path = await replicaLog(root, "old", 3, null);
    expect(await verifyAuditLog([path])).toEqual(expect.objectContaining({ ok: true, records: 3 }));
    expect((await verifyAuditLog([path])).replicas).toBeUndefined();
    const log = await openAuditLog(options(path, { replica: "old-1" }));
    await log.append(hookRecord(3));
    await log.close();
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 4, replicas: ["old-1"] });
  });

  test("editing the replica id of a record is tampering like any other edit", async () => {
    const root = await scratch();
    const path = await replicaLog(root, "a", 4);
    const lines = await readLines(path);
    lines[1] = lines[1]!.replace('"replica":"a"', '"replica":"b"');
    await writeLines(path, lines);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: false, first_bad_seq: 2, reason: expect.stringMatching(/hash mismatch/) });
  });

  test("an id outside the replica-id alphabet is refused before anything is written", async () => {
    const root = await scratch();
    for (const bad of ["", "a/b", "has space", "line\nbreak", "x".repeat(129)]) {
      await expect(openAuditLog(options(join(root, "audit.jsonl"), { replica: bad }))).rejects.toMatchObject({ code: "INVALID_CONFIG", details: { field: "replica_id" } });
    }
  });
});

describe("verifyAuditLogSet: one verdict per replica chain", () => {
  test("data directories, a parent of them, and plain files name the same three chains", async () => {
    const root = await scratch();
    await replicaLog(root, "vcp-a", 3);
    await replicaLog(root, "vcp-b", 5);
    await replicaLog(root, "vcp-c", 1);
    const byParent = await verifyAuditLogSet([root]);
    expect(byParent.ok).toBe(true);
    expect(byParent.logs.map((l) => [l.replica, l.verdict.records])).toEqual([["vcp-a", 3], ["vcp-b", 5], ["vcp-c", 1]]);
    const byDirs = await verifyAuditLogSet([join(root, "vcp-c"), join(root, "vcp-a", "audit"), join(root, "vcp-b", "audit", "audit.jsonl")]);
    expect(byDirs.logs.map((l) => l.replica)).toEqual(["vcp-c", "vcp-a", "vcp-b"]);
    expect(byDirs.ok).toBe(true);
  });

  test("a broken chain fails the set and is named by its replica; the others still verify", async () => {
    const root = await scratch();
    await replicaLog(root, "vcp-a", 3);
    const b = await replicaLog(root, "vcp-b", 5);
    await replicaLog(root, "vcp-c", 2);
    const lines = await readLines(b);
    lines.splice(2, 1); // delete seq 3
    await writeLines(b, lines);
    const set = await verifyAuditLogSet([root]);
    expect(set.ok).toBe(false);
    expect(set.logs.map((l) => [l.replica, l.verdict.ok])).toEqual([["vcp-a", true], ["vcp-b", false], ["vcp-c", true]]);
    expect(set.logs[1]!.verdict).toMatchObject({ first_bad_seq: 3, reason: expect.stringMatching(/seq jumps from 2 to 4/) });
  });

  test("one replica id in two logs fails the set, naming both logs", async () => {
    const root = await scratch();
    await replicaLog(root, "one", 2, "same");
    await replicaLog(root, "two", 2, "same");
    const set = await verifyAuditLogSet([root]);
    expect(set.logs.every((l) => l.verdict.ok)).toBe(true);
    expect(set.ok).toBe(false);
    expect(set.problems).toEqual([expect.stringMatching(/replica id 'same' names records in 2 logs .*one.*two/)]);
  });

  test("rotated segments named one by one stay one chain; a directory without a log is a failure", async () => {
    const root = await scratch();
    const path = join(root, "r", "audit.jsonl");
    const log = await openAuditLog(options(path, { replica: "r", rotateBytes: 2048 }));
    for (let i = 0; i < 30; i++) await log.append(hookRecord(i));
    await log.close();
    const one = await verifyAuditLogSet([`${path}.000001`, `${path}.000002`]);
    expect(one.logs).toHaveLength(1);
    expect(one.logs[0]!.verdict.ok).toBe(true);
    const empty = join(root, "empty");
    await mkdir(empty);
    const none = await verifyAuditLogSet([empty]);
    expect(none.ok).toBe(false);
    expect(none.logs[0]!.verdict).toMatchObject({ ok: false, reason: expect.stringMatching(/no audit log at .*empty/) });
  });
});

describe("a replica log missing from the set (issue 27)", () => {
  /** A replica's log whose chain records the replica set `set` (as store/replica-set.ts does), then `n` records. */
  async function memberLog(root: string, name: string, set: string[], n = 2): Promise<string> {
    const path = join(root, name, "audit", "audit.jsonl");
    const log = await openAuditLog(options(path, { replica: name }));
    await log.append({ kind: "replica_set", event: REPLICA_SET_EVENT, details: { replicas: set, prefix: "vcp" } });
    for (let i = 0; i < n; i++) await log.append(hookRecord(i));
    await log.close();
    return path;
  }

  test("logs of 3 replicas, verified with 2: the set fails naming the missing one and the log and seq that name it", async () => {
    const root = await scratch();
    // A saw only itself at first, then B and C joined: the later record names them.
    const a = join(root, "A", "audit", "audit.jsonl");
    const logA = await openAuditLog(options(a, { replica: "A" }));
    await logA.append({ kind: "replica_set", event: REPLICA_SET_EVENT, details: { replicas: ["A"], prefix: "vcp" } });
    await logA.append(hookRecord(0));
    await logA.append({ kind: "replica_set", event: REPLICA_SET_EVENT, details: { replicas: ["A", "B", "C"], prefix: "vcp" } });
    await logA.close();
    await memberLog(root, "B", ["A", "B"]);
    await memberLog(root, "C", ["A", "B", "C"]);

    const all = await verifyAuditLogSet([join(root, "A"), join(root, "B"), join(root, "C")]);
    expect(all).toMatchObject({ ok: true, missing: [], problems: [] });

    const two = await verifyAuditLogSet([join(root, "A"), join(root, "B")]);
    expect(two.logs.every((l) => l.verdict.ok)).toBe(true);
    expect(two.ok).toBe(false);
    expect(two.missing).toEqual([{ replica: "C", named_by: { log: a, seq: 3 } }]);

  });

  test("one log alone is one chain's verify: the peers its set names are listed, not a failure", async () => {
    const root = await scratch();
    await memberLog(root, "A", ["A", "B"]);
    const one = await verifyAuditLogSet([join(root, "A")]);
    expect(one.ok).toBe(true);
    expect(one.missing.map((m) => m.replica)).toEqual(["B"]);
    expect(one.logs[0]!.verdict).toMatchObject({ ok: true, replica_set: [{ replica: "A", seq: 1 }, { replica: "B", seq: 1 }] });
  });

  test("a replica_set record edited to drop a replica is tampering like any other edit", async () => {
    const root = await scratch();
    const a = await memberLog(root, "A", ["A", "B", "C"]);
    await memberLog(root, "B", ["A", "B", "C"]);
    const lines = await readLines(a);
    lines[0] = lines[0]!.replace('"B","C"', '"B"');
    await writeLines(a, lines);
    const set = await verifyAuditLogSet([join(root, "A"), join(root, "B")]);
    expect(set.ok).toBe(false);
    expect(set.logs[0]!.verdict).toMatchObject({ ok: false, first_bad_seq: 1, reason: expect.stringMatching(/hash mismatch/) });
  });
});

describe("the replica id: explicit, else kept with the chain, else fresh per process", () => {
  test("generated once in the state directory and the same at every later start", async () => {
    const dir = await scratch();
    const first = resolveReplicaId({ dataDir: dir });
    expect(first).toMatch(/-[0-9a-f]{6}$/);
    expect((await readFile(join(dir, REPLICA_ID_FILE), "utf8")).trim()).toBe(first);
    expect(resolveReplicaId({ dataDir: dir })).toBe(first);
    expect(resolveReplicaId({ dataDir: await scratch() })).not.toBe(first); // another replica, another id
  });

  test("an explicit id wins and is checked; a damaged kept id is an error, never a silent new identity", async () => {
    const dir = await scratch();
    expect(resolveReplicaId({ explicit: "vcp-hooks-7d9f-abc12", dataDir: dir })).toBe("vcp-hooks-7d9f-abc12");
    expect(() => resolveReplicaId({ explicit: "no/slashes", dataDir: dir })).toThrow(VcpError);
    await writeFile(join(dir, REPLICA_ID_FILE), "bad id with spaces\n");
    expect(() => resolveReplicaId({ dataDir: dir })).toThrow(/replica-id: replica id 'bad id with spaces' must be/);
  });
});

test("OTLP export: one resource per replica, named by service.instance.id", () => {
  const record = (replica: string | undefined, seq: number): AuditRecord => ({ kind: "chain", seq, ts: "2026-11-26T06:00:00.000Z", prev: "p", hash: "h", ...(replica ? { replica } : {}) });
  const body = JSON.parse(toOtlpLogs([record("a", 1), record("b", 1), record("a", 2), record(undefined, 9)])) as {
    resourceLogs: Array<{ resource: { attributes: Array<{ key: string; value: { stringValue: string } }> }; scopeLogs: Array<{ logRecords: unknown[] }> }>;
  };
  const instance = (r: (typeof body.resourceLogs)[number]) => r.resource.attributes.find((a) => a.key === "service.instance.id")?.value.stringValue ?? null;
  expect(body.resourceLogs.map((r) => [instance(r), r.scopeLogs[0]!.logRecords.length])).toEqual([["a", 2], ["b", 1], [null, 1]]);
});
