import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import type { VcpError } from "../../../src/errors.js";
import { forkHost, type HostHandle } from "../../../src/pool/host-process.js";
import type { HostStartConfig } from "../../../src/pool/protocol.js";
import { processEnded } from "../../../src/pool/slots.js";

/**
 * A worker channel that closes while its host keeps running (its worker thread ended; piscina would
 * start another, which has no channel) must not leave the chains sent to it waiting: the supervisor
 * hears a protocol error, which kills and restarts the host (src/pool/host-process.ts). A stand-in
 * host closes its first worker channel and stays alive; a second one exits as it closes it (a dying
 * host closes its channels before its exit is reported), which is a death, not a lost channel.
 */

const dir = mkdtempSync(join(tmpdir(), "vcp-channel-loss-"));
let host: HostHandle | undefined;
afterEach(() => {
  host?.child.kill("SIGKILL");
  host = undefined;
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function standIn(name: string, body: string): string {
  const path = join(dir, name);
  writeFileSync(path, `const { closeSync } = require("node:fs");\nprocess.on("message", () => { ${body} });\n`);
  return path;
}

function start(entry: string): { errors: VcpError[]; gone: Promise<void> } {
  const errors: VcpError[] = [];
  let goneNow: () => void = () => undefined;
  const gone = new Promise<void>((resolve) => (goneNow = resolve));
  host = forkHost(entry, { threads: 2, generation: 1, frameBytes: 1 << 20 } as HostStartConfig, {
    onMessage: () => undefined,
    onFrame: () => undefined,
    onProtocolError: (_host, err) => errors.push(err),
    onGone: () => goneNow(),
  });
  return { errors, gone };
}

describe("sandbox pool: a lost worker channel", () => {
  test("a host that keeps running without one of its worker channels is reported as a protocol failure", async () => {
    const { errors } = start(standIn("lose-channel.cjs", "closeSync(5); setInterval(() => undefined, 1000);"));
    await expect.poll(() => errors.length, { timeout: 10_000 }).toBe(1);
    expect(errors[0]).toMatchObject({ code: "SANDBOX_PROTOCOL_ERROR", message: expect.stringContaining("worker channel 0 closed while the host runs") });
    expect(host!.exit).toBeUndefined();
  });

  test("a host that dies is gone, not a lost channel", async () => {
    const { errors, gone } = start(standIn("die.cjs", "process.exit(3);"));
    await gone;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(errors).toEqual([]);
    expect(host!.exit).toEqual({ code: 3, signal: null });
  });
});

describe("processEnded (/proc)", () => {
  test("a running process has not ended; one that exited and was reaped has", async () => {
    expect(processEnded(process.pid)).toBe(false);
    const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
    await new Promise((resolve) => child.once("exit", resolve));
    expect(processEnded(child.pid!)).toBe(true);
  });
});
