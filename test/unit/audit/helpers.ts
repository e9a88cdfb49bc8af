import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach } from "vitest";
import { openAuditLog, type AuditRecordInput, type AuditWriterOptions } from "../../../src/audit/index.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

export async function tempLogPath(name = "audit.jsonl"): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "vcp-audit-"));
  dirs.push(dir);
  return join(dir, "nested", name);
}

export const hookRecord = (i: number): AuditRecordInput => ({
  kind: "hook",
  session: "s1",
  chain_id: `c${Math.floor(i / 3)}`,
  hook: `hook_${i % 3}`,
  hook_type: "pre_inject",
  scope: "deployment",
  bundle: "strip-pii",
  bundle_digest: `sha256:${"ab".repeat(32)}`,
  input_hash: `sha256:${String(i).padStart(64, "0")}`,
  status: "continue",
  outcome: "ok",
  duration_ms: 0.25 + i,
});

export function options(path: string, extra: Partial<AuditWriterOptions> = {}): AuditWriterOptions {
  return { path, fsync: "batch", rotateBytes: 1 << 30, maxPending: 10_000, ...extra };
}

/** Write `n` records and close; returns the path. */
export async function writeLog(path: string, n: number, extra: Partial<AuditWriterOptions> = {}): Promise<string> {
  const log = await openAuditLog(options(path, extra));
  await Promise.all(Array.from({ length: n }, (_, i) => log.append(hookRecord(i))));
  await log.close();
  return path;
}

export async function readLines(path: string): Promise<string[]> {
  const text = await readFile(path, "utf8");
  return text.split("\n").filter((l, i, all) => i < all.length - 1 || l.length > 0);
}

export async function writeLines(path: string, lines: string[]): Promise<void> {
  await writeFile(path, lines.map((l) => `${l}\n`).join(""));
}
