import { describe, expect, test } from "vitest";
import { attributeCrash, type HookIdentity, type PendingTaskView } from "../../../src/pool/crash.js";
import { parseSlot, type SlotRecord } from "../../../src/pool/slots.js";

// Pure rules of crash attribution (src/pool/crash.ts), on slot records as the supervisor reads them.
// Each pending task has a hook list; slot records name a hook by its position in that list.
type Hook = Omit<HookIdentity, "position">;
const dep = (bundle: string, hook: string): Hook => ({ digest: `d-${bundle}`, bundle, hook, scope: "deployment" });
const ses = (bundle: string, hook: string, sessionId: string): Hook => ({ ...dep(bundle, hook), scope: "session", sessionId });

const tasks: Record<number, readonly Hook[]> = {
  1: [dep("boom", "boom")],
  2: [dep("calm", "calm")],
  // Task 4: the innocent bundle's deployment hook `redact`, then an attacker's session hook also named `redact`.
  4: [dep("innocent", "redact"), ses("attacker", "redact", "s1")],
  5: [dep("innocent", "redact")],
};
const loads: Record<number, string> = { 3: "d-loading" };

function pending(taskId: number): PendingTaskView | undefined {
  const hooks = tasks[taskId];
  if (hooks !== undefined) {
    return {
      digests: [...new Set(hooks.map((h) => h.digest))],
      hookAt: (position, name) => {
        const h = position === undefined ? undefined : hooks[position];
        return h !== undefined && h.hook === name ? { ...h, position: position! } : undefined;
      },
    };
  }
  const loadDigest = loads[taskId];
  return loadDigest === undefined ? undefined : { digests: [], loadDigest, hookAt: () => undefined };
}
const r = (text: string) => parseSlot(text) as SlotRecord;

describe("crash attribution from slot records", () => {
  test.each([
    ["one hook running: it is the culprit", ["1 I boom 5 10 0 0", "9 C"], ["d-boom"], []],
    // A worker that ends the process for a runaway run names its revision; the hook running elsewhere is a bystander.
    ["a runaway mark next to one running hook: both suspects, the bystander is not blamed", ["2 I calm 5 10 0 0", "0 R d-boom"], [], ["d-boom", "d-calm"]],
    ["a runaway mark alone: its revision is a suspect", ["0 R d-boom", "9 C"], [], ["d-boom"]],
    ["two hooks running: both become suspects, nobody is quarantined", ["1 I boom 5 10 0 0", "2 I calm 5 10 0 0"], [], ["d-boom", "d-calm"]],
    ["a stale record of a finished task is ignored", ["9 I calm 5 10 0 0", "1 I boom 5 10 0 0"], ["d-boom"], []],
    ["a bundle load was running too: the running hook is only a suspect", ["2 I calm 5 10 0 0", "3 L 5"], [], ["d-calm", "d-loading"]],
    ["a pending chain in chain code makes it ambiguous", ["1 I boom 5 10 0 0", "2 C"], [], ["d-boom", "d-calm"]],
    // Chain code is the runtime's work on the caller's input: never enough to blame the chain's bundles.
    ["only chain code of one bundle's chain: a suspect, not a culprit", ["1 C"], [], ["d-boom"]],
    ["nothing of a pending task: no culprit", ["9 C", "8 C"], [], []],
    // A session hook named like another bundle's deployment hook: the position decides, not the name.
    ["same-named session hook crashes alone: its own bundle", ["4 I redact 5 10 0 1"], ["d-attacker"], []],
    ["same-named session hook next to the innocent hook in another chain: both suspects", ["4 I redact 5 10 0 1", "5 I redact 5 10 0 0"], [], ["d-attacker", "d-innocent"]],
    ["a record whose name does not match its position blames nobody", ["4 I redact 5 10 0 7"], [], ["d-attacker", "d-innocent"]],
    ["a record without a position (older format) blames nobody", ["4 I redact 5 10 0"], [], ["d-attacker", "d-innocent"]],
  ] as const)("%s", (_name, lines, culprits, newSuspects) => {
    const got = attributeCrash(lines.map(r), pending);
    expect([...got.culprits.keys()].sort()).toEqual([...culprits]);
    expect([...got.suspects].sort()).toEqual([...newSuspects]);
  });

  test("the culprit carries the hook's whole identity: bundle, name, scope, session, position", () => {
    const got = attributeCrash([r("4 I redact 5 10 0 1")], pending);
    expect(got.culprits.get("d-attacker")).toEqual({
      taskId: 4,
      why: "only-running",
      hook: { digest: "d-attacker", bundle: "attacker", hook: "redact", scope: "session", sessionId: "s1", position: 1 },
    });
    expect(got.running.get(4)?.position).toBe(1);
  });

  test("a load that was the only code running is reported as such, and quarantines no chain's bundle", () => {
    const got = attributeCrash([r("3 L 5"), r("9 I calm 5 10 0 0")], pending);
    expect(got.soleLoad).toBe(3);
    expect([...got.culprits.keys()]).toEqual([]);
    expect(attributeCrash([r("3 L 5"), r("2 C")], pending).soleLoad).toBeUndefined();
  });

  test("slot records parse with the hook's position", () => {
    expect(parseSlot("")).toBeUndefined();
    expect(parseSlot("x I boom")).toBeUndefined();
    expect(parseSlot("4 Q boom")).toBeUndefined();
    expect(parseSlot("4 I boom")).toEqual({ taskId: 4, phase: "I", hook: "boom" });
    expect(parseSlot("4 I boom 100 20 7 3")).toEqual({ taskId: 4, phase: "I", hook: "boom", startMs: 100, budgetMs: 20, tid: 7, position: 3 });
    expect(parseSlot("4 X boom 2")).toBeUndefined();
    expect(parseSlot("0 R sha256:ab")).toEqual({ taskId: 0, phase: "R", digest: "sha256:ab" });
  });
});
