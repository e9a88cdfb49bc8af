// The audit trail as the facade shows it (fire/audit-api.ts): which log a runtime writes, and every
// read, status and gauge with the log off — AUDIT_DISABLED for reads, a status that says so, zeros.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { auditApi, auditGauges, auditOptionsOf, auditStatus, recordRefusedInstall } from "../../../src/fire/audit-api.js";
import { VcpError } from "../../../src/errors.js";
import { createAuditTrail, type AuditTrail } from "../../../src/fire/audit-trail.js";

describe("the audit log a runtime writes", () => {
  test("`audit` wins, `false` turns it off, else <dataDir>/audit/audit.jsonl with the redact keys, else none", () => {
    expect(auditOptionsOf({ audit: { path: "/x/a.jsonl" }, dataDir: "/d" })).toEqual({ path: "/x/a.jsonl" });
    expect(auditOptionsOf({ audit: false, dataDir: "/d" })).toBeUndefined();
    expect(auditOptionsOf({ dataDir: "/d", redactKeys: ["pin"] })).toEqual({ path: "/d/audit/audit.jsonl", redactKeys: ["pin"] });
    expect(auditOptionsOf({})).toBeUndefined();
  });
});

describe("with the log off", () => {
  test("reads are AUDIT_DISABLED; status says disabled; gauges are zero", async () => {
    const api = auditApi(undefined);
    await expect(api.audit.query({})).rejects.toMatchObject({ code: "AUDIT_DISABLED" });
    await expect(api.decisions.query({})).rejects.toMatchObject({ code: "AUDIT_DISABLED" });
    expect(() => api.audit.head()).toThrowError(expect.objectContaining({ code: "AUDIT_DISABLED" }));
    expect(auditStatus(undefined, "r1")).toEqual({ enabled: false, replica: null, head: null, pending: 0, lag_ms: 0, retention: null });
    expect(auditGauges(undefined)).toEqual({ auditLagMs: 0, auditPending: 0, auditWritten: 0, auditBytes: 0, auditWriteFailures: 0, auditRetention: null });
    await expect(recordRefusedInstall(undefined)({ bundle: "b", digest: undefined, error: new Error("x"), principal: { id: "ops" } })).resolves.toBeUndefined();
  });
});

describe("with a log", () => {
  test("a refused install is recorded with its code, message and details; an uncoded error as INTERNAL", async () => {
    const recorded: unknown[] = [];
    const trail = { recordBundleRefusal: async (r: unknown) => void recorded.push(r) } as unknown as AuditTrail;
    const record = recordRefusedInstall(trail);
    await record({ bundle: "b", digest: "sha256:1", error: new VcpError("EXEC_DISABLED", "no lane", { hook: "h" }), principal: { id: "ops" } });
    await record({ bundle: undefined, digest: undefined, error: "boom", principal: { id: "ops" } });
    expect(recorded).toEqual([
      { bundle: "b", digest: "sha256:1", principal: "ops", code: "EXEC_DISABLED", message: "no lane", details: { hook: "h" } },
      { bundle: undefined, digest: undefined, principal: "ops", code: "INTERNAL", message: "boom" },
    ]);
  });

  test("an install the shared store took but this replica's data directory did not is logged as not persisted, never as refused", async () => {
    const dir = mkdtempSync(join(tmpdir(), "vcp-audit-api-"));
    const trail = await createAuditTrail({ path: join(dir, "audit.jsonl"), fsync: "never" });
    try {
      const record = recordRefusedInstall(trail);
      await record({ bundle: "guard", digest: "sha256:2", error: new VcpError("PUBLISHED_NOT_PERSISTED", "bundle 'guard' 2.0.0 is live in the shared store …", { bundle: "guard" }), principal: { id: "ops" } });
      await record({ bundle: "guard", digest: "sha256:3", error: new VcpError("STORE_UNAVAILABLE", "redis down"), principal: { id: "ops" } });
      const records = (await trail.query({})).filter((r) => r.kind === "bundle");
      expect(records.map((r) => [r.event, r.status, (r.details as { code: string }).code, r.bundle_digest])).toEqual([
        ["bundle.not_persisted", "published", "PUBLISHED_NOT_PERSISTED", "sha256:2"],
        ["bundle.refused", "refused", "STORE_UNAVAILABLE", "sha256:3"],
      ]);
    } finally {
      await trail.writer.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("status names the replica and reads head, pending, lag and retention", () => {
    const trail = { head: () => ({ seq: 4, hash: "h" }), stats: () => ({ pending: 2, lagMs: 3, written: 9, bytes: 99, writeFailures: 1 }), retention: () => null } as unknown as AuditTrail;
    expect(auditStatus(trail, "r1")).toEqual({ enabled: true, replica: "r1", head: { seq: 4, hash: "h" }, pending: 2, lag_ms: 3, retention: null });
    expect(auditGauges(trail)).toEqual({ auditLagMs: 3, auditPending: 2, auditWritten: 9, auditBytes: 99, auditWriteFailures: 1, auditRetention: null });
  });
});
