/**
 * The per-chain audit budget (`audit.max_chain_bytes`, issue 24 "audit amplification"): one request
 * to ordinary rewriting policies (bench/lib/rewriters.ts) wrote 344 KB of audit against 3 KB for a
 * benign one, because only each hook's diff and annotations were capped. The chain's records
 * together now stay within the budget; what was cut is replaced by a coded marker, the log still
 * verifies, and the caller's answer is unchanged. Real sandbox (dist/ host).
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { createRuntime, type Runtime } from "../../../src/index.js";
import { verifyAuditLog, type AuditRecord } from "../../../src/audit/index.js";
import { constitution, makeContext, preInjectEvent } from "../../../bench/lib/fixtures.js";
import { amplifyingContext, REWRITERS } from "../../../bench/lib/rewriters.js";

const dirs: string[] = [];
const open: Runtime[] = [];
afterEach(async () => {
  for (const rt of open.splice(0)) await rt.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(maxChainBytes?: number): Promise<{ rt: Runtime; log: string }> {
  const dir = mkdtempSync(join(tmpdir(), "vcp-chain-budget-"));
  dirs.push(dir);
  const log = join(dir, "audit", "audit.jsonl");
  const rt = await createRuntime({
    dataDir: dir,
    requireSignatures: false,
    sandbox: { threads: 1 },
    ...(maxChainBytes !== undefined ? { audit: { path: log, maxChainBytes } } : {}),
  });
  open.push(rt);
  await rt.bundles.install(REWRITERS);
  return { rt, log };
}

/** The lines one chain wrote, and their bytes. */
function chainLines(log: string, chainId: string): { records: AuditRecord[]; bytes: number } {
  const lines = readFileSync(log, "utf8").split("\n").filter((l) => l !== "" && (JSON.parse(l) as AuditRecord).chain_id === chainId);
  return { records: lines.map((l) => JSON.parse(l) as AuditRecord), bytes: lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0) };
}

const fire = (rt: Runtime, context: Record<string, unknown>) => rt.fire("pre_inject", { context, constitution, event: preInjectEvent, session: { id: "amp" } });

describe("per-chain audit budget", { timeout: 120_000 }, () => {
  test("the worst request writes at most audit.max_chain_bytes (default 64 KiB), cut fields carry a coded marker, and the log verifies", async () => {
    const { rt, log } = await start();
    const benign = await fire(rt, makeContext(42, 2048));
    const worst = await fire(rt, amplifyingContext());
    // The answer does not depend on the audit budget: every hook's redaction applied.
    expect(worst.status).toBe("completed");
    expect(JSON.stringify(worst.context)).not.toContain("@example.org");
    expect(worst.hook_results.map((h) => h.status)).toEqual(["modify", "modify", "modify", "modify"]);

    const small = chainLines(log, benign.chain_id);
    const big = chainLines(log, worst.chain_id);
    expect(JSON.stringify(small.records)).not.toContain("_truncated");
    expect(big.bytes).toBeLessThanOrEqual(64 * 1024);
    const hooks = big.records.filter((r) => r.kind === "hook");
    expect(hooks).toHaveLength(4);
    const marked = hooks.filter((r) => JSON.stringify(r.modification ?? null).includes("AUDIT_TRUNCATED") || JSON.stringify(r.annotations ?? null).includes("AUDIT_TRUNCATED"));
    expect(marked.length).toBeGreaterThan(0);
    expect(marked[0]!.modification?.[0] ?? marked[0]!.annotations).toMatchObject({ _truncated: true, code: "AUDIT_TRUNCATED", cap: "audit_chain", limit: 65_536 });
    const chain = big.records.find((r) => r.kind === "chain")!;
    expect((chain.details as { audit_truncated?: unknown }).audit_truncated).toMatchObject({ limit: 65_536 });
    expect((await verifyAuditLog([log])).ok).toBe(true);
  });

  test("audit.max_chain_bytes is configurable, and a budget the records fit leaves them whole", async () => {
    const { rt, log } = await start(1024 * 1024);
    const worst = await fire(rt, amplifyingContext());
    const big = chainLines(log, worst.chain_id);
    expect(JSON.stringify(big.records)).not.toContain("_truncated");
    expect(big.bytes).toBeGreaterThan(200 * 1024);
  });
});
