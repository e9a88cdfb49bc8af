// One process per data directory and per audit log (src/store/pid-lock.ts): two runtimes writing
// one audit log interleave their hash chains. A second start fails naming the holder's pid; a stale
// lock (dead pid, or our own pid from a previous container start) is taken over; close releases it;
// a failed start releases it too.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { appendFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, test } from "vitest";
import { createRuntime } from "../../../src/index.js";
import { acquirePidLock, DATA_DIR_LOCK } from "../../../src/store/pid-lock.js";
import { VcpError } from "../../../src/errors.js";
import { createVmBackend } from "../../support/vm-backend.js";

const dirs: string[] = [];
const children: number[] = [];
afterEach(() => {
  for (const pid of children.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "vcp-lock-"));
  dirs.push(dir);
  return dir;
}

function writeLock(path: string, holder: Record<string, unknown> | string): void {
  writeFileSync(path, typeof holder === "string" ? holder : JSON.stringify(holder));
}

/** A pid that is not running: a child that already exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", ""]);
  return child.pid!;
}

function errorOf(run: () => unknown): VcpError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(VcpError);
    return err as VcpError;
  }
  throw new Error("expected an error");
}

async function asyncErrorOf(run: () => Promise<unknown>): Promise<VcpError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(VcpError);
    return err as VcpError;
  }
  throw new Error("expected an error");
}

describe("pid lock", () => {
  test("acquire writes our pid; a second acquire in this process is refused; release removes the file", () => {
    const lockPath = join(tempDir(), "x.lock");
    const lock = acquirePidLock(lockPath, "thing");
    expect(JSON.parse(readFileSync(lockPath, "utf8"))).toMatchObject({ pid: process.pid, host: hostname() });
    const err = errorOf(() => acquirePidLock(lockPath, "thing"));
    expect(err.code).toBe("DATA_DIR_LOCKED");
    expect(err.details).toMatchObject({ lock: lockPath, pid: process.pid });
    lock.release();
    expect(existsSync(lockPath)).toBe(false);
    lock.release(); // idempotent
    acquirePidLock(lockPath, "thing").release();
  });

  test("two copies of the lock module in one process (src and dist) still refuse each other", async () => {
    const lockPath = join(tempDir(), "x.lock");
    // A URL, not a literal specifier: the type-check runs before the build, when dist/ does not exist yet.
    const distModule = new URL("../../../dist/src/store/pid-lock.js", import.meta.url).href;
    const dist = (await import(distModule)) as typeof import("../../../src/store/pid-lock.js");
    const lock = acquirePidLock(lockPath, "thing");
    try {
      expect(() => dist.acquirePidLock(lockPath, "thing")).toThrow(expect.objectContaining({ code: "DATA_DIR_LOCKED" }));
    } finally {
      lock.release();
    }
  });

  test("a lock held by another live process is refused, naming its pid", async () => {
    const lockPath = join(tempDir(), "x.lock");
    const child = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"], { stdio: "ignore" });
    children.push(child.pid!);
    writeLock(lockPath, { pid: child.pid, host: hostname(), since: "2026-01-01T00:00:00.000Z" });
    const err = errorOf(() => acquirePidLock(lockPath, "data directory /x"));
    expect(err.code).toBe("DATA_DIR_LOCKED");
    expect(err.details).toMatchObject({ pid: child.pid, lock: lockPath });
    expect(err.message).toContain(`pid ${child.pid}`);
    expect(err.message).toContain("data directory /x");
    expect(JSON.parse(readFileSync(lockPath, "utf8")).pid).toBe(child.pid); // untouched
  });

  test.each([
    ["a dead pid", () => ({ pid: deadPid(), host: hostname(), since: "" })],
    ["our own pid, left by an earlier process with the same pid (containers)", () => ({ pid: process.pid, host: hostname(), since: "" })],
    ["an unreadable file", () => "garbage"],
  ])("a stale lock (%s) is taken over", (_name, holder) => {
    const lockPath = join(tempDir(), "x.lock");
    writeLock(lockPath, holder());
    const lock = acquirePidLock(lockPath, "thing");
    expect(JSON.parse(readFileSync(lockPath, "utf8")).pid).toBe(process.pid);
    lock.release();
  });

  test("a lock from another host is refused: its pid cannot be checked from here", () => {
    const lockPath = join(tempDir(), "x.lock");
    writeLock(lockPath, { pid: deadPid(), host: "some-other-host", since: "" });
    const err = errorOf(() => acquirePidLock(lockPath, "thing"));
    expect(err.code).toBe("DATA_DIR_LOCKED");
    expect(err.details).toMatchObject({ host: "some-other-host" });
  });
});

describe("runtime", () => {
  test("a second runtime on one data directory fails naming the pid; after close the directory is free", async () => {
    const dataDir = tempDir();
    const first = await createRuntime({ dataDir, backend: createVmBackend() });
    const err = await asyncErrorOf(() => createRuntime({ dataDir, backend: createVmBackend() }));
    expect(err.code).toBe("DATA_DIR_LOCKED");
    expect(err.message).toContain(`pid ${process.pid}`);
    await first.close();
    expect(existsSync(join(dataDir, DATA_DIR_LOCK))).toBe(false);
    const again = await createRuntime({ dataDir, backend: createVmBackend() });
    await again.close();
  });

  test("a second PROCESS on the data directory fails at start with DATA_DIR_LOCKED naming this process's pid", async () => {
    const dataDir = tempDir();
    const first = await createRuntime({ dataDir, backend: createVmBackend() });
    try {
      const index = fileURLToPath(new URL("../../../dist/src/index.js", import.meta.url));
      const script = `import(${JSON.stringify(index)}).then((m) => m.createRuntime({ dataDir: ${JSON.stringify(dataDir)} })).then(
        async (rt) => { await rt.close(); console.log("STARTED"); },
        (err) => { console.log(JSON.stringify({ code: err.code, message: err.message, details: err.details })); })`;
      const out = await new Promise<string>((resolve, reject) => {
        const child = spawn(process.execPath, ["--no-node-snapshot", "-e", script], { stdio: ["ignore", "pipe", "inherit"] });
        children.push(child.pid!);
        let text = "";
        child.stdout.on("data", (d: Buffer) => (text += d.toString()));
        child.on("error", reject);
        child.on("exit", () => resolve(text));
      });
      const result = JSON.parse(out.trim()) as { code: string; message: string; details: { pid: number } };
      expect(result.code).toBe("DATA_DIR_LOCKED");
      expect(result.details.pid).toBe(process.pid);
      expect(result.message).toContain(dataDir);
    } finally {
      await first.close();
    }
  });

  test("two data directories sharing one audit log: the second start is refused (the audit log has its own lock)", async () => {
    const shared = join(tempDir(), "audit.jsonl");
    const first = await createRuntime({ dataDir: tempDir(), audit: { path: shared }, backend: createVmBackend() });
    try {
      const err = await asyncErrorOf(() => createRuntime({ dataDir: tempDir(), audit: { path: shared }, backend: createVmBackend() }));
      expect(err.code).toBe("DATA_DIR_LOCKED");
      expect(err.message).toContain(`audit log ${shared}`);
    } finally {
      await first.close();
    }
  });

  test("a start refused by a broken audit tail names file and seq, and leaves the directory unlocked", async () => {
    const dataDir = tempDir();
    const first = await createRuntime({ dataDir, backend: createVmBackend() });
    await first.close();
    // Two records with seq 1: what two processes appending to a fresh log produce.
    const path = join(dataDir, "audit", "audit.jsonl");
    const { sealRecord, normalizeInput, GENESIS_HASH } = await import("../../../src/audit/record.js");
    const line = (session: string) => sealRecord(normalizeInput({ kind: "chain", session }), 1, GENESIS_HASH, new Date(0).toISOString()).line;
    await appendFile(path, line("from-process-1") + line("from-process-2"));
    const err = await asyncErrorOf(() => createRuntime({ dataDir, backend: createVmBackend() }));
    expect(err.code).toBe("AUDIT_LOG_CORRUPT");
    expect(err.details).toMatchObject({ file: path, seq: 2 });
    expect(existsSync(join(dataDir, DATA_DIR_LOCK))).toBe(false);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });
});
