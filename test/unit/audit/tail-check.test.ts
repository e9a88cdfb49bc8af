// Opening an audit log checks the tail of its chain (writer.ts checkTail): a log that two writers
// broke, or whose last records were edited, is refused with AUDIT_LOG_CORRUPT naming the file and
// seq, instead of being extended. A torn final line (a crash mid-write) is not corruption: it was
// never acknowledged and is cut off.
import { appendFile, readFile, writeFile } from "node:fs/promises";
import { describe, expect, test } from "vitest";
import { listSegments, openAuditLog } from "../../../src/audit/index.js";
import { normalizeInput, sealRecord } from "../../../src/audit/record.js";
import { VcpError } from "../../../src/errors.js";
import { hookRecord, options, readLines, tempLogPath, writeLog } from "./helpers.js";

async function openError(path: string, extra = {}): Promise<VcpError> {
  try {
    const log = await openAuditLog(options(path, extra));
    await log.close();
  } catch (err) {
    expect(err).toBeInstanceOf(VcpError);
    return err as VcpError;
  }
  throw new Error("the log opened");
}

/** A record as a second writer that resumed after `previous` would write it. */
function forged(previous: { seq: number; hash: string }, i: number): string {
  return sealRecord(normalizeInput(hookRecord(i)), previous.seq + 1, previous.hash, new Date(0).toISOString()).line;
}

describe("audit log tail check at open", () => {
  test("two writers that resumed at the same head (two records with one seq) ⇒ AUDIT_LOG_CORRUPT naming the file and seq; nothing appended", async () => {
    const path = await writeLog(await tempLogPath(), 3);
    const third = JSON.parse((await readLines(path))[2]!) as { seq: number; hash: string };
    // Process 1 writes seq 4; process 2, which also resumed at seq 3, writes its own seq 4.
    await appendFile(path, forged(third, 10) + forged(third, 11));
    const before = await readFile(path, "utf8");
    const err = await openError(path);
    expect(err.code).toBe("AUDIT_LOG_CORRUPT");
    expect(err.details).toMatchObject({ file: path, seq: 5 });
    expect(err.message).toContain(path);
    expect(err.message).toMatch(/seq 4 follows seq 4/);
    expect(await readFile(path, "utf8")).toBe(before);
  });

  test("an edited record near the end ⇒ AUDIT_LOG_CORRUPT naming its seq", async () => {
    const path = await writeLog(await tempLogPath(), 5);
    const lines = await readLines(path);
    const edited = JSON.parse(lines[3]!) as Record<string, unknown>;
    edited.outcome = "error";
    lines[3] = JSON.stringify(edited);
    await writeFile(path, lines.map((l) => `${l}\n`).join(""));
    const err = await openError(path);
    expect(err.code).toBe("AUDIT_LOG_CORRUPT");
    expect(err.details).toMatchObject({ file: path, seq: 4 });
  });

  test("a deleted record near the end (seq gap) ⇒ AUDIT_LOG_CORRUPT", async () => {
    const path = await writeLog(await tempLogPath(), 5);
    const lines = await readLines(path);
    lines.splice(2, 1);
    await writeFile(path, lines.map((l) => `${l}\n`).join(""));
    const err = await openError(path);
    expect(err.code).toBe("AUDIT_LOG_CORRUPT");
    expect(err.details).toMatchObject({ seq: 3 });
  });

  test("a torn final line (crash mid-write) is cut off and the log opens, reporting the repair", async () => {
    const path = await writeLog(await tempLogPath(), 3);
    await appendFile(path, '{"seq":4,"ts":"2026-');
    const log = await openAuditLog(options(path));
    expect(log.recovery).toEqual({ truncated_bytes: 20 });
    expect((await log.append(hookRecord(3))).seq).toBe(4);
    await log.close();
  });

  test("a live file that does not continue the newest rotated segment ⇒ AUDIT_LOG_CORRUPT", async () => {
    const path = await writeLog(await tempLogPath(), 30, { rotateBytes: 2048, maxPending: 2 });
    const segments = await listSegments(path);
    expect(segments.length).toBeGreaterThan(0);
    // The live file replaced by the first segment's records: a chain that restarts at seq 1.
    await writeFile(path, await readFile(segments[0]!.path, "utf8"));
    const err = await openError(path, { rotateBytes: 2048 });
    expect(err.code).toBe("AUDIT_LOG_CORRUPT");
    expect(err.details).toMatchObject({ file: path, seq: 1 });
    expect(err.message).toContain(segments.at(-1)!.path);
  });

  test("an empty live file after a rotation: the newest segment's tail is checked", async () => {
    const path = await writeLog(await tempLogPath(), 30, { rotateBytes: 2048, maxPending: 2 });
    const segments = await listSegments(path);
    const newest = segments.at(-1)!.path;
    const lines = await readLines(newest);
    const edited = JSON.parse(lines.at(-1)!) as Record<string, unknown>;
    edited.status = "abort";
    lines[lines.length - 1] = JSON.stringify(edited);
    await writeFile(newest, lines.map((l) => `${l}\n`).join(""));
    await writeFile(path, "");
    const err = await openError(path, { rotateBytes: 2048 });
    expect(err.code).toBe("AUDIT_LOG_CORRUPT");
    expect(err.details).toMatchObject({ file: newest, seq: edited.seq });
  });

  test("only the last MiB is checked at open: damage further back is `audit verify`'s to find", async () => {
    const path = await writeLog(await tempLogPath(), 4000);
    const lines = await readLines(path);
    expect(lines.join("\n").length).toBeGreaterThan(1.2 * (1 << 20));
    const edited = JSON.parse(lines[0]!) as Record<string, unknown>;
    edited.outcome = "error";
    lines[0] = JSON.stringify(edited);
    await writeFile(path, lines.map((l) => `${l}\n`).join(""));
    const log = await openAuditLog(options(path));
    expect(log.head().seq).toBe(4000);
    await log.close();
  });
});
