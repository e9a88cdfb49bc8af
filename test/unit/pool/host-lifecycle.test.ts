import type { ChildProcess } from "node:child_process";
import { describe, expect, test } from "vitest";
import { VcpError } from "../../../src/errors.js";
import { markReady, MAX_START_FAILURES, reloadVerdict, StartBackoff, startWithRetries, whenReady } from "../../../src/pool/host-lifecycle.js";
import type { HostHandle } from "../../../src/pool/host-process.js";

// The host's start, restart backoff and reload decisions, without a process: a host handle whose
// child only records the signals it was sent.

function fakeHost(): HostHandle & { signals: string[] } {
  const signals: string[] = [];
  const child = { pid: 4242, kill: (signal: string) => signals.push(signal) } as unknown as ChildProcess;
  return { child, generation: 1, ready: false, disconnected: false, framesClosed: false, gone: false, stderrTail: "", writer: undefined as never, signals };
}

describe("host start and restart", () => {
  test("a start completes on the host's ready message", async () => {
    const host = fakeHost();
    const ready = whenReady(host, 60_000);
    markReady(host);
    await expect(ready).resolves.toBeUndefined();
    expect(host.ready).toBe(true);
    expect(host.onGoneBeforeReady).toBeUndefined(); // a death from now on is a crash
  });

  test("a host that dies before ready fails the start with SANDBOX_START_FAILED and its stderr", async () => {
    const host = fakeHost();
    const ready = whenReady(host, 60_000);
    host.stderrTail = "isolated-vm: cannot load\n";
    host.onGoneBeforeReady?.("exited (code 70, signal null)");
    await expect(ready).rejects.toMatchObject({ code: "SANDBOX_START_FAILED", message: expect.stringMatching(/exited \(code 70[\s\S]*isolated-vm: cannot load/) });
    expect(host.signals).toEqual([]);
  });

  test("a host that never says ready is killed, marked gone (a failed start, not a crash) and the start fails", async () => {
    const host = fakeHost();
    await expect(whenReady(host, 1)).rejects.toMatchObject({ code: "SANDBOX_START_FAILED", message: expect.stringContaining("no ready message within 1 ms") });
    expect(host.signals).toEqual(["SIGKILL"]);
    expect(host.gone).toBe(true);
  });

  test("failed starts back off 200, 400, 800… ms and give up after MAX_START_FAILURES; a ready host resets the count", () => {
    const backoff = new StartBackoff();
    const waits = [];
    for (let i = 1; i < MAX_START_FAILURES; i++) waits.push(backoff.failed());
    expect(waits).toEqual([200, 400, 800, 1600]);
    expect(backoff.failed()).toBeUndefined();
    backoff.started();
    expect(backoff.failed()).toBe(200);
  });

  test("startWithRetries retries until a start succeeds, reporting each failure", async () => {
    let attempts = 0;
    const failures: number[] = [];
    const outcome = await startWithRetries(
      async () => {
        if (++attempts < 3) throw new VcpError("SANDBOX_START_FAILED", `attempt ${attempts}`);
      },
      new StartBackoff(5, 1),
      { stopping: () => false, onFailure: (_err, n) => failures.push(n) },
    );
    expect(outcome).toBe("started");
    expect(failures).toEqual([1, 2]);
  });

  test("startWithRetries gives up with the last error, and stops when the sandbox is closing", async () => {
    const gaveUp = await startWithRetries(() => Promise.reject(new Error("fork failed")), new StartBackoff(2, 1), { stopping: () => false, onFailure: () => undefined });
    expect(gaveUp).toMatchObject({ code: "SANDBOX_START_FAILED", message: "Error: fork failed" });
    let starts = 0;
    const stopped = await startWithRetries(async () => void starts++, new StartBackoff(), { stopping: () => true, onFailure: () => undefined });
    expect(stopped).toBe("stopped");
    expect(starts).toBe(0);
  });
});

describe("reloadVerdict: a bundle that fails to load into a restarted host", () => {
  const timedOut = new VcpError("INVALID_BUNDLE", "top-level code ran past its budget", { timed_out: true });
  const refused = new VcpError("INVALID_BUNDLE", "does not compile");
  const sole = new VcpError("INVALID_BUNDLE", "the sandbox host died while loading", { sole: true });
  const notSole = new VcpError("INVALID_BUNDLE", "the sandbox host died while loading", { sole: false });

  test("a load past its budget on a live host stays loaded (it loads on first use); a refusal is quarantined and the next one reloads", () => {
    expect(reloadVerdict(timedOut, false)).toEqual({ quarantine: false, stop: false });
    expect(reloadVerdict(refused, false)).toEqual({ quarantine: true, stop: false });
  });

  test("a host death is the bundle's doing only when its load was the only code running; either way the reloads stop", () => {
    expect(reloadVerdict(sole, true)).toEqual({ quarantine: true, stop: true });
    expect(reloadVerdict(notSole, true)).toEqual({ quarantine: false, stop: true });
    expect(reloadVerdict(timedOut, true)).toEqual({ quarantine: false, stop: true });
  });
});
