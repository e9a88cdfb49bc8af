import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, "fixtures", "crash-writer.mjs");
const DIST = join(here, "..", "..", "..", "dist", "src", "audit", "index.js");

type AuditModule = typeof import("../../../src/audit/index.js");
let audit: AuditModule;
let dir: string;

beforeAll(async () => {
  if (!existsSync(DIST)) throw new Error(`${DIST} is missing: run \`npx tsc -p tsconfig.json\` (npm test builds first)`);
  audit = (await import(DIST)) as AuditModule;
  dir = await mkdtemp(join(tmpdir(), "vcp-audit-crash-"));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/**
 * Run the writer child until it has acknowledged `minAcks` records (plus a random extra delay so
 * the kill lands at varying points), SIGKILL it, and return the seqs it printed as acknowledged.
 */
async function runAndKill(path: string, minAcks: number, fsync = "batch"): Promise<{ acked: number[]; ready: string }> {
  const child = spawn(process.execPath, [FIXTURE, path, "16384", fsync], { stdio: ["ignore", "pipe", "pipe"] });
  const acked: number[] = [];
  let ready = "";
  let stderr = "";
  let buffered = "";
  let killed = false;
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child.on("close", (code, signal) => resolve(signal ?? code)));
  child.stdout.on("data", (d: Buffer) => {
    buffered += d.toString();
    let nl: number;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.startsWith("ready")) ready = line;
      else if (line.startsWith("ack ")) acked.push(Number(line.slice(4)));
    }
    if (!killed && acked.length >= minAcks) {
      killed = true;
      setTimeout(() => child.kill("SIGKILL"), Math.floor(Math.random() * 5));
    }
  });
  const how = await exited;
  expect(how, `child ended by ${String(how)} instead of SIGKILL; stderr: ${stderr}`).toBe("SIGKILL");
  return { acked, ready };
}

async function seqsOnDisk(path: string): Promise<Set<number>> {
  const files = [...(await audit.listSegments(path)).map((s) => s.path), ...(existsSync(path) ? [path] : [])];
  const seqs = new Set<number>();
  for (const file of files) {
    for (const line of (await readFile(file, "utf8")).split("\n")) {
      if (!line) continue;
      try {
        seqs.add((JSON.parse(line) as { seq: number }).seq);
      } catch {
        // a torn final line; verify decides whether that is acceptable
      }
    }
  }
  return seqs;
}

describe("audit log survives SIGKILL mid-stream (crash test)", () => {
  test("every acknowledged record is on disk and the log verifies, across repeated crashes and restarts", async () => {
    const path = join(dir, "batch", "audit.jsonl");
    const allAcked: number[] = [];
    let expectedStart = 0;
    for (let round = 0; round < 3; round++) {
      const { acked, ready } = await runAndKill(path, 400);
      // The restarted writer resumed exactly where the durable log ended.
      expect(Number(ready.split(" ")[1])).toBeGreaterThanOrEqual(expectedStart);
      expect(acked.length).toBeGreaterThanOrEqual(400);
      allAcked.push(...acked);

      const verdict = await audit.verifyAuditLog([path]);
      expect(verdict, JSON.stringify(verdict)).toMatchObject({ ok: true });
      if (!verdict.ok) return;
      const onDisk = await seqsOnDisk(path);
      const missing = allAcked.filter((s) => !onDisk.has(s));
      expect(missing, "acknowledged but missing").toEqual([]);
      expect(Math.max(...allAcked)).toBeLessThanOrEqual(verdict.records);
      expectedStart = verdict.records;
    }
    // Rotation happened under the crashes, and the chain spans all files.
    expect((await audit.listSegments(path)).length).toBeGreaterThan(0);
    // A clean writer can still continue the chain after the last crash.
    const log = await audit.openAuditLog({ path, fsync: "batch", rotateBytes: 16384, maxPending: 8 });
    const { seq } = await log.append({ kind: "registry", event: "runtime.restarted" });
    await log.close();
    expect(await audit.verifyAuditLog([path])).toMatchObject({ ok: true, records: seq });
    expect(new Set(allAcked).size).toBe(allAcked.length);
  });

  test("with fsync always, the same holds", async () => {
    const path = join(dir, "always", "audit.jsonl");
    const { acked } = await runAndKill(path, 150, "always");
    const verdict = await audit.verifyAuditLog([path]);
    expect(verdict).toMatchObject({ ok: true });
    const onDisk = await seqsOnDisk(path);
    expect(acked.filter((s) => !onDisk.has(s))).toEqual([]);
  });
});
