// `vcp-hooks audit tail|export`: the decision log read back through the built CLI.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, test, vi } from "vitest";
import { openAuditLog } from "../../src/audit/index.js";
import { cleanup, cli, MAIN, scratchDir } from "./helpers.js";

const dirs: string[] = [];
afterAll(() => cleanup(dirs));

async function makeLog(records: number) {
  const path = join(scratchDir(dirs), "audit.jsonl");
  const writer = await openAuditLog({ path, fsync: "never", rotateBytes: 4096, maxPending: 10_000 });
  await writer.appendMany(Array.from({ length: records }, (_, i) => ({ kind: "hook" as const, session: "s", hook: `h${i}`, outcome: i === 3 ? "timeout" : "ok", details: { pad: "y".repeat(80) } })));
  return { path, writer };
}

const seqs = (stdout: string): number[] => stdout.split("\n").filter(Boolean).map((l) => (JSON.parse(l) as { seq: number }).seq);

describe("vcp-hooks audit export / tail", () => {
  test("export writes every record exactly as stored, across rotations; --after-seq and --since select", async () => {
    const { path, writer } = await makeLog(60);
    await writer.close();
    const all = await cli(["audit", "export", path]);
    expect(all.code).toBe(0);
    expect(seqs(all.stdout)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    // Byte-for-byte the stored lines of the live file appear in the export (the hash stays verifiable).
    const liveLines = readFileSync(path, "utf8").split("\n").filter(Boolean);
    expect(all.stdout).toContain(liveLines[0]!);
    expect(seqs((await cli(["audit", "export", path, "--after-seq", "55"])).stdout)).toEqual([56, 57, 58, 59, 60]);
    expect(seqs((await cli(["audit", "export", path, "--since", "2999-01-01T00:00:00Z"])).stdout)).toEqual([]);
    const bad = await cli(["audit", "export", path, "--since", "yesterday"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--since must be an ISO-8601 time");
  });

  test("export --format otlp gives OTLP/JSON log requests of --batch records, failures at WARN", async () => {
    const { path, writer } = await makeLog(5);
    await writer.close();
    const run = await cli(["audit", "export", path, "--format", "otlp", "--batch", "2"]);
    expect(run.code).toBe(0);
    const requests = run.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l) as { resourceLogs: Array<{ scopeLogs: Array<{ logRecords: Array<{ severityText: string }> }> }> });
    expect(requests.map((r) => r.resourceLogs[0]!.scopeLogs[0]!.logRecords.length)).toEqual([2, 2, 1]);
    expect(requests[1]!.resourceLogs[0]!.scopeLogs[0]!.logRecords[1]!.severityText).toBe("WARN"); // seq 4: timeout
  });

  test("tail -n prints the last records; --follow prints records as they are appended", async () => {
    const { path, writer } = await makeLog(20);
    expect(seqs((await cli(["audit", "tail", path, "-n", "3"])).stdout)).toEqual([18, 19, 20]);
    const child = spawn(process.execPath, ["--no-node-snapshot", MAIN, "audit", "tail", path, "-n", "1", "--follow"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    try {
      await vi.waitFor(() => expect(seqs(out)).toEqual([20]), { timeout: 15_000, interval: 50 });
      await writer.appendMany([{ kind: "chain", session: "s", status: "completed" }, { kind: "chain", session: "s", status: "aborted" }]);
      await vi.waitFor(() => expect(seqs(out)).toEqual([20, 21, 22]), { timeout: 15_000, interval: 50 });
    } finally {
      child.kill("SIGTERM");
      await writer.close();
    }
  });
});
