// The approvals coordinator alone (src/pipeline/approvals.ts) over the local store: decisions are
// durable before they are visible, an unwritable request creates nothing, concurrent decisions,
// shutdown, granting words.
import { describe, expect, test, vi } from "vitest";
import { createApprovals, isGranting, MAX_INPUT_SHOWN, type ApprovalAsk } from "../../../src/pipeline/approvals.js";
import { createLocalApprovalStore } from "../../../src/pipeline/approvals-local.js";
import { systemClock } from "../../../src/observe/events.js";

function coordinator() {
  const records: Array<Record<string, unknown>> = [];
  const io = { fail: false, gate: undefined as Promise<void> | undefined };
  const audit = {
    writer: {
      append: async (record: Record<string, unknown>) => {
        if (io.gate !== undefined) await io.gate;
        if (io.fail) throw new Error("disk full");
        records.push(record);
      },
    },
  };
  const approvals = createApprovals({ store: createLocalApprovalStore(), clock: systemClock, audit: () => audit as never });
  return { approvals, records, io };
}

const ask = (over: Partial<ApprovalAsk> = {}): ApprovalAsk => ({
  profile: "amplifier", event: "tool:pre", session: "s1", owner: "alice", hook: "guard", prompt: "Run rm?", options: ["Allow", "Deny"], default: "deny", timeoutS: 60, ...over,
});

