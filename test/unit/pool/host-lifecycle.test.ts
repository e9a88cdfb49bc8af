import type { ChildProcess } from "node:child_process";
import { describe, expect, test } from "vitest";
import { VcpError } from "../../../src/errors.js";
import { silentLogger } from "../../../src/observe/events.js";
import { BundleRegistry } from "../../../src/pool/bundle-registry.js";
import { HostKeeper, markReady, reloadBundles, reloadVerdict, startWithRetries, whenReady } from "../../../src/pool/host-lifecycle.js";
import type { HostHandle, HostListener } from "../../../src/pool/host-process.js";
import type { HostStartConfig } from "../../../src/pool/protocol.js";

// The host's start, restart backoff and reload decisions, without a process: a host handle whose
// child only records the signals it was sent.

function fakeHost(): HostHandle & { signals: string[] } {
  const signals: string[] = [];
  const child = { pid: 4242, kill: (signal: string) => signals.push(signal) } as unknown as ChildProcess;
  return { child, generation: 1, ready: false, disconnected: false, framesClosed: false, gone: false, stderrTail: "", writer: undefined as never, channels: [], signals };
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

  test("startWithRetries retries a failed start after 0.5 s, 1 s … until one succeeds, each attempt getting the time left", async () => {
    let attempts = 0;
    const failures: Array<[number, number | undefined]> = [];
    const timeouts: number[] = [];
    const outcome = await startWithRetries(
      async (timeoutMs) => {
        timeouts.push(timeoutMs);
        if (++attempts < 3) throw new VcpError("SANDBOX_START_FAILED", `attempt ${attempts}`);
      },
      60_000,
      { stopping: () => false, onFailure: (_err, attempt, retryInMs) => failures.push([attempt, retryInMs]) },
    );
    expect(outcome).toBe("started");
    expect(failures).toEqual([[1, 500], [2, 1000]]);
    expect(timeouts[0]).toBeGreaterThan(59_000);
    expect(timeouts[2]).toBeLessThan(60_000 - 1400); // the waits came out of the budget
  });

  test("startWithRetries gives up once no wait fits in pool.start_timeout_ms, with the last error; stops when the sandbox is closing", async () => {
    const gaveUp = await startWithRetries(() => Promise.reject(new Error("fork failed")), 1000, { stopping: () => false, onFailure: () => undefined });
    expect(gaveUp).toMatchObject({ code: "SANDBOX_START_FAILED", message: "the sandbox did not start within pool.start_timeout_ms (1000 ms, 2 attempts): fork failed" });
    let starts = 0;
    const stopped = await startWithRetries(async () => void starts++, 60_000, { stopping: () => true, onFailure: () => undefined });
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

describe("HostKeeper: one live host at a time", () => {
  /** A keeper over fake forks: each fork is a host whose events the test fires by hand. */
  function keeper(startTimeoutMs?: number) {
    const forks: { host: ReturnType<typeof fakeHost>; listener: HostListener }[] = [];
    const crashes: HostHandle[] = [];
    const frames: HostHandle[] = [];
    const hosts = new HostKeeper(
      (generation) => ({ generation }) as HostStartConfig,
      { onFrame: (host) => frames.push(host), onProtocolError: () => undefined, onCrash: (host) => crashes.push(host) },
      (config, listener) => {
        const host = { ...fakeHost(), generation: config.generation };
        forks.push({ host, listener });
        return host;
      },
      silentLogger,
      startTimeoutMs,
    );
    const ready = (i: number): void => forks[i]!.listener.onMessage(forks[i]!.host, { t: "ready", pid: 1 });
    const die = (i: number): void => {
      forks[i]!.host.exit = { code: null, signal: "SIGKILL" };
      forks[i]!.listener.onGone(forks[i]!.host);
    };
    return { hosts, forks, crashes, frames, ready, die };
  }

  test("a started host is open for chains; its death after ready is a crash; events of a dead host are ignored", async () => {
    const k = keeper();
    const started = k.hosts.start();
    expect(k.hosts.open).toBeUndefined(); // forked, not ready
    k.ready(0);
    await started;
    expect(k.hosts.open).toBe(k.forks[0]!.host);
    k.die(0);
    expect(k.crashes).toEqual([k.forks[0]!.host]);
    expect(k.hosts.host).toBeUndefined();
    k.forks[0]!.listener.onFrame(k.forks[0]!.host, new Uint8Array(), {} as never, undefined);
    expect(k.frames).toEqual([]);
  });

  test("a host that dies before it is ready is started again after a backoff, and the start completes (a busy node, not a crash loop)", async () => {
    const k = keeper();
    const started = k.hosts.start();
    k.die(0); // e.g. killed while starting on an overloaded node
    await new Promise((resolve) => setTimeout(resolve, 700)); // the first wait is 500 ms
    expect(k.forks).toHaveLength(2);
    expect(k.crashes).toEqual([]); // a failed start, not a crash
    k.ready(1);
    await expect(started).resolves.toBeUndefined();
    expect(k.hosts.open).toBe(k.forks[1]!.host);
  });

  test("a host still starting when pool.start_timeout_ms is up is killed and the start fails, naming the setting", async () => {
    const k = keeper(1000);
    await expect(k.hosts.start()).rejects.toMatchObject({
      code: "SANDBOX_START_FAILED",
      message: expect.stringMatching(/^the sandbox did not start within pool\.start_timeout_ms \(1000 ms, 1 attempt\): .*no ready message within \d+ ms/),
    });
    expect(k.forks[0]!.host.signals).toEqual(["SIGKILL"]);
  });

  test("a restart holds chains back until its reloads are done, with the new generation", async () => {
    const k = keeper();
    const first = k.hosts.start();
    k.ready(0);
    await first;
    k.die(0);
    let reloadedOn: HostHandle | undefined;
    let openDuringReload: HostHandle | undefined = k.forks[0]!.host;
    const restart = k.hosts.restart(async (host) => {
      reloadedOn = host;
      openDuringReload = k.hosts.open;
    });
    await Promise.resolve();
    k.ready(1);
    expect(await restart).toBe("ready");
    expect(reloadedOn?.generation).toBe(2);
    expect(openDuringReload).toBeUndefined(); // SECURITY: nothing else runs while bundles reload
    expect(k.hosts.open).toBe(k.forks[1]!.host);
  });

  test("a reload that kills the new host hands over to the newer restart", async () => {
    const k = keeper();
    const first = k.hosts.start();
    k.ready(0);
    await first;
    let newer: Promise<unknown> | undefined;
    const older = k.hosts.restart(async () => {
      k.die(1); // the reload killed it: its crash starts the newer restart
      newer = k.hosts.restart(async () => undefined);
    });
    await Promise.resolve();
    k.ready(1);
    expect(await older).toBe("superseded");
    await Promise.resolve();
    k.ready(2);
    expect(await newer).toBe("ready");
    expect(k.hosts.reloading).toBe(false);
  });

  test("stop asks a ready host to close and waits for it to exit; its exit is not a crash", async () => {
    const k = keeper();
    const first = k.hosts.start();
    k.ready(0);
    await first;
    const closed: HostHandle[] = [];
    const stopped = k.hosts.stop((host) => closed.push(host));
    expect(closed).toEqual([k.forks[0]!.host]);
    expect(k.hosts.stopping).toBe(true);
    k.die(0);
    await stopped;
    expect(k.crashes).toEqual([]);
    expect(k.hosts.host).toBeUndefined();
  });

  test("kill records why and sends SIGKILL", () => {
    const k = keeper();
    void k.hosts.start().catch(() => undefined);
    const host = k.forks[0]!.host;
    k.hosts.kill(host, { kind: "wedged", taskId: 3, detail: "asleep" });
    expect(host.killed).toMatchObject({ kind: "wedged", taskId: 3 });
    expect(host.signals).toEqual(["SIGKILL"]);
  });
});

describe("reloadBundles: a restarted host gets the bundles back one at a time", () => {
  function registry(): BundleRegistry {
    const bundles = new BundleRegistry();
    for (const d of ["sha256:a", "sha256:b", "sha256:c", "sha256:d"]) bundles.loaded({ name: `b-${d}`, digest: d, trust: "deployment" });
    bundles.quarantine({ digest: "sha256:d" });
    return bundles;
  }

  test("in load order, skipping quarantined ones; a refusal is quarantined, a slow load stays loaded", async () => {
    const bundles = registry();
    const loads: string[] = [];
    const quarantined: string[] = [];
    const slow: string[] = [];
    await reloadBundles(
      bundles,
      async (digest) => {
        loads.push(digest);
        if (digest === "sha256:a") throw new VcpError("INVALID_BUNDLE", "top-level code ran past its budget", { timed_out: true });
        if (digest === "sha256:b") throw new VcpError("INVALID_BUNDLE", "does not compile");
      },
      () => true,
      { quarantine: (info) => quarantined.push(info.digest), loadsOnFirstUse: (meta) => slow.push(meta.digest) },
    );
    expect(loads).toEqual(["sha256:a", "sha256:b", "sha256:c"]);
    expect(quarantined).toEqual(["sha256:b"]);
    expect(slow).toEqual(["sha256:a"]);
  });

  test("a reload that kills the host as the only code running quarantines its bundle; nothing more is reloaded", async () => {
    const bundles = registry();
    let alive = true;
    const loads: string[] = [];
    const quarantined: string[] = [];
    await reloadBundles(
      bundles,
      async (digest) => {
        loads.push(digest);
        if (digest === "sha256:b") {
          alive = false;
          throw new VcpError("INVALID_BUNDLE", "the sandbox host died while loading", { digest, sole: true });
        }
      },
      () => alive,
      { quarantine: (info) => quarantined.push(info.digest), loadsOnFirstUse: () => undefined },
    );
    expect(loads).toEqual(["sha256:a", "sha256:b"]);
    expect(quarantined).toEqual(["sha256:b"]);
  });
});
