import { describe, expect, test } from "vitest";
import { SlowTracker } from "../../../src/pool/admission.js";
import type { ChainTaskResult } from "../../../src/pool/api.js";
import { BundleRegistry } from "../../../src/pool/bundle-registry.js";
import { ChainQueue, type PendingChain } from "../../../src/pool/chain-queue.js";
import { HostCalls } from "../../../src/pool/host-calls.js";
import { deathReport, settleHostDeath } from "../../../src/pool/host-death.js";
import type { HostHandle } from "../../../src/pool/host-process.js";
import type { SlotRecord } from "../../../src/pool/slots.js";
import { pendingChain } from "./fixtures.js";

// What the supervisor does with the work of a host that died, without a process: the real parts
// (queue, calls, bundle registry) fed slot records as a dead host leaves them.

const KILLED = { code: null, signal: "SIGKILL" as NodeJS.Signals };

function parts(threads = 4) {
  const bundles = new BundleRegistry();
  for (const digest of ["sha256:a", "sha256:b", "sha256:c"]) bundles.loaded({ name: `b-${digest}`, digest, trust: "deployment" });
  const chains = new ChainQueue({ threads, maxQueue: 16, slow: new SlowTracker(3, 60_000), share: undefined, isSuspect: (d, now) => bundles.isSuspect(d, now) });
  return { bundles, chains, calls: new HostCalls() };
}

/** Queue the chains and send them all to the (imaginary) host. */
function dispatch(chains: ChainQueue, ...entries: PendingChain[]): void {
  chains.waiting.push(...entries);
  chains.admit(0, () => false, () => undefined);
}

const inHook = (taskId: number, position: number): SlotRecord => ({ taskId, phase: "I", hook: `h${position}`, position, startMs: 0, budgetMs: 1000, tid: 0 });

