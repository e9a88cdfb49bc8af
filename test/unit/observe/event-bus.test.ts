// The lifecycle event bus (spec §6.4, `runtime.on`): listeners per event in order, a throwing
// listener skipped and logged, `chain.completed` built only while someone listens, and redacted.
import { describe, expect, test } from "vitest";
import { createEventBus } from "../../../src/observe/event-bus.js";
import { silentLogger } from "../../../src/observe/events.js";
import type { ChainResult } from "../../../src/chain/types.js";

const clock = { now: () => 0, wallNow: () => Date.parse("2026-01-02T03:04:05Z") };
const registered = { event: "hook.registered", payload: { hook: "h", type: "pre_inject", scope: "deployment", bundle: "b", priority: 50, principal: "p" } } as const;

function result(): ChainResult {
  return {
    chain_id: "c1", type: "pre_inject", status: "aborted", reason: "token=SECRET", aborted_by: "h", cascade_failure: false, duration_ms: 3,
    hook_results: [{ hook: "h", bundle: "b", scope: "deployment", status: "aborted", outcome: "abort", duration_ms: 2, reason: "SECRET", annotations: { password: "x", ok: 1 } }],
  } as unknown as ChainResult;
}

describe("event bus", () => {
  test("listeners of an event run in order; unsubscribing stops one; other events are not delivered", () => {
    const bus = createEventBus({ clock, logger: silentLogger, redact: (v) => v });
    const seen: string[] = [];
    const off = bus.on("hook.registered", (p) => void seen.push(`1:${p.hook}`));
    bus.on("hook.registered", (p) => void seen.push(`2:${p.hook}`));
    bus.on("hook.deregistered", () => void seen.push("never"));
    bus.emit(registered);
    off();
    bus.emit(registered);
    expect(seen).toEqual(["1:h", "2:h", "2:h"]);
  });

  test("a throwing listener is logged and the next one still runs", () => {
    const warned: unknown[] = [];
    const bus = createEventBus({ clock, logger: { ...silentLogger, warn: (obj: object) => void warned.push(obj) }, redact: (v) => v });
    const seen: string[] = [];
    bus.on("hook.registered", () => {
      throw new Error("boom");
    });
    bus.on("hook.registered", () => void seen.push("after"));
    bus.emit(registered);
    expect(seen).toEqual(["after"]);
    expect(warned).toMatchObject([{ event: "hook.registered" }]);
  });

  test("chain.completed is built only while someone listens, with reasons and annotations redacted", () => {
    let redactions = 0;
    const redact = (v: unknown): unknown => {
      redactions++;
      if (typeof v === "string") return v.replace("SECRET", "[REDACTED]");
      return typeof v === "object" && v !== null && "password" in v ? { ...v, password: "[REDACTED]" } : v;
    };
    const bus = createEventBus({ clock, logger: silentLogger, redact });
    bus.chainCompleted(result(), "s1", null);
    expect(redactions).toBe(0);
    const got: unknown[] = [];
    bus.on("chain.completed", (p) => void got.push(p));
    bus.chainCompleted(result(), "s1", "alice");
    expect(got).toEqual([{
      chain_id: "c1", type: "pre_inject", ts: "2026-01-02T03:04:05.000Z", session_id: "s1", owner: "alice", status: "aborted",
      reason: "token=[REDACTED]", aborted_by: "h", cascade_failure: false, duration_ms: 3,
      hooks: [{ hook: "h", bundle: "b", scope: "deployment", status: "aborted", outcome: "abort", duration_ms: 2, reason: "[REDACTED]", annotations: { password: "[REDACTED]", ok: 1 } }],
    }]);
  });
});
