/**
 * Issue 18, audit across replicas: three runtimes (one per replica, each with its own data directory)
 * write their own chains with their id in every record; each ships its log through the decision-log
 * sink to one receiver, which gets every replica's records and can re-verify each chain from what it
 * received; `verifyAuditLogSet` over the parent directory reports every replica; a replica restarted
 * on its data directory keeps its id and its chain.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test, vi } from "vitest";
import { createRuntime, startAuditSink, type AuditRecord, type AuditSink, type Runtime } from "../../../src/index.js";
import { verifyAuditLog, verifyAuditLogSet } from "../../../src/audit/index.js";
import { testBundle } from "../../support/bundles.js";
import { fireInput } from "../../support/fixtures.js";
import { createVmBackend } from "../../support/vm-backend.js";

const root = mkdtempSync(join(tmpdir(), "vcp-replica-audit-"));
const open: Array<{ close(): Promise<unknown> }> = [];
afterAll(async () => {
  for (const o of open.splice(0).reverse()) await o.close().catch(() => undefined);
  rmSync(root, { recursive: true, force: true });
});

/** A receiver taking JSON lines, keeping each record it got (repeats included: delivery is at least once). */
async function receiver(): Promise<{ url: string; records: AuditRecord[] }> {
  const records: AuditRecord[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      for (const line of body.split("\n").filter(Boolean)) records.push(JSON.parse(line) as AuditRecord);
      res.writeHead(200).end("{}");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  open.push({ close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }) });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ingest`, records };
}

async function startReplica(name: string, replicaId?: string): Promise<Runtime> {
  const rt = await createRuntime({ backend: createVmBackend(), dataDir: join(root, name), ...(replicaId !== undefined ? { replicaId } : {}) });
  await rt.bundles.install(testBundle("tagger", [{ name: "tag", type: "pre_inject", priority: 50 }], { tag: "function () { return { status: 'modify', modified_context: { tagged: true } }; }" }));
  return rt;
}

describe("audit across replicas", { timeout: 150_000 }, () => {
  test("every replica's records reach one receiver, each chain verifies there and on disk, per replica", async () => {
    const rx = await receiver();
    const replicas = [await startReplica("a", "vcp-a"), await startReplica("b"), await startReplica("c")];
    const ids = replicas.map((rt) => rt.status().audit.replica!);
    expect(ids[0]).toBe("vcp-a");
    expect(new Set(ids).size).toBe(3); // generated ids differ between replicas
    const sinks: AuditSink[] = ["a", "b", "c"].map((name) =>
      startAuditSink({ path: join(root, name, "audit", "audit.jsonl"), cursorFile: join(root, name, "audit", "sink.cursor"), url: rx.url, batchRecords: 5, intervalMs: 20, timeoutMs: 10_000, maxBackoffMs: 200 }),
    );
    open.push(...sinks);
    for (const [i, rt] of replicas.entries()) {
      for (let n = 0; n <= i; n++) await rt.fire("pre_inject", fireInput("pre_inject", { n }, `s-${i}-${n}`));
    }
    const heads = replicas.map((rt) => rt.audit.head().seq);
    await vi.waitFor(() => sinks.forEach((s, i) => expect(s.stats().cursor_seq).toBe(heads[i])), { timeout: 90_000, interval: 25 });

    // The receiver holds every replica's chain, whole: rebuilt per replica (first arrivals), it verifies.
    for (const [i, id] of ids.entries()) {
      const mine = new Map<number, AuditRecord>();
      for (const r of rx.records) if (r.replica === id && !mine.has(r.seq)) mine.set(r.seq, r);
      expect(mine.size, id).toBe(heads[i]);
      const file = join(root, `received-${i}.jsonl`);
      writeFileSync(file, [...mine.values()].sort((x, y) => x.seq - y.seq).map((r) => `${JSON.stringify(r)}\n`).join(""));
      expect(await verifyAuditLog([file]), id).toMatchObject({ ok: true, records: heads[i], replicas: [id] });
    }

    for (const s of sinks) await s.close();
    for (const rt of replicas) await rt.close();
    const set = await verifyAuditLogSet([root]);
    // The three data directories (the received-*.jsonl files beside them are not in a log directory).
    expect(set.logs.map((l) => [l.replica, l.verdict.ok, l.verdict.records])).toEqual(ids.map((id, i) => [id, true, heads[i]]));
    expect(set.ok).toBe(true);

    // b restarted on its data directory: the same id, the same chain continued.
    const again = await startReplica("b");
    open.push(again);
    expect(again.status().audit.replica).toBe(ids[1]);
    await again.fire("pre_inject", fireInput("pre_inject", { again: true }, "s-again"));
    await again.close();
    expect(await verifyAuditLog([join(root, "b", "audit", "audit.jsonl")])).toMatchObject({ ok: true, replicas: [ids[1]] });
  });
});
