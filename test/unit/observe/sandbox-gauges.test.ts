// The sandbox's gauges of a metrics scrape (observe/sandbox-gauges.ts): counts of the backend's
// lists, zeros for what a test backend does not report, no host without a host pid.
import { expect, test } from "vitest";
import { sandboxGauges } from "../../../src/observe/sandbox-gauges.js";

test("lists become counts; what a backend does not report is zero; no host without a pid", () => {
  expect(sandboxGauges({ restarts: 1, inFlight: 2, queued: 3, quarantined: ["a"], slowBundles: ["b", "c"] })).toEqual({
    restarts: 1, queued: 3, inFlight: 2, host: undefined, quarantined: 1, slowBundles: 2, demotedBundles: 0, watchdogKills: 0,
  });
  const own = sandboxGauges({ restarts: 0, inFlight: 0, queued: 0, quarantined: [], slowBundles: [], demotedBundles: ["d"], watchdogKills: 4, hostPid: process.pid });
  expect(own).toMatchObject({ demotedBundles: 1, watchdogKills: 4 });
  if (process.platform === "linux") expect(own.host?.pid).toBe(process.pid);
});
