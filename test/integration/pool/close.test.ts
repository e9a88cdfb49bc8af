import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { VcpError, bundle, busyCode, hook, startSandbox, task, trailBundle } from "./helpers.js";

describe("sandbox pool: close()", () => {
  test("finishes in-flight and queued chains, then refuses new work with SANDBOX_CLOSED", async () => {
    const codeDir = mkdtempSync(join(tmpdir(), "vcp-pool-close-"));
    try {
      const sandbox = await startSandbox({ threads: 1, codeDir });
      const busy = bundle("busy", busyCode(400));
      const tail = trailBundle("tail");
      await sandbox.loadBundle(busy);
      await sandbox.loadBundle(tail);
      const h = [hook("busy", busy, { timeout_ms: 10_000 }), hook("tail", tail)];
      const inFlight = sandbox.runChain(task(h));
      const queued = sandbox.runChain(task(h));
      // One chain runs; the second waits in the host, ready for the thread (pipelining).
      expect(sandbox.stats()).toMatchObject({ inFlight: 2, queued: 1 });

      const closing = sandbox.close();
      const refused = await sandbox.runChain(task(h)).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(VcpError);
      expect(refused).toMatchObject({ code: "SANDBOX_CLOSED" });
      await expect(sandbox.loadBundle(bundle("late", "var __vcp_bundle = {};"))).rejects.toMatchObject({ code: "SANDBOX_CLOSED" });

      for (const done of await Promise.all([inFlight, queued])) {
        expect(done.result.hook_results.map((r) => r.outcome)).toEqual(["ok", "ok"]);
        expect(done.result.context.trail).toEqual(["tail"]);
      }
      await closing;
      await sandbox.close(); // idempotent
      await expect(sandbox.runChain(task(h))).rejects.toMatchObject({ code: "SANDBOX_CLOSED" });
      // The bundle files stay in a caller's code directory; the crash-attribution slots go.
      expect(readdirSync(codeDir).filter((f) => f.endsWith(".js"))).toHaveLength(2);
      expect(existsSync(join(codeDir, "slots"))).toBe(false);
    } finally {
      rmSync(codeDir, { recursive: true, force: true });
    }
  });

  test("a sandbox that was never used closes", async () => {
    const sandbox = await startSandbox();
    await sandbox.close();
    expect(sandbox.stats()).toMatchObject({ inFlight: 0, queued: 0, restarts: 0 });
  });
});
