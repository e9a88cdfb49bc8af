import { describe, expect, test } from "vitest";
import { shareAccount, WorkerShareTracker } from "../../../src/pool/admission.js";

/** Feed `digest` a steady load of `workers` busy workers from `from` to `to` (ms), in 100 ms hooks. */
function load(t: WorkerShareTracker, digest: string, workers: number, from: number, to: number): void {
  for (let now = from + 100; now <= to; now += 100) for (let w = 0; w < workers; w++) chain(t, [digest], 100, now);
}

/** One chain of `digests` reported back; each revision's hooks took `ms`. */
function chain(t: WorkerShareTracker, digests: readonly string[], ms: number, now: number): void {
  t.recordChain(digests, new Map(digests.map((d) => [d, ms])), now);
}

/** A light tenant: a 0.2 ms chain every 100 ms, offset by 50 ms. */
function light(t: WorkerShareTracker, digest: string, from: number, to: number): void {
  for (let now = from + 50; now <= to; now += 100) chain(t, [digest], 0.2, now);
}

describe("WorkerShareTracker: fair share of worker time per account", () => {
  test("a bundle alone may use every worker: it is never demoted", () => {
    const t = new WorkerShareTracker(2, 3000);
    load(t, "hog", 2, 0, 10_000);
    expect(t.isDemoted("hog", 10_000)).toBe(false);
    expect(t.share("hog", 10_000)).toBeGreaterThan(0.9);
  });

  test("next to another active bundle, one holding both workers is demoted; the light one is not", () => {
    const t = new WorkerShareTracker(2, 3000);
    load(t, "hog", 2, 0, 10_000);
    light(t, "light", 0, 10_000);
    expect(t.demotedAccounts(10_000)).toEqual(["hog"]);
    expect(t.isDemoted("light", 10_000)).toBe(false);
    expect(t.cap()).toBe(1); // two workers, two active revisions: one worker each
  });

  test("the cap is the demoted revision's share of the workers", () => {
    const t = new WorkerShareTracker(8, 3000);
    load(t, "hog", 8, 0, 10_000);
    light(t, "light", 0, 10_000);
    expect(t.isDemoted("hog", 10_000)).toBe(true);
    expect(t.cap()).toBe(4);
  });

  test("a revision in every recent chain (a deployment policy on the only busy hook type) is never demoted", () => {
    const t = new WorkerShareTracker(2, 3000);
    for (let now = 100; now <= 10_000; now += 50) t.recordChain(["scanner", "tiny"], new Map([["scanner", 100], ["tiny", 0.1]]), now);
    expect(t.share("scanner", 10_000)).toBeGreaterThan(0.5);
    expect(t.isDemoted("scanner", 10_000)).toBe(false);
  });

  test("a bundle using one worker's worth or less is never demoted, however many bundles are active", () => {
    const t = new WorkerShareTracker(2, 3000);
    load(t, "steady", 1, 0, 10_000);
    for (const other of ["a", "b", "c"]) light(t, other, 0, 10_000);
    expect(t.isDemoted("steady", 10_000)).toBe(false);
  });

  test("demoted, it stays demoted while it keeps one worker busy and others are active; promoted once they go quiet", () => {
    const t = new WorkerShareTracker(2, 3000);
    load(t, "hog", 2, 0, 5_000);
    light(t, "light", 0, 5_000);
    expect(t.isDemoted("hog", 5_000)).toBe(true);
    // At its cap: one worker's worth, the tenant still active.
    load(t, "hog", 1, 5_000, 15_000);
    light(t, "light", 5_000, 15_000);
    expect(t.isDemoted("hog", 15_000)).toBe(true);
    // The tenant goes quiet: after a time constant the hog is alone again.
    load(t, "hog", 1, 15_000, 25_000);
    expect(t.isDemoted("hog", 25_000)).toBe(false);
  });

  test("idle accounts are forgotten", () => {
    const t = new WorkerShareTracker(2, 3000);
    load(t, "hog", 2, 0, 5_000);
    light(t, "light", 0, 5_000);
    expect(t.isDemoted("hog", 5_000)).toBe(true);
    expect(t.share("light", 5_100)).toBeGreaterThan(0);
    expect(t.demotedAccounts(100_000)).toEqual([]);
    expect(t.share("light", 100_000)).toBe(0);
    expect(t.share("hog", 100_000)).toBe(0);
  });
});

describe("shareAccount: whose share a revision draws on", () => {
  test("the key that signed it, else the bundle's own name", () => {
    expect(shareAccount({ name: "hog-1", signedBy: "tenant-a" })).toBe("key:tenant-a");
    expect(shareAccount({ name: "hog-2", signedBy: "tenant-a" })).toBe("key:tenant-a");
    expect(shareAccount({ name: "hog-1", signedBy: null })).toBe("bundle:hog-1");
    expect(shareAccount({ name: "hog-1" })).toBe("bundle:hog-1");
  });
});
