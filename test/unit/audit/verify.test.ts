import { rm, writeFile } from "node:fs/promises";
import { describe, expect, test } from "vitest";
import { recordHash, verifyAuditLog } from "../../../src/audit/index.js";
import { digestOf } from "../../../src/integrity/digest.js";
import { readLines, tempLogPath, writeLines, writeLog } from "./helpers.js";

/** A 10-record log and its lines. */
async function fixture(): Promise<{ path: string; lines: string[] }> {
  const path = await writeLog(await tempLogPath(), 10);
  return { path, lines: await readLines(path) };
}

describe("verifyAuditLog: tampering is detected, naming the first bad seq", () => {
  test("an intact log verifies", async () => {
    const { path, lines } = await fixture();
    expect(await verifyAuditLog([path])).toEqual({ ok: true, records: 10, head: { seq: 10, hash: JSON.parse(lines[9]!).hash } });
  });

  test("an edited field (hash mismatch)", async () => {
    const { path, lines } = await fixture();
    lines[3] = lines[3]!.replace('"outcome":"ok"', '"outcome":"error"');
    await writeLines(path, lines);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: false, records: 3, first_bad_seq: 4, reason: expect.stringMatching(/hash mismatch/) });
  });

  test("a deleted line (seq gap)", async () => {
    const { path, lines } = await fixture();
    lines.splice(6, 1);
    await writeLines(path, lines);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: false, records: 6, first_bad_seq: 7, reason: expect.stringMatching(/seq jumps from 6 to 8/) });
  });

  test("two swapped lines (reordering)", async () => {
    const { path, lines } = await fixture();
    [lines[4], lines[5]] = [lines[5]!, lines[4]!];
    await writeLines(path, lines);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: false, records: 4, first_bad_seq: 5, reason: expect.stringMatching(/deleted or reordered/) });
  });

  test("truncation in the middle of the file", async () => {
    const { path, lines } = await fixture();
    const text = lines.map((l) => `${l}\n`).join("");
    const cutFrom = text.indexOf(lines[2]!) + 40;
    const cutTo = text.indexOf(lines[5]!) + 17;
    await writeFile(path, text.slice(0, cutFrom) + text.slice(cutTo));
    expect(await verifyAuditLog([path])).toMatchObject({ ok: false, records: 2, first_bad_seq: 3 });
  });

  test("an edited record with its own hash recomputed is caught by the next record's prev", async () => {
    const { path, lines } = await fixture();
    const forged = JSON.parse(lines[3]!);
    forged.status = "abort";
    forged.hash = recordHash(forged);
    lines[3] = JSON.stringify(forged);
    await writeLines(path, lines);
    expect(await verifyAuditLog([path])).toMatchObject({
      ok: false, records: 4, first_bad_seq: 5, reason: expect.stringMatching(/prev does not match the hash of seq 4/),
    });
  });

  test("a whole forged tail (edit and re-chain every later record) is caught only with an anchor", async () => {
    const { path, lines } = await fixture();
    const anchor = { seq: 10, hash: JSON.parse(lines[9]!).hash };
    let prev = JSON.parse(lines[6]!).hash as string;
    for (let i = 7; i < 10; i++) {
      const r = JSON.parse(lines[i]!);
      r.outcome = "error";
      r.prev = prev;
      r.hash = recordHash(r);
      prev = r.hash;
      lines[i] = JSON.stringify(r);
    }
    await writeLines(path, lines);
    expect((await verifyAuditLog([path])).ok).toBe(true);
    expect(await verifyAuditLog([path], { anchor })).toMatchObject({ ok: false, first_bad_seq: 10, reason: expect.stringMatching(/anchored head/) });
  });

  test("records cut off the end are caught against an anchored head", async () => {
    const { path, lines } = await fixture();
    const anchor = { seq: 10, hash: JSON.parse(lines[9]!).hash };
    await writeLines(path, lines.slice(0, 8));
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 8 });
    expect(await verifyAuditLog([path], { anchor })).toMatchObject({ ok: false, records: 8, first_bad_seq: 9, reason: expect.stringMatching(/truncated/) });
  });

  test("a torn final line is ok with torn_tail; a torn line anywhere else is not", async () => {
    const { path, lines } = await fixture();
    const torn = lines[9]!.slice(0, 30);
    await writeFile(path, lines.slice(0, 9).map((l) => `${l}\n`).join("") + torn);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 9, torn_tail: true, head: { seq: 9 } });
    await writeFile(path, lines.slice(0, 9).map((l) => `${l}\n`).join("") + `${torn}\n`);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: false, first_bad_seq: 10 });
  });

  test("a log that does not start at genesis, an empty line, or garbage fail", async () => {
    const { path, lines } = await fixture();
    await writeLines(path, lines.slice(3));
    expect(await verifyAuditLog([path])).toMatchObject({ ok: false, records: 0, first_bad_seq: 1 });
    await writeLines(path, [...lines.slice(0, 2), "", ...lines.slice(2)]);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: false, first_bad_seq: 3, reason: expect.stringMatching(/not valid JSON/) });
    await writeLines(path, [...lines.slice(0, 2), "[1,2]"]);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: false, first_bad_seq: 3, reason: expect.stringMatching(/not a JSON object/) });
  });

  test("a first record with a valid hash but a made-up prev is rejected", async () => {
    const { path, lines } = await fixture();
    const first = JSON.parse(lines[0]!);
    first.prev = digestOf("elsewhere");
    first.hash = recordHash(first);
    lines[0] = JSON.stringify(first);
    await writeLines(path, lines);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: false, first_bad_seq: 1, reason: expect.stringMatching(/genesis/) });
  });

  test("a deleted rotated segment breaks the chain across files", async () => {
    const path = await writeLog(await tempLogPath(), 40, { rotateBytes: 2048, maxPending: 2 });
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 40 });
    const seg1 = await readLines(`${path}.000001`);
    const seg2 = await readLines(`${path}.000002`);
    await rm(`${path}.000002`);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: false, records: seg1.length, first_bad_seq: seg1.length + 1 });
    // Explicit paths are read in the order given; a segment path is taken alone.
    await writeLines(`${path}.000002`, seg2);
    expect(await verifyAuditLog([`${path}.000001`, `${path}.000002`])).toMatchObject({ ok: true, records: seg1.length + seg2.length });
  });

  test("a missing log is a failure; an empty one is fine", async () => {
    const path = await tempLogPath();
    expect(await verifyAuditLog([path])).toMatchObject({ ok: false, reason: expect.stringMatching(/no audit log/) });
    await writeLog(path, 0);
    expect(await verifyAuditLog([path])).toMatchObject({ ok: true, records: 0, head: { seq: 0 } });
  });
});
