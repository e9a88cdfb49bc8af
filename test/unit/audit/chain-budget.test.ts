// capChainAudit (src/audit/chain-budget.ts): a chain's records within audit.max_chain_bytes.
import { describe, expect, test } from "vitest";
import { capChainAudit, type AuditRecordInput } from "../../../src/audit/index.js";

const hook = (i: number, extra: Partial<AuditRecordInput>): AuditRecordInput => ({ kind: "hook", session: "s", chain_id: "c", hook: `h${i}`, status: "abort", outcome: "ok", ...extra });
const chain: AuditRecordInput = { kind: "chain", session: "s", chain_id: "c", status: "aborted", details: { aborted_by: "h0", hooks: 40 } };
const bytes = (records: AuditRecordInput[]) => records.reduce((n, r) => n + Buffer.byteLength(JSON.stringify(r)) + 320, 0);

describe("capChainAudit", () => {
  test("records within the budget are handed back as they are", () => {
    const records = [hook(0, { annotations: { a: 1 } }), chain];
    expect(capChainAudit(records, 65_536)).toBe(records);
  });

  test("40 hooks with long reasons and errors: details become markers that keep the reason's start and the error code", () => {
    const records = [...Array.from({ length: 40 }, (_, i) => hook(i, { details: { reason: `blocked ${i} ${"r".repeat(4000)}`, error: { code: "HOOK_FAILED", message: "m".repeat(1000) } } })), chain];
    expect(bytes(records)).toBeGreaterThan(190_000);
    const out = capChainAudit(records, 65_536);
    expect(bytes(out)).toBeLessThanOrEqual(65_536);
    expect(out).toHaveLength(41);
    const cut = out.find((r) => (r.details as { _truncated?: boolean })._truncated === true)!;
    expect(cut.details).toMatchObject({ _truncated: true, code: "AUDIT_TRUNCATED", cap: "audit_chain", limit: 65_536, error_code: "HOOK_FAILED" });
    expect((cut.details as { reason: string }).reason).toMatch(/^blocked \d+ r+…$/);
    expect((out[40]!.details as { audit_truncated: { fields: number } }).audit_truncated.fields).toBeGreaterThan(0);
    expect(out[40]!.details).toMatchObject({ aborted_by: "h0", hooks: 40 });
    // The caller's records are not changed.
    expect(JSON.stringify(records)).not.toContain("_truncated");
  });
});
