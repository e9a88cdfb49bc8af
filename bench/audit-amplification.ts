/**
 * Audit bytes one request writes (issue 24, "audit amplification"): a benign pre_inject request and
 * the worst one a client can send to the same ordinary policies — four deployment hooks that each
 * rewrite part of the context (PII redaction, whitespace clean-up) and annotate what they did, as
 * policies/strip-pii does. The client controls only the input; the worst input makes every hook's
 * diff and annotations land just under their per-hook caps (64 KiB each), which nothing bounded per
 * chain. Prints the bytes each request appended to the audit log, the ratio, and whether the log
 * still verifies.
 *
 *   node dist/bench/audit-amplification.js [--max-chain-bytes N]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createRuntime } from "../src/index.js";
import { verifyAuditLog } from "../src/audit/index.js";
import { constitution, makeContext, preInjectEvent } from "./lib/fixtures.js";
import { amplifyingContext, REWRITERS } from "./lib/rewriters.js";

const { values } = parseArgs({ options: { "max-chain-bytes": { type: "string" } } });

const dir = mkdtempSync(join(tmpdir(), "vcp-audit-amp-"));
try {
  const maxChainBytes = values["max-chain-bytes"] !== undefined ? Number(values["max-chain-bytes"]) : undefined;
  const runtime = await createRuntime({
    dataDir: dir,
    requireSignatures: false,
    sandbox: { threads: 1 },
    ...(maxChainBytes !== undefined ? { audit: { path: join(dir, "audit", "audit.jsonl"), maxChainBytes } } : {}),
  } as Parameters<typeof createRuntime>[0]);
  const log = join(dir, "audit", "audit.jsonl");
  try {
    await runtime.bundles.install(REWRITERS);
    const size = () => statSync(log, { throwIfNoEntry: false })?.size ?? 0;
    const fire = async (context: Record<string, unknown>): Promise<number> => {
      const before = size();
      await runtime.fire("pre_inject", { context, constitution, event: preInjectEvent, session: { id: "amp" } });
      return size() - before;
    };
    const benign = await fire(makeContext(42, 2048));
    const worstContext = amplifyingContext();
    const worst = await fire(worstContext);
    const verdict = await verifyAuditLog([log]);
    process.stdout.write(`audit bytes per request (audit.max_chain_bytes ${maxChainBytes ?? "default"})\n`);
    process.stdout.write(`  benign request   ${String(benign).padStart(9)} B\n`);
    process.stdout.write(`  worst request    ${String(worst).padStart(9)} B   (${(worst / benign).toFixed(0)}× benign)\n`);
    process.stdout.write(`  input bytes      ${String(JSON.stringify(worstContext).length).padStart(9)} B\n`);
    process.stdout.write(`  audit verify     ${verdict.ok ? "ok" : JSON.stringify(verdict)}\n`);
  } finally {
    await runtime.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
