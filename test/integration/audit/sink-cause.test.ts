// The decision-log sink says why a batch was not delivered in terms an operator can act on: the DNS
// error behind undici's "fetch failed", in its status (last_error) and in its log line.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test, vi } from "vitest";
import { openAuditLog, startAuditSink } from "../../../src/audit/index.js";

const dirs: string[] = [];
const open: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const o of open.splice(0).reverse()) await o.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

test("a receiver whose name does not resolve: the DNS error, not 'fetch failed'", async () => {
  const dir = mkdtempSync(join(tmpdir(), "vcp-sink-cause-"));
  dirs.push(dir);
  const path = join(dir, "audit.jsonl");
  const writer = await openAuditLog({ path, fsync: "never", rotateBytes: 1024 * 1024, maxPending: 100 });
  open.push(writer);
  await writer.append({ kind: "chain", session: "s", chain_id: "c-1", status: "completed" });
  const warnings: Array<Record<string, unknown>> = [];
  const logger = { debug() {}, info() {}, error() {}, warn: (fields: Record<string, unknown>) => void warnings.push(fields), isLevelEnabled: () => true, child() { return this; } };
  // `.invalid` never resolves (RFC 6761).
  const sink = startAuditSink({ path, url: "http://collector.invalid/v1/logs", cursorFile: join(dir, "sink.cursor"), intervalMs: 20, maxBackoffMs: 200, logger: logger as never });
  open.push(sink);
  await vi.waitFor(() => expect(sink.stats().failures).toBeGreaterThan(0), { timeout: 20_000, interval: 20 });
  // ENOTFOUND where a resolver answers; EAI_AGAIN where none is reachable: a getaddrinfo error either way.
  expect(sink.stats().last_error).toMatch(/^fetch failed: getaddrinfo (ENOTFOUND|EAI_AGAIN) collector\.invalid$/);
  expect(warnings[0]).toMatchObject({ error: sink.stats().last_error });
});