describe("approvals coordinator", () => {
  test("granted only for allow / allow once / allow always, in any case and spacing", () => {
    for (const yes of ["allow", "Allow", " ALLOW ONCE ", "Allow Always"]) expect(isGranting(yes), yes).toBe(true);
    for (const no of ["deny", "allowed", "allow twice", "yes", "ok", "always allow"]) expect(isGranting(no), no).toBe(false);
  });

  test("a request the audit log cannot take is not created (no pending approval, nothing counted)", async () => {
    const { approvals, io } = coordinator();
    io.fail = true;
    await expect(approvals.request(ask())).rejects.toMatchObject({ code: "AUDIT_WRITE_FAILED" });
    expect(await approvals.list()).toEqual([]);
    expect((await approvals.stats()).pending).toBe(0);
    await approvals.close();
  });

  test("a decision the audit log cannot take is not made: the approval stays pending and can be decided again", async () => {
    const { approvals, records, io } = coordinator();
    const a = await approvals.request(ask());
    io.fail = true;
    await expect(approvals.decide(a.id, "allow")).rejects.toMatchObject({ code: "AUDIT_WRITE_FAILED" });
    expect((await approvals.get(a.id)).state).toBe("pending");
    io.fail = false;
    await expect(approvals.decide(a.id, "deny")).resolves.toMatchObject({ state: "denied" });
    expect(records.map((r) => [r.kind, r.status])).toEqual([["approval_request", "pending"], ["approval_decision", "denied"]]);
    await approvals.close();
  });

  test("while one decision is being recorded a second one is APPROVAL_DECIDED; the first stands", async () => {
    const { approvals, io } = coordinator();
    const a = await approvals.request(ask());
    let open!: () => void;
    io.gate = new Promise<void>((r) => (open = r));
    const first = approvals.decide(a.id, "allow");
    await expect(approvals.decide(a.id, "deny")).rejects.toMatchObject({ code: "APPROVAL_DECIDED" });
    open();
    io.gate = undefined;
    await expect(first).resolves.toMatchObject({ state: "granted", decision: "allow" });
    expect(await approvals.get(a.id)).toMatchObject({ state: "granted", decision: "allow" });
    await approvals.close();
  });

  test("close expires pending approvals with their defaults and answers their waiters", async () => {
    const { approvals, records } = coordinator();
    const a = await approvals.request(ask({ default: "allow" }));
    const waiting = approvals.wait(a.id);
    await approvals.close();
    await expect(waiting).resolves.toMatchObject({ state: "expired", decision: "allow", decided_by: "shutdown" });
    expect(records.at(-1)).toMatchObject({ kind: "approval_decision", status: "expired" });
    await expect(approvals.request(ask())).rejects.toMatchObject({ code: "SANDBOX_CLOSED" });
  });

  test("prompts and options are bounded; at most 16 options are kept", async () => {
    const { approvals } = coordinator();
    const a = await approvals.request(ask({ prompt: "x".repeat(10_000), options: Array.from({ length: 40 }, (_, i) => `opt${i}`) }));
    expect(a.prompt.length).toBeLessThanOrEqual(4097);
    expect(a.options).toHaveLength(16);
    await approvals.close();
  });

  test("a huge input costs what its shown 16 KiB cost: the redactor stops reading at the bound", async () => {
    const { approvals } = coordinator();
    let reads = 0;
    const list = new Proxy(Array.from({ length: 1_000_000 }, (_, i) => ({ i, note: "Bearer abcdefgh" })), {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const a = await approvals.request(ask({ input: { tool_name: "write", tool_input: { list } } }));
    expect(reads).toBeLessThan(2 * MAX_INPUT_SHOWN / 10);
    expect(a.input_truncated).toBe(true);
    expect(a.input).toHaveLength(MAX_INPUT_SHOWN);
    expect(a.input!.startsWith('{"tool_name":"write","tool_input":{"list":[{"i":0,"note":"Bearer [REDACTED]"},{"i":1,')).toBe(true);
    // An input under the bound is shown whole, redacted.
    const small = await approvals.request(ask({ input: { tool_name: "write", tool_input: { list: [{ i: 0, note: "Bearer abcdefgh" }] } } }));
    expect(small).toMatchObject({ input: '{"tool_name":"write","tool_input":{"list":[{"i":0,"note":"Bearer [REDACTED]"}]}}', input_truncated: false });
    await approvals.close();
  });

  test("a shared store down for 2 minutes: one warning, one a minute, one 'recovered' line (not one per sweep)", async () => {
    vi.useFakeTimers();
    try {
      const lines: Array<{ level: string; msg: string; fields: Record<string, unknown> }> = [];
      const log = (level: string) => (fields: object, msg = "") => void lines.push({ level, msg, fields: fields as Record<string, unknown> });
      const logger = { isLevelEnabled: () => true, debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error") };
      let down = false;
      const store = { ...createLocalApprovalStore(), holder: "deployment" as const, sweep: { everyMs: 500, due: async () => { if (down) throw new Error("Connection is closed."); return []; } } };
      const approvals = createApprovals({ store, clock: { now: () => Date.now(), wallNow: () => Date.now() }, audit: () => undefined, logger });
      await approvals.start();
      await vi.advanceTimersByTimeAsync(5_000);
      down = true;
      await vi.advanceTimersByTimeAsync(150_000); // 300 sweeps
      const warnings = lines.filter((l) => l.level === "warn");
      expect(warnings.length, warnings.map((w) => w.msg).join("\n")).toBe(3); // down, +60 s, +120 s
      expect(warnings[0]!.msg).toMatch(/approval sweep could not reach the shared store/);
      expect(warnings[2]!.fields).toMatchObject({ failures: expect.any(Number) });
      down = false;
      await vi.advanceTimersByTimeAsync(5_000);
      expect(lines.filter((l) => l.level === "warn")).toHaveLength(3);
      const recovered = lines.filter((l) => l.level === "info");
      expect(recovered).toHaveLength(1);
      expect(recovered[0]!.msg).toMatch(/approval sweep reached the shared store again/);
      await approvals.close();
    } finally {
      vi.useRealTimers();
    }
  });
  test("a slow shared store: one sweep at a time, a tick that finds one running skips", async () => {
    vi.useFakeTimers();
    try {
      let running = 0;
      let most = 0;
      let calls = 0;
      // Each sweep takes 1.8 s (a store waiting out its command timeout), the period is 500 ms.
      const due = async (): Promise<never[]> => {
        calls++;
        most = Math.max(most, ++running);
        await new Promise((r) => setTimeout(r, 1_800));
        running--;
        return [];
      };
      const store = { ...createLocalApprovalStore(), holder: "deployment" as const, sweep: { everyMs: 500, due } };
      const approvals = createApprovals({ store, clock: { now: () => Date.now(), wallNow: () => Date.now() }, audit: () => undefined });
      await approvals.start();
      await vi.advanceTimersByTimeAsync(10_000); // 20 ticks
      expect(most).toBe(1);
      expect(calls).toBeGreaterThanOrEqual(4);
      expect(calls).toBeLessThanOrEqual(6);
      await approvals.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
