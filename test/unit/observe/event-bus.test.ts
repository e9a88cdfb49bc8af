// The lifecycle event bus (spec §6.4, `runtime.on`): listeners per event in order, a throwing
// listener skipped and logged, `chain.completed` built only while someone listens, and redacted.
import { describe, expect, test } from "vitest";
import { createEventBus } from "../../../src/observe/event-bus.js";
import { silentLogger } from "../../../src/observe/events.js";
import type { ChainResult } from "../../../src/model/chain.js";

const clock = { now: () => 0, wallNow: () => Date.parse("2026-01-02T03:04:05Z") };
const registered = { event: "hook.registered", payload: { hook: "h", profile: "vcp", event: "pre_inject", type: "pre_inject", scope: "deployment", bundle: "b", priority: 50, principal: "p" } } as const;

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

  test("a profile chain's events: per hook in plan order, marked with profile and event and no type; nothing built without listeners", () => {
    const profileResult = {
      chain_id: "p1", type: "pre_inject", status: "completed", reason: null, aborted_by: null, cascade_failure: false, duration_ms: 9,
      hook_results: [
        { hook: "other", bundle: "b", scope: "deployment", status: "continue", outcome: "skipped_matcher", duration_ms: 0 },
        { hook: "off", bundle: "b", scope: "deployment", status: "continue", outcome: "skipped_disabled", duration_ms: 0 },
        { hook: "slow", bundle: "b", scope: "deployment", status: "continue", outcome: "timeout", duration_ms: 101, error: "timed out" },
        { hook: "script", bundle: "x", scope: "deployment", status: "continue", outcome: "exec_nonzero", duration_ms: 4, error: "exit 3", sandboxed: false },
        { hook: "fine", bundle: "b", scope: "deployment", status: "continue", outcome: "ok", duration_ms: 1 },
      ],
      profile: { profile: "gemini-cli", event: "BeforeTool", mode: "parallel", native: {}, exit_code: 0 },
    } as unknown as ChainResult;
    let sized = 0;
    const facts = { sessionId: "s9", owner: null, timeoutOf: () => 100, inputBytes: () => (sized++, 42) };
    const bus = createEventBus({ clock, logger: silentLogger, redact: (v) => v });
    bus.profileChainCompleted(profileResult, facts);
    expect(sized).toBe(0);
    // Only chain.completed listened to: no hook event is built, so the input is not measured either.
    const chains: unknown[] = [];
    bus.on("chain.completed", (p) => void chains.push(p));
    bus.profileChainCompleted(profileResult, facts);
    expect(sized).toBe(0);
    expect(chains).toMatchObject([{ chain_id: "p1", profile: "gemini-cli", event: "BeforeTool", session_id: "s9", status: "completed" }]);
    expect(chains[0]).not.toHaveProperty("type");

    const seen: Array<[string, Record<string, unknown>]> = [];
    for (const name of ["hook.skipped", "hook.fired", "hook.timeout", "hook.error", "hook.completed"] as const) bus.on(name, (p) => void seen.push([name, p as Record<string, unknown>]));
    bus.profileChainCompleted(profileResult, facts);
    expect(seen.map(([name, p]) => `${name}:${String(p["hook"])}`)).toEqual([
      "hook.skipped:off",
      "hook.fired:slow", "hook.timeout:slow", "hook.completed:slow",
      "hook.fired:script", "hook.error:script", "hook.completed:script",
      "hook.fired:fine", "hook.completed:fine",
    ]);
    for (const [, p] of seen) {
      expect(p).toMatchObject({ profile: "gemini-cli", event: "BeforeTool", chain_id: "p1" });
      expect(p).not.toHaveProperty("type");
    }
    expect(seen[2]![1]).toMatchObject({ timeout_ms: 100, elapsed_ms: 101, input_summary: { session_id: "s9", input_bytes: 42, constitution_id: "(event-profile)" } });
    expect(seen[5]![1]).toMatchObject({ outcome: "exec_nonzero", error: "exit 3" });
    expect(sized).toBe(1);
  });

  test("a VCP chain's chain.completed keeps its type and has no profile", () => {
    const bus = createEventBus({ clock, logger: silentLogger, redact: (v) => v });
    const got: Array<Record<string, unknown>> = [];
    bus.on("chain.completed", (p) => void got.push(p as unknown as Record<string, unknown>));
    bus.chainCompleted(result(), "s1", null);
    expect(got[0]).toMatchObject({ type: "pre_inject" });
    expect(got[0]).not.toHaveProperty("profile");
  });
});
