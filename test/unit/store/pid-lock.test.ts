// acquireRuntimeLocks (store/pid-lock.ts): one runtime per data directory and per audit log. A start
// refused on the second lock leaves the first free; release frees both.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { acquirePidLock, acquireRuntimeLocks, DATA_DIR_LOCK } from "../../../src/store/pid-lock.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

test("both locks are taken (directories made first) and released together", () => {
  const root = mkdtempSync(join(tmpdir(), "vcp-rt-locks-"));
  dirs.push(root);
  const dataDir = join(root, "data");
  const auditPath = join(root, "logs", "audit.jsonl");
  const release = acquireRuntimeLocks({ dataDir, auditPath });
  expect(existsSync(join(dataDir, DATA_DIR_LOCK))).toBe(true);
  expect(existsSync(`${auditPath}.lock`)).toBe(true);
  release();
  expect(existsSync(join(dataDir, DATA_DIR_LOCK))).toBe(false);
  expect(existsSync(`${auditPath}.lock`)).toBe(false);
});

test("a refusal on the audit log's lock releases the data directory's", () => {
  const root = mkdtempSync(join(tmpdir(), "vcp-rt-locks-"));
  dirs.push(root);
  const auditPath = join(root, "audit.jsonl");
  const held = acquirePidLock(`${auditPath}.lock`, "audit log");
  try {
    expect(() => acquireRuntimeLocks({ dataDir: join(root, "data"), auditPath })).toThrowError(expect.objectContaining({ code: "DATA_DIR_LOCKED" }));
    expect(existsSync(join(root, "data", DATA_DIR_LOCK))).toBe(false);
  } finally {
    held.release();
  }
});
