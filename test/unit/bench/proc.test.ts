import { existsSync } from "node:fs";
import { expect, test } from "vitest";
import { runQueueWaitNs } from "../../../bench/lib/proc.js";

// schedstat exists on Linux kernels built with CONFIG_SCHED_INFO (every mainstream distribution's).
const schedstat = existsSync(`/proc/${process.pid}/task/${process.pid}/schedstat`);

test.runIf(schedstat)("runQueueWaitNs: this process's own threads have a figure (nanoseconds, not negative)", () => {
  const ns = runQueueWaitNs(process.pid);
  expect(Number.isFinite(ns)).toBe(true);
  expect(ns).toBeGreaterThanOrEqual(0);
});

test("runQueueWaitNs: a process that does not exist has no figure (NaN), not a zero that looks measured", () => {
  expect(runQueueWaitNs(2 ** 31 - 1)).toBeNaN();
});
