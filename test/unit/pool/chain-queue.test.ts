import { describe, expect, test } from "vitest";
import { SlowTracker, WorkerShareTracker } from "../../../src/pool/admission.js";
import { BATCH_MAX_CHAINS, HOST_QUEUE_MS } from "../../../src/pool/batch.js";
import { ChainQueue, HOOK_SETUP_MS, type PendingChain } from "../../../src/pool/chain-queue.js";
import { graceMs } from "../../../src/pool/watchdog.js";
import { pendingChain } from "./fixtures.js";

// The supervisor's waiting queue, in-flight table and admission, without a process.

const chain = pendingChain;

function queue(options: { threads?: number; maxQueue?: number; suspects?: Set<string>; slow?: SlowTracker; share?: WorkerShareTracker } = {}): { q: ChainQueue; sent: PendingChain[]; admit: (loads?: boolean) => void } {
  const q = new ChainQueue({
    threads: options.threads ?? 2,
    maxQueue: options.maxQueue ?? 8,
    slow: options.slow ?? new SlowTracker(3, 60_000),
    share: options.share,
    isSuspect: (d) => options.suspects?.has(d) === true,
  });
  const sent: PendingChain[] = [];
  return { q, sent, admit: (loads = false) => q.admit(0, () => loads, (entry) => sent.push(entry)) };
}

