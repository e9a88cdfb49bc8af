import { describe, expect, test } from "vitest";
import { DEFAULTS } from "../../../src/config/defaults.js";
import type { Logger } from "../../../src/observe/events.js";
import { DEFAULT_FRAME_BYTES, MIN_FRAME_BYTES } from "../../../src/pool/frames.js";
import { hostConfig, resolveSandboxOptions } from "../../../src/pool/options.js";
import type { GuestLogLine } from "../../../src/sandbox-host/types.js";

// startSandbox's options, checked once at start without a process.

function recordingLogger(enabled: boolean): Logger & { lines: [string, object, string | undefined][] } {
  const lines: [string, object, string | undefined][] = [];
  const at = (level: string) => (obj: object, msg?: string) => void lines.push([level, obj, msg]);
  return { lines, isLevelEnabled: () => enabled, debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") };
}

describe("resolveSandboxOptions", () => {
  test("defaults: the deployment defaults, fair share on, the default frame limit, no profile modules", () => {
    const settings = resolveSandboxOptions({});
    expect(settings.host).toMatchObject({ threads: DEFAULTS.pool.threads, maxQueue: DEFAULTS.pool.max_queue, frameBytes: DEFAULT_FRAME_BYTES, auditDiffs: false });
    expect(settings.host).not.toHaveProperty("profileModules");
    expect(settings.fairShareWindowMs).toBe(3000);
    expect(settings.slowBundle).toEqual({ timeouts: 3, windowMs: 60_000 });
    expect(resolveSandboxOptions({ fairShare: false }).fairShareWindowMs).toBeUndefined();
  });

  test.each([
    [{ threads: 0 }, "threads"],
    [{ threads: 1.5 }, "threads"],
    [{ maxQueue: -1 }, "maxQueue"],
    [{ frameBytes: MIN_FRAME_BYTES - 1 }, "frameBytes"],
    [{ slowBundle: { timeouts: 0, windowMs: 1 } }, "slowBundle.timeouts"],
    [{ fairShare: { windowMs: 0 } }, "fairShare.windowMs"],
    [{ limits: { jsonDepth: 1 } }, "jsonDepth"],
    [{ limits: { isolateMemoryMb: 0 } }, "isolateMemoryMb"],
  ])("%o is INVALID_CONFIG naming %s, before any host exists", (options, field) => {
    expect(() => resolveSandboxOptions(options)).toThrow(expect.objectContaining({ code: "INVALID_CONFIG", details: expect.objectContaining({ field }) }));
  });

  test("a host generation is started with the settings, its directories and its number", () => {
    const settings = resolveSandboxOptions({ threads: 3, profileModules: ["file:///p.js"] });
    expect(hostConfig(settings, { dir: "/code", slotDir: "/code/slots" }, 7)).toMatchObject({ threads: 3, profileModules: ["file:///p.js"], codeDir: "/code", slotDir: "/code/slots", generation: 7 });
  });

  test("guest log lines go to onGuestLog in order; one that throws is logged, the rest still arrive", () => {
    const logger = recordingLogger(true);
    const seen: string[] = [];
    const { deliverLogs } = resolveSandboxOptions({
      logger,
      onGuestLog: (line) => {
        if (line.message === "bad") throw new Error("sink broke");
        seen.push(line.message);
      },
    });
    const line = (message: string): GuestLogLine => ({ bundle: "b", hook: "h", level: "info", message });
    deliverLogs([line("one"), line("bad"), line("two")]);
    expect(seen).toEqual(["one", "two"]);
    expect(logger.lines).toEqual([["error", { err: expect.any(Error) }, "sandbox: onGuestLog threw"]]);
  });

  test("without onGuestLog, guest lines go to the logger at their level when it is enabled", () => {
    const on = recordingLogger(true);
    resolveSandboxOptions({ logger: on }).deliverLogs([{ bundle: "b", hook: "h", level: "warn", message: "careful", fields: { n: 1 } }]);
    expect(on.lines).toEqual([["warn", { bundle: "b", hook: "h", fields: { n: 1 } }, "careful"]]);
    const off = recordingLogger(false);
    resolveSandboxOptions({ logger: off }).deliverLogs([{ bundle: "b", hook: "h", level: "warn", message: "careful" }]);
    expect(off.lines).toEqual([]);
  });
});
