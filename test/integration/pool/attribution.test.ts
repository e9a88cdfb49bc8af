import { describe, expect, test } from "vitest";
import { attributeCrash } from "../../../dist/src/pool/crash.js";
import { parseSlot, type SlotRecord } from "../../../dist/src/pool/slots.js";

// Pure rules of crash attribution (src/pool/crash.ts), on slot records as the supervisor reads them.
const digests: Record<string, string> = { boom: "d-boom", calm: "d-calm", idle: "d-idle" };
const pending = new Set([1, 2, 3]);
const digestOf = (taskId: number, hook: string) => (pending.has(taskId) ? digests[hook] : undefined);
const r = (text: string) => parseSlot(text) as SlotRecord;

describe("crash attribution from slot records", () => {
  test.each([
    ["one hook running: it is the culprit", ["1 I boom", "2 C"], [], ["d-boom"], []],
    ["a catastrophic mark wins over other running hooks", ["1 I calm", "2 X boom"], [], ["d-boom"], []],
    ["two hooks running: both become suspects, nobody is quarantined", ["1 I boom", "2 I calm"], [], [], ["d-boom", "d-calm"]],
    ["two running, one already a suspect: the suspect is the culprit", ["1 I boom", "2 I calm"], ["d-boom"], ["d-boom"], []],
    ["a stale record of a finished task is ignored", ["9 I calm", "1 I boom"], [], ["d-boom"], []],
    ["a bundle load was running too: the one running hook is only a suspect", ["1 I calm", "3 L"], [], [], ["d-calm"]],
    ["nothing inside a hook: no culprit", ["1 C", "2 C"], [], [], []],
  ] as const)("%s", (_name, lines, suspects, culprits, newSuspects) => {
    const got = attributeCrash(
      lines.map(r),
      digestOf,
      (d) => (suspects as readonly string[]).includes(d),
      (taskId) => taskId === 3,
    );
    expect([...got.culprits.keys()].sort()).toEqual([...culprits]);
    expect([...got.suspects].sort()).toEqual([...newSuspects]);
  });

  test("malformed slot text is ignored", () => {
    expect(parseSlot("")).toBeUndefined();
    expect(parseSlot("x I boom")).toBeUndefined();
    expect(parseSlot("4 Q boom")).toBeUndefined();
    expect(parseSlot("4 I boom")).toEqual({ taskId: 4, phase: "I", hook: "boom" });
  });
});