describe("ChainQueue: who goes to the host, and when", () => {
  test("up to threads + min(threads, maxQueue) in flight; the rest wait here, counted as queued", () => {
    const { q, sent, admit } = queue({ threads: 2, maxQueue: 8 });
    for (let i = 0; i < 6; i++) q.waiting.push(chain(["sha256:a"]));
    admit();
    expect(sent).toHaveLength(4);
    expect(q.inFlight.size).toBe(4);
    expect(q.queuedCount()).toBe(2 + 2); // two here, two in the host behind the busy threads
    expect(sent.every((e) => e.dispatches === 1 && e.counted)).toBe(true);
  });

  test("enqueue holds a new chain at the end of the queue until it is answered", async () => {
    const { q } = queue();
    const template = chain(["sha256:a"]);
    const answer = q.enqueue(77, template.task, template.plan, ["sha256:a"], undefined);
    const entry = q.waiting.at(-1)!;
    expect(entry).toMatchObject({ id: 77, chainId: template.task.request.chainId, digests: ["sha256:a"], dispatches: 0 });
    entry.resolve({ result: {} as never, events: [] });
    await expect(answer).resolves.toEqual({ result: {}, events: [] });
  });

  test("quick chains let more wait in the host (about HOST_QUEUE_MS of work per thread), never past maxQueue", () => {
    const { q } = queue({ threads: 2, maxQueue: 8 });
    expect(q.hostCap()).toBe(2 + 2); // no estimate yet: one waiting per thread
    const entry = chain(["sha256:a"]);
    const quick = { duration_ms: 1, hook_results: [] } as unknown as Parameters<ChainQueue["recordUsage"]>[1];
    q.recordUsage(entry, quick, 0);
    expect(q.hostCap()).toBe(2 + Math.min(2 * Math.min(BATCH_MAX_CHAINS, HOST_QUEUE_MS), 8));
    const slow = { duration_ms: 10_000, hook_results: [] } as unknown as Parameters<ChainQueue["recordUsage"]>[1];
    for (let i = 0; i < 200; i++) q.recordUsage(entry, slow, 0);
    expect(q.hostCap()).toBe(2 + 2);
  });

  test("a full queue refuses a chain that would have to wait with SANDBOX_OVERLOADED", () => {
    const { q, admit } = queue({ threads: 1, maxQueue: 1 });
    expect(q.overloaded(["sha256:a"], ["sha256:a"], true, 0)).toBeUndefined();
    for (let i = 0; i < 3; i++) q.waiting.push(chain(["sha256:a"]));
    admit();
    expect(q.overloaded(["sha256:a"], ["sha256:a"], true, 0)).toMatchObject({ code: "SANDBOX_OVERLOADED", details: { maxQueue: 1, queued: 2, inFlight: 2 } });
  });

  test("a crash suspect's chain waits until nothing is in flight (no load either), runs alone, and holds the queue meanwhile", () => {
    const suspects = new Set(["sha256:s"]);
    const { q, sent, admit } = queue({ suspects });
    const first = chain(["sha256:a"]);
    const suspect = chain(["sha256:s", "sha256:a"]);
    const behind = chain(["sha256:b"]);
    q.waiting.push(first, suspect, behind);
    admit();
    expect(sent).toEqual([first]); // nothing behind the suspect overtakes it
    q.settle(first);
    admit(true);
    expect(sent).toEqual([first]); // a bundle load is running
    admit();
    expect(sent).toEqual([first, suspect]);
    expect(suspect.solo).toBe(true);
    admit();
    expect(sent).toEqual([first, suspect]); // alone
    q.settle(suspect);
    expect(suspect.solo).toBe(false);
    admit();
    expect(sent).toEqual([first, suspect, behind]);
  });

  test("one chain of a slow bundle at a time; chains of other bundles overtake the second", () => {
    const slow = new SlowTracker(1, 60_000);
    slow.record("sha256:slow", 0);
    const { q, sent, admit } = queue({ slow });
    const s1 = chain(["sha256:slow"]);
    const s2 = chain(["sha256:slow"]);
    const other = chain(["sha256:a"]);
    q.waiting.push(s1, s2, other);
    admit();
    expect(sent).toEqual([s1, other]);
    expect(q.waiting).toEqual([s2]);
    q.settle(s1);
    admit();
    expect(sent).toEqual([s1, other, s2]);
  });

  test("a bundle over its share of worker time is capped at its share of the threads; others go ahead", () => {
    const share = new WorkerShareTracker(2, 1000);
    share.recordChain(["sha256:hog"], new Map([["sha256:hog", 1500]]), 0);
    share.recordChain(["sha256:a"], new Map([["sha256:a", 1]]), 0);
    expect(share.isDemoted("sha256:hog", 0)).toBe(true);
    const { q, sent, admit } = queue({ share });
    const h1 = chain(["sha256:hog"]);
    const h2 = chain(["sha256:hog"]);
    const other = chain(["sha256:a"]);
    q.waiting.push(h1, h2, other);
    admit();
    expect(sent).toEqual([h1, other]); // cap = max(1, floor(2 × 0.5)) = 1
    expect(q.demotedAccounts(0)).toEqual(["sha256:hog"]);
  });

  test("revisions charged to one signer share its cap: a hog split over bundles is capped as one", () => {
    const share = new WorkerShareTracker(2, 1000);
    const { q, sent, admit } = queue({ share });
    for (const d of ["sha256:h1", "sha256:h2", "sha256:h3", "sha256:h4"]) q.chargeTo(d, "key:hog");
    q.chargeTo("sha256:v", "key:victim");
    expect(q.accountsOf(["sha256:h1", "sha256:h2", "sha256:v"])).toEqual(["key:hog", "key:victim"]);
    // Each revision used a quarter of the workers' time; together they held both.
    for (const d of ["sha256:h1", "sha256:h2", "sha256:h3", "sha256:h4"]) {
      const c = chain([d], [], q.accountsOf([d]));
      q.recordUsage(c, { duration_ms: 500, hook_results: [{ hook: "h0", scope: "deployment", bundle: `b-${d}`, outcome: "ok", duration_ms: 500 }] } as never, 0);
    }
    q.recordUsage(chain(["sha256:v"], [], ["key:victim"]), { duration_ms: 1, hook_results: [{ hook: "h0", scope: "deployment", bundle: "b-sha256:v", outcome: "ok", duration_ms: 1 }] } as never, 0);
    expect(share.share("key:hog", 0)).toBeCloseTo(1, 1);
    expect(q.demotedAccounts(0)).toEqual(["key:hog"]);
    expect(q.demotedDigests(0).sort()).toEqual(["sha256:h1", "sha256:h2", "sha256:h3", "sha256:h4"]);
    const hogs = ["sha256:h1", "sha256:h2", "sha256:h3", "sha256:h4"].map((d) => chain([d], [], q.accountsOf([d])));
    const victim = chain(["sha256:v"], [], ["key:victim"]);
    q.waiting.push(...hogs, victim);
    admit();
    expect(sent).toEqual([hogs[0], victim]); // one hog chain in flight, whichever bundle it runs
  });

  test("a chain queued in the host behind busy threads gets a hard deadline after theirs", () => {
    const { q, sent, admit } = queue({ threads: 1 });
    q.waiting.push(chain(["sha256:a"]), chain(["sha256:a"]));
    admit();
    const [running, queued] = sent as [PendingChain, PendingChain];
    const own = 1000 + HOOK_SETUP_MS + graceMs(1000);
    expect(running.hardDeadline).toBe(own);
    expect(queued.hardDeadline).toBe(2 * own);
  });

  test("when the host dies every chain in flight is taken out and its counts released; requeued ones go first", () => {
    const suspects = new Set<string>();
    const { q, sent, admit } = queue({ threads: 1, suspects });
    const a = chain(["sha256:a"]);
    const b = chain(["sha256:b"]);
    const c = chain(["sha256:c"]);
    q.waiting.push(a, b, c);
    admit();
    expect(sent).toEqual([a, b]);
    const taken = q.takeInFlight();
    expect(taken).toEqual([a, b]);
    expect(q.inFlight.size).toBe(0);
    expect(taken.every((e) => !e.counted)).toBe(true);
    q.requeueFirst(taken);
    expect(q.waiting).toEqual([a, b, c]);
    admit();
    expect(a.dispatches).toBe(2);
  });

  test("a timed-out hook's revision turns slow after `timeouts` timeouts, reported once", () => {
    const { q } = queue({ slow: new SlowTracker(2, 60_000) });
    const entry = chain(["sha256:t"]);
    const result = { hook_results: [{ hook: "h0", bundle: "b-sha256:t", scope: "deployment", outcome: "timeout", duration_ms: 1000 }] } as unknown as Parameters<ChainQueue["recordUsage"]>[1];
    expect(q.recordUsage(entry, result, 1)).toBeUndefined();
    expect(q.recordUsage(entry, result, 2)).toEqual([{ digest: "sha256:t", bundle: "b-sha256:t" }]);
    expect(q.recordUsage(entry, result, 3)).toBeUndefined();
    expect(q.slowDigests(3)).toEqual(["sha256:t"]);
    q.resetUsage("sha256:t");
    expect(q.slowDigests(3)).toEqual([]);
  });
});
