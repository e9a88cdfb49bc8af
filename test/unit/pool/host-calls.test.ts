import { describe, expect, test } from "vitest";
import { HostCalls, type PendingCall } from "../../../src/pool/host-calls.js";

// The supervisor's calls to the host (load, unload, close), without a process.

describe("HostCalls: loads, unloads and closes until answered or the host dies", () => {
  test("a call the host can take is sent and settled by its reply; an error reply keeps its code", async () => {
    const calls = new HostCalls();
    const sent: PendingCall[] = [];
    const send = (call: PendingCall): void => {
      calls.sending(call);
      sent.push(call);
    };
    const load = calls.make({ t: "load", id: 1, digest: "sha256:a" }, true, send);
    const bad = calls.make({ t: "load", id: 2, digest: "sha256:b" }, true, send);
    expect(sent.map((c) => c.id)).toEqual([1, 2]);
    expect(calls.loadsInFlight()).toBe(true);
    expect(calls.loadDigest(2)).toBe("sha256:b");
    expect(calls.answer(1, { ok: true, value: { exports: ["act"] } })).toBe(true);
    expect(calls.answer(1, { ok: true, value: null })).toBe(false); // answered already: not ours any more
    expect(calls.answer(2, { ok: false, error: { code: "INVALID_BUNDLE", message: "no" } })).toBe(true);
    await expect(load).resolves.toEqual({ exports: ["act"] });
    await expect(bad).rejects.toMatchObject({ code: "INVALID_BUNDLE" });
    expect(calls.idle).toBe(true);
  });

  test("a call made while the host cannot take it is held, in order, until the host is ready", () => {
    const calls = new HostCalls();
    const never = (): void => {
      throw new Error("not sent while held");
    };
    void calls.make({ t: "unload", id: 3, digest: "sha256:a" }, false, never);
    void calls.make({ t: "load", id: 4, digest: "sha256:b" }, false, never);
    expect(calls.idle).toBe(false);
    expect(calls.loadsInFlight()).toBe(false); // held, not running
    expect(calls.takeHeld().map((c) => c.id)).toEqual([3, 4]);
    expect(calls.takeHeld()).toEqual([]);
  });

  test("when the host dies, a load fails INVALID_BUNDLE (sole only when its bundle alone ran); an unload resolves", async () => {
    const calls = new HostCalls();
    const send = (call: PendingCall): void => calls.sending(call);
    const alone = calls.make({ t: "load", id: 5, digest: "sha256:a" }, true, send);
    const other = calls.make({ t: "load", id: 6, digest: "sha256:b" }, true, send);
    const unload = calls.make({ t: "unload", id: 7, digest: "sha256:c" }, true, send);
    calls.hostDied("signal SIGKILL", (id) => id === 5);
    await expect(alone).rejects.toMatchObject({ code: "INVALID_BUNDLE", details: { digest: "sha256:a", sole: true } });
    await expect(other).rejects.toMatchObject({ code: "INVALID_BUNDLE", details: { digest: "sha256:b", sole: false }, message: expect.stringContaining("signal SIGKILL") });
    await expect(unload).resolves.toBeNull();
    expect(calls.idle).toBe(true);
  });

  test("giving up fails every held call with the sandbox's error", async () => {
    const calls = new HostCalls();
    const held = calls.make({ t: "load", id: 8, digest: "sha256:a" }, false, () => undefined);
    calls.rejectHeld(Object.assign(new Error("cannot start"), { code: "SANDBOX_START_FAILED" }));
    await expect(held).rejects.toMatchObject({ code: "SANDBOX_START_FAILED" });
  });
});
