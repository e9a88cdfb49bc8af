// queryDecisions (src/audit/decisions.ts): decision records read back newest first across rotated
// segments, with filters, a cursor, a bound on bytes read, and a half-written last line left alone.
import { appendFile } from "node:fs/promises";
import { describe, expect, test } from "vitest";
import { capChainAudit, openAuditLog, queryDecisions, type AuditRecordInput } from "../../../src/audit/index.js";
import type { DecisionRecord } from "../../../src/index.js";
import { hookRecord, options, tempLogPath } from "./helpers.js";

function decision(i: number, extra: Partial<DecisionRecord> = {}): DecisionRecord {
  return {
    chain_id: `c${i}`,
    at: new Date(Date.UTC(2026, 10, 28, 9, 0, i)).toISOString(),
    profile: i % 2 === 0 ? "gemini-cli" : "vcp",
    event: i % 2 === 0 ? "BeforeTool" : "pre_inject",
    outcome: i % 3 === 0 ? "block" : "allow",
    errors: 0,
    decided_by: i % 3 === 0 ? { hook: "guard", bundle: "safe-shell", revision: null } : null,
    reason: i % 3 === 0 ? `blocked ${i}` : null,
    subject: { kind: "tool", tool: "run_shell_command", command: `cmd-${i}`, summary: `run_shell_command: cmd-${i}` },
    hooks: [{ hook: "guard", bundle: i % 2 === 0 ? "safe-shell" : "other", outcome: "ok", duration_ms: 1 }],
    changes: [],
    session: `s${i % 4}`,
    client: i % 2 === 0 ? "app" : "other",
    ...extra,
  };
}

const chainRecord = (d: DecisionRecord): AuditRecordInput => ({ kind: "chain", session: d.session ?? "", chain_id: d.chain_id, status: "completed", decision: d, details: { hooks: 1 } });

/** A log of `n` chains (one hook record and one chain record each), rotated every `rotateBytes`. */
async function logOf(n: number, rotateBytes = 1 << 30): Promise<string> {
  const path = await tempLogPath();
  const log = await openAuditLog(options(path, { rotateBytes }));
  for (let i = 0; i < n; i++) await log.appendMany([hookRecord(i), chainRecord(decision(i))]);
  await log.close();
  return path;
}

const ids = (page: { decisions: DecisionRecord[] }) => page.decisions.map((d) => d.chain_id);

