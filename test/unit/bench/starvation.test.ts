import { existsSync } from "node:fs";
import { expect, test } from "vitest";
import { startStarvationMeter } from "../../../bench/sandbox/starvation.js";

// schedstat exists on Linux kernels built with CONFIG_SCHED_INFO (every mainstream distribution's).
const schedstat = existsSync(`/proc/${process.pid}/task/${process.pid}/schedstat`);

test.runIf(schedstat)("the meter reports the CPU of the thread that was runnable longest: here this busy thread", () => {
  const meter = startStarvationMeter(() => process.pid);
  const end = process.cpuUsage().user + 200_000;
  let x = 0;
  while (process.cpuUsage().user < end) x++;
  const { cpuMs, starvedMs } = meter.stop();
  expect(x).toBeGreaterThan(0);
  // ≈ 200 ms of user time on this thread (a little more with system time), and a wait that is a figure.
  expect(cpuMs).toBeGreaterThanOrEqual(150);
  expect(starvedMs).toBeGreaterThanOrEqual(0);
});

test("without a host (or without /proc) the meter reports nothing waited and nothing run", () => {
  expect(startStarvationMeter(() => undefined).stop()).toEqual({ starvedMs: 0, cpuMs: 0 });
  expect(startStarvationMeter(() => 2 ** 31 - 1).stop()).toEqual({ starvedMs: 0, cpuMs: 0 });
});
