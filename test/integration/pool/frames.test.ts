import type { ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { afterEach, describe, expect, test } from "vitest";
import { encodeFrame, FrameKind } from "../../../src/pool/frames.js";
import type { Sandbox } from "../../../src/pool/index.js";
import { busyCode, bundle, CONTINUE_CODE, hook, startSandbox, task, trailBundle, until, VcpError } from "./helpers.js";

/**
 * The framed channel between the supervisor and the sandbox host (src/pool/frames.ts) under bad
 * input: a corrupt stream in either direction restarts the host and answers the chains in flight
 * `crashed` (abort for fail_closed), never a hang; a frame over the limit is refused with a coded
 * error naming it, and nothing restarts.
 *
 * Corruption is injected at the real channels: the supervisor's end of the host's fd 4 (calls, to the
 * host's main thread) or of a worker channel (fd 5 + i: chains, to worker i). Bytes written to it reach
 * the host; bytes emitted as data on it are what the supervisor reads from the host.
 */
function frameChannel(sandbox: Sandbox, fd = 4): Socket {
  const host = (sandbox as unknown as { hosts: { host?: { child: ChildProcess } } }).hosts.host;
  const socket = host?.child.stdio[fd] as Socket | undefined;
  if (socket === undefined) throw new Error("no live sandbox host");
  return socket;
}

/** A slow bundle (busy 400 ms) and a quick one, loaded. */
async function loadSlowAndFine(box: Sandbox) {
  const slow = bundle("slow", SLOW);
  const good = bundle("fine", CONTINUE_CODE);
  await box.loadBundle(slow);
  await box.loadBundle(good);
  return { slow, good };
}

/** A hook busy long enough (3 s) that only the host's death ends its chain first. */
const VERY_SLOW = busyCode(3000);

const SLOW = busyCode(400);

describe("sandbox pool: the frame channel under bad input", () => {
  let sandbox: Sandbox | undefined;
  afterEach(async () => {
    await sandbox?.close();
    sandbox = undefined;
  });

  test("a corrupt frame sent to the host: the host exits, the chain in flight is answered crashed, the next chain runs", async () => {
    sandbox = await startSandbox({ threads: 2 });
    const restarts: Record<string, unknown>[] = [];
    sandbox.on("restart", (info) => restarts.push(info));
    const slow = bundle("slow", SLOW);
    const good = trailBundle("good");
    await sandbox.loadBundle(slow);
    await sandbox.loadBundle(good);
    const pid = sandbox.stats().hostPid;
    const running = sandbox.runChain(task([hook("wait", slow, { timeout_ms: 20_000 }), hook("mark", good)], 1, { user: "u" }));
    await until(() => sandbox!.stats().inFlight === 1, "the chain in flight");
    // A header with a wrong magic byte and a length that announces a body that never comes.
    const frame = Buffer.from(encodeFrame(FrameKind.chain, 999, 1, { payload: "{}" }, 1 << 20, "test"));
    frame[5] = 0x00;
    frameChannel(sandbox).write(frame);
    const { result } = await running;
    expect(result.status).toBe("completed"); // fail-open
    expect(result.context).toEqual({ user: "u" });
    expect(result.hook_results).toEqual([expect.objectContaining({ hook: "wait", outcome: "crashed", status: "continue" })]);
    expect(result.hook_results[0]!.error).toMatch(/corrupt frame stream \(exit code 76\)/);
    await until(() => sandbox!.stats().ready, "the restarted host");
    expect(sandbox.stats()).toMatchObject({ restarts: 1, quarantined: [], suspectBundles: [] });
    expect(sandbox.stats().hostPid).not.toBe(pid);
    expect(restarts[0]).toMatchObject({ code: 76, crashedChains: 1, requeuedChains: 0 });
    expect(String(restarts[0]!["stderrTail"])).toMatch(/corrupt sandbox frame stream: bad magic/);
    const after = await sandbox.runChain(task([hook("mark", good)], 1, { user: "v" }));
    expect(after.result.context).toEqual({ user: "v", trail: ["good"] });
  });

  test("corrupt bytes from the host: the supervisor kills it, every chain in flight is answered (fail_closed aborts)", async () => {
    sandbox = await startSandbox({ threads: 2 });
    const { slow, good } = await loadSlowAndFine(sandbox);
    const open = sandbox.runChain(task([hook("wait", slow, { timeout_ms: 20_000 })]));
    const guarded = sandbox.runChain(task([hook("wait2", slow, { timeout_ms: 20_000 }), hook("guard", good, { fail_closed: true })]));
    await until(() => sandbox!.stats().inFlight === 2, "two chains in flight");
    const junk = Buffer.alloc(40, 0x41);
    junk.writeUInt32LE(36, 0); // a plausible length, then no frame header
    frameChannel(sandbox).emit("data", junk);
    const [a, b] = await Promise.all([open, guarded]);
    expect(a.result).toMatchObject({ status: "completed", hook_results: [expect.objectContaining({ hook: "wait", outcome: "crashed" })] });
    expect(b.result).toMatchObject({ status: "aborted", aborted_by: "guard", hook_results: [expect.objectContaining({ hook: "guard", outcome: "crashed", status: "abort" })] });
    expect(a.result.hook_results[0]!.error).toMatch(/corrupt frame stream \(killed by the supervisor: corrupt sandbox frame stream: bad magic/);
    await until(() => sandbox!.stats().ready, "the restarted host");
    expect(sandbox.stats()).toMatchObject({ restarts: 1, watchdogKills: 0, quarantined: [] });
    const after = await sandbox.runChain(task([hook("fine", good)]));
    expect(after.result.hook_results[0]!.outcome).toBe("ok");
  });

  test("a corrupt frame sent to a worker's channel: the worker closes it, the host is killed, the chain in flight is answered crashed", async () => {
    sandbox = await startSandbox({ threads: 2 });
    const slow = bundle("slow", VERY_SLOW);
    await sandbox.loadBundle(slow);
    const pid = sandbox.stats().hostPid;
    // The first chain goes to worker 0; worker 1 is idle and reads the corrupt frame at once.
    const running = sandbox.runChain(task([hook("wait", slow, { timeout_ms: 20_000 })], 1, { user: "u" }));
    await until(() => sandbox!.stats().inFlight === 1, "the chain in flight");
    const frame = Buffer.from(encodeFrame(FrameKind.chain, 999, 1, { payload: "{}" }, 1 << 20, "test"));
    frame[5] = 0x00;
    frameChannel(sandbox, 6).write(frame);
    const { result } = await running;
    expect(result).toMatchObject({ status: "completed", context: { user: "u" } });
    expect(result.hook_results).toEqual([expect.objectContaining({ hook: "wait", outcome: "crashed" })]);
    expect(result.hook_results[0]!.error).toMatch(/killed by the supervisor: corrupt sandbox frame stream: worker channel 1 closed while the host runs/);
    await until(() => sandbox!.stats().ready, "the restarted host");
    expect(sandbox.stats().hostPid).not.toBe(pid);
    expect(sandbox.stats()).toMatchObject({ restarts: 1, quarantined: [] });
  });

  test("corrupt bytes from a worker's channel: the supervisor kills the host, the chain in flight is answered (fail_closed aborts)", async () => {
    sandbox = await startSandbox({ threads: 2 });
    const { slow, good } = await loadSlowAndFine(sandbox);
    const guarded = sandbox.runChain(task([hook("wait", slow, { timeout_ms: 20_000 }), hook("guard", good, { fail_closed: true })]));
    await until(() => sandbox!.stats().inFlight === 1, "the chain in flight");
    const junk = Buffer.alloc(40, 0x41);
    junk.writeUInt32LE(36, 0);
    frameChannel(sandbox, 5).emit("data", junk);
    const { result } = await guarded;
    expect(result).toMatchObject({ status: "aborted", aborted_by: "guard", hook_results: [expect.objectContaining({ hook: "guard", outcome: "crashed", status: "abort" })] });
    await until(() => sandbox!.stats().ready, "the restarted host");
    expect(sandbox.stats()).toMatchObject({ restarts: 1, watchdogKills: 0, quarantined: [] });
    const after = await sandbox.runChain(task([hook("fine", good)]));
    expect(after.result.hook_results[0]!.outcome).toBe("ok");
  });

  test("a request over the frame limit is refused before it is sent, naming the limit; nothing restarts", async () => {
    sandbox = await startSandbox({ threads: 1, frameBytes: 16 * 1024 });
    const good = bundle("fine", CONTINUE_CODE);
    await sandbox.loadBundle(good);
    const error = await sandbox.runChain(task([hook("fine", good)], 1, { blob: "z".repeat(20 * 1024) })).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(VcpError);
    expect(error).toMatchObject({ code: "SANDBOX_FRAME_TOO_LARGE", details: { limit: 16 * 1024, frame: "chain request" } });
    expect((error as Error).message).toMatch("above the frame limit of 16384 bytes (sandbox frameBytes)");
    const ok = await sandbox.runChain(task([hook("fine", good)], 1, { blob: "small" }));
    expect(ok.result.hook_results[0]!.outcome).toBe("ok");
    expect(sandbox.stats()).toMatchObject({ restarts: 0, inFlight: 0 });
  });

  test("a reply over the frame limit is refused in the worker with the same coded error; nothing restarts", async () => {
    sandbox = await startSandbox({ threads: 1, frameBytes: 16 * 1024 });
    const grow = bundle(
      "grow",
      `var __vcp_bundle = { act(input) { return { status: "modify", modified_context: { ...input.context, blob: "g".repeat(40 * 1024) } }; } };`,
    );
    const good = bundle("fine", CONTINUE_CODE);
    await sandbox.loadBundle(grow);
    await sandbox.loadBundle(good);
    const error = await sandbox.runChain(task([hook("grow", grow)])).catch((err: unknown) => err);
    expect(error).toMatchObject({ code: "SANDBOX_FRAME_TOO_LARGE", details: { limit: 16 * 1024, frame: "sandbox reply" } });
    const ok = await sandbox.runChain(task([hook("fine", good)]));
    expect(ok.result.hook_results[0]!.outcome).toBe("ok");
    expect(sandbox.stats().restarts).toBe(0);
  });

  test("frameBytes outside its range is refused at start, naming the field", async () => {
    await expect(startSandbox({ frameBytes: 100 })).rejects.toMatchObject({ code: "INVALID_CONFIG", details: { field: "frameBytes" } });
  });
});
