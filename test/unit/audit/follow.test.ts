/**
 * followAuditRecords (what `audit tail -f` and the audit sink read with) yields every record once, in
 * order, even when the writer appends while the follower is finding its place in the log.
 */
import { describe, expect, test } from "vitest";
import { followAuditRecords, openAuditLog } from "../../../src/audit/index.js";
import { hookRecord, options, tempLogPath } from "./helpers.js";

describe("followAuditRecords", () => {
  test("followers started while the writer appends miss no record: each sees 1..n without a gap", async () => {
    const path = await tempLogPath();
    const log = await openAuditLog(options(path, { fsync: "never" }));
    const total = 400;
    const stop = new AbortController();
    const followers: Array<Promise<number[]>> = [];
    const follow = async (): Promise<number[]> => {
      const seen: number[] = [];
      for await (const r of followAuditRecords(path, { pollMs: 2, signal: stop.signal })) {
        seen.push(r.seq);
        if (r.seq === total) break;
      }
      return seen;
    };
    // One append at a time, a follower starting every few records: each start's first read races the
    // appends that follow it.
    for (let i = 0; i < total; i++) {
      await log.append(hookRecord(i));
      if (i % 16 === 0) followers.push(follow());
    }
    const timer = setTimeout(() => stop.abort(), 60_000);
    const results = await Promise.all(followers);
    clearTimeout(timer);
    await log.close();
    const expected = Array.from({ length: total }, (_, i) => i + 1);
    for (const seen of results) expect(seen).toEqual(expected);
  });
});