describe("settleHostDeath: a dead host's chains, loads and bundles", () => {
  test("a crash inside one bundle's hook: its chain is answered crashed, the bundle quarantined, the bystander requeued", () => {
    const p = parts();
    const answers: (ChainTaskResult | Error)[] = [];
    const culprit = pendingChain(["sha256:a"], answers);
    const bystander = pendingChain(["sha256:b"]);
    dispatch(p.chains, culprit, bystander);
    const death = settleHostDeath({ records: [inHook(culprit.id, 0)], kill: undefined, exit: KILLED, now: 5 }, p);
    expect(answers).toHaveLength(1);
    const { result } = answers[0] as ChainTaskResult;
    expect(result.hook_results[0]).toMatchObject({ hook: "h0", outcome: "crashed", error: expect.stringContaining("signal SIGKILL") });
    expect(result.status).toBe("completed"); // fail-open: the hook is not fail_closed
    expect(p.bundles.isQuarantined("sha256:a")).toBe(true);
    expect(death.culprits).toEqual([expect.objectContaining({ digest: "sha256:a", bundle: "b-sha256:a", hook: "h0", chain_id: culprit.chainId })]);
    expect(p.chains.inFlight.size).toBe(0);
    expect(p.chains.waiting).toEqual([bystander]);
    expect(death).toMatchObject({ crashedChains: 1, requeuedChains: 1, suspects: [], how: "signal SIGKILL" });
    const host = { generation: 3, child: { pid: 99 }, stderrTail: "x".repeat(5000) } as unknown as HostHandle;
    const report = deathReport(host, { records: [], kill: undefined, exit: KILLED, now: 5 }, death);
    expect(report).toMatchObject({ generation: 3, pid: 99, signal: "SIGKILL", crashedChains: 1, requeuedChains: 1, culprits: death.culprits });
    expect(report["stderrTail"]).toHaveLength(2048);
  });

  test("two bundles running when it died: nobody is blamed, both run again and become suspects (their chains then run alone)", () => {
    const p = parts();
    const a = pendingChain(["sha256:a"]);
    const b = pendingChain(["sha256:b"]);
    dispatch(p.chains, a, b);
    const death = settleHostDeath({ records: [inHook(a.id, 0), inHook(b.id, 0)], kill: undefined, exit: KILLED, now: 5 }, p);
    expect(death.culprits).toEqual([]);
    expect(p.bundles.quarantinedDigests()).toEqual([]);
    expect(p.bundles.suspectDigests(6).sort()).toEqual(["sha256:a", "sha256:b"]);
    expect(p.chains.waiting).toEqual([a, b]);
    const sent: PendingChain[] = [];
    p.chains.admit(6, () => false, (entry) => sent.push(entry));
    expect(sent).toEqual([a]); // alone
    expect(a.solo).toBe(true);
  });

  test("a chain in flight at its second death is answered crashed, never run a third time", () => {
    const p = parts();
    const answers: (ChainTaskResult | Error)[] = [];
    const twice = pendingChain(["sha256:c"], answers);
    dispatch(p.chains, twice);
    settleHostDeath({ records: [], kill: undefined, exit: { code: 1, signal: null }, now: 1 }, p);
    expect(p.chains.waiting).toEqual([twice]); // first death: a bystander of an unexplained exit
    p.chains.admit(2, () => false, () => undefined);
    expect(twice.dispatches).toBe(2);
    settleHostDeath({ records: [], kill: undefined, exit: { code: 1, signal: null }, now: 3 }, p);
    expect(p.chains.waiting).toEqual([]);
    expect((answers[0] as ChainTaskResult).result.hook_results[0]).toMatchObject({ outcome: "crashed", error: expect.stringContaining("exit code 1") });
  });

  test("a hook the watchdog caught ignoring termination is answered timeout and its bundle quarantined", () => {
    const p = parts();
    const answers: (ChainTaskResult | Error)[] = [];
    const spinner = pendingChain(["sha256:b", "sha256:a"], answers);
    dispatch(p.chains, spinner);
    const hook = { digest: "sha256:a", bundle: "b-sha256:a", hook: "h1", scope: "deployment" as const, position: 1 };
    const kill = { kind: "overrun" as const, taskId: spinner.id, hook, detail: "hook h1 ran 6000 ms against a budget of 1000 ms" };
    const death = settleHostDeath({ records: [inHook(spinner.id, 1)], kill, exit: KILLED, now: 7000 }, p);
    expect((answers[0] as ChainTaskResult).result.hook_results[0]).toMatchObject({ hook: "h1", outcome: "timeout", duration_ms: 7000 });
    expect(death.culprits.map((c) => c.digest)).toEqual(["sha256:a"]);
    expect(p.bundles.isQuarantined("sha256:b")).toBe(false);
  });

  test("a bundle load that was the only code running fails INVALID_BUNDLE with sole: its bundle killed the host", async () => {
    const p = parts();
    const load = p.calls.make({ t: "load", id: 900, digest: "sha256:c" }, true, (call) => p.calls.sending(call));
    settleHostDeath({ records: [{ taskId: 900, phase: "L", startMs: 0 }], kill: undefined, exit: KILLED, now: 1 }, p);
    await expect(load).rejects.toMatchObject({ code: "INVALID_BUNDLE", details: { digest: "sha256:c", sole: true } });
    expect(p.calls.idle).toBe(true);
  });

  test("a corrupt frame stream blames nobody and answers every chain in flight crashed", () => {
    const p = parts();
    const answers: (ChainTaskResult | Error)[] = [];
    dispatch(p.chains, pendingChain(["sha256:a"], answers), pendingChain(["sha256:b"], answers));
    const death = settleHostDeath({ records: [], kill: { kind: "protocol", taskId: 0, detail: "a frame over the limit" }, exit: KILLED, now: 1 }, p);
    expect(answers).toHaveLength(2);
    expect(death).toMatchObject({ culprits: [], suspects: [], requeuedChains: 0, crashedChains: 2 });
  });
});