describe("queryDecisions", () => {
  test("newest first, across rotated segments, and a cursor walks every page without repeats or gaps", async () => {
    const path = await logOf(40, 2048);
    const all: string[] = [];
    let beforeSeq: number | undefined;
    let pages = 0;
    for (;;) {
      const page = await queryDecisions(path, { limit: 7, ...(beforeSeq !== undefined ? { beforeSeq } : {}) });
      all.push(...ids(page));
      pages++;
      if (page.nextBeforeSeq === null) break;
      beforeSeq = page.nextBeforeSeq;
    }
    expect(all).toEqual(Array.from({ length: 40 }, (_, i) => `c${39 - i}`));
    expect(pages).toBe(6);
  });

  test("filters: client (tenant scope), outcome, profile, event, bundle, hook, session, subject, since and until", async () => {
    const path = await logOf(12);
    expect(ids(await queryDecisions(path, { client: "other" }))).toEqual(["c11", "c9", "c7", "c5", "c3", "c1"]);
    expect(ids(await queryDecisions(path, { outcome: "block" }))).toEqual(["c9", "c6", "c3", "c0"]);
    expect(ids(await queryDecisions(path, { profile: "vcp", event: "pre_inject", outcome: "block" }))).toEqual(["c9", "c3"]);
    expect(ids(await queryDecisions(path, { bundle: "other" }))).toEqual(["c11", "c9", "c7", "c5", "c3", "c1"]);
    expect(ids(await queryDecisions(path, { bundle: "safe-shell", client: "other" }))).toEqual(["c9", "c3"]);
    expect(ids(await queryDecisions(path, { hook: "nope" }))).toEqual([]);
    expect(ids(await queryDecisions(path, { session: "s1" }))).toEqual(["c9", "c5", "c1"]);
    expect(ids(await queryDecisions(path, { subject: "CMD-1" }))).toEqual(["c11", "c10", "c1"]);
    const at = (i: number) => Date.UTC(2026, 10, 28, 9, 0, i);
    expect(ids(await queryDecisions(path, { since: at(3), until: at(5) }))).toEqual(["c5", "c4", "c3"]);
  });

  test("a record admitted before `since` ends the scan (older records cannot match)", async () => {
    const path = await logOf(5);
    const page = await queryDecisions(path, { since: Date.now() + 60_000 });
    expect(page).toEqual({ decisions: [], nextBeforeSeq: null });
  });

  test("a request reads at most maxScanBytes: a short page with a cursor to go on from, and no record lost", async () => {
    const path = await logOf(200, 16 * 1024);
    const first = await queryDecisions(path, { limit: 1000, maxScanBytes: 20 * 1024 });
    expect(first.decisions.length).toBeGreaterThan(0);
    expect(first.decisions.length).toBeLessThan(200);
    expect(first.nextBeforeSeq).not.toBeNull();
    const seen = ids(first);
    let beforeSeq = first.nextBeforeSeq;
    while (beforeSeq !== null) {
      const page = await queryDecisions(path, { limit: 1000, maxScanBytes: 20 * 1024, beforeSeq });
      seen.push(...ids(page));
      beforeSeq = page.nextBeforeSeq;
    }
    expect(seen).toEqual(Array.from({ length: 200 }, (_, i) => `c${199 - i}`));
  });

  test("a half-written last line is left out; a missing log is empty", async () => {
    const path = await logOf(3);
    await appendFile(path, `{"seq":7,"ts":"2026-11-28T09:00:00.000Z","kind":"chain","decision":{"chain_id":"half`);
    expect(ids(await queryDecisions(path, {}))).toEqual(["c2", "c1", "c0"]);
    expect(await queryDecisions(`${path}.missing`, {})).toEqual({ decisions: [], nextBeforeSeq: null });
  });

  test("over audit.max_chain_bytes the decision keeps its verdict: hook reasons go first, then the hook list and changes (counted)", () => {
    const hooks = Array.from({ length: 60 }, (_, i) => ({ hook: `h${i}`, bundle: "b", outcome: "ok" as const, duration_ms: 1, reason: "r".repeat(250) }));
    const d = decision(0, { hooks, changes: Array.from({ length: 64 }, (_, i) => ({ hook: "h0", op: "replace" as const, path: `/tool_input/f${i}` })) });
    const record = chainRecord(d);
    const full = Buffer.byteLength(JSON.stringify(record)) + 320;
    // Just over the budget: the per-hook reasons are enough.
    const mild = capChainAudit([record], full - 1000)[0]!.decision as DecisionRecord;
    expect(mild.hooks).toHaveLength(60);
    expect(mild.hooks.every((h) => h.reason === undefined)).toBe(true);
    expect(mild.changes).toHaveLength(64);
    // Far over it: the lists go, counted; the verdict, decisive hook, reason and subject stay.
    const tight = capChainAudit([record], 4096)[0]!.decision as DecisionRecord & { hooks_omitted?: number; changes_omitted?: number };
    expect(tight).toMatchObject({ outcome: "block", decided_by: d.decided_by, reason: "blocked 0", subject: d.subject, hooks: [], hooks_omitted: 60, changes: [], changes_omitted: 64 });
  });
});

describe("the audit export", () => {
  test("JSON lines carry the decision as stored; an OTLP chain record says what was decided about what", async () => {
    const { toJsonLines, toOtlpLogs } = await import("../../../src/audit/index.js");
    const path = await logOf(1);
    const { readAuditRecords } = await import("../../../src/audit/index.js");
    const records = [];
    for await (const r of readAuditRecords(path)) records.push(r);
    const chain = records.find((r) => r.kind === "chain")!;
    expect(JSON.parse(toJsonLines([chain])).decision).toEqual(decision(0));
    const otlp = JSON.parse(toOtlpLogs([chain]));
    const log = otlp.resourceLogs[0].scopeLogs[0].logRecords[0];
    expect(log.body.stringValue).toBe("chain gemini-cli BeforeTool block: run_shell_command: cmd-0");
    const attribute = log.attributes.find((a: { key: string }) => a.key === "vcp.decision");
    expect(JSON.parse(attribute.value.stringValue)).toEqual(decision(0));
  });
});
