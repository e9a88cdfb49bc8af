import type { LifecycleEvent } from "../../../src/observe/events.js";
import { createRegistry, type Principal, type RegisterOptions, type Registry, type RegistryOptions } from "../../../src/registry/index.js";
import { VcpError } from "../../../src/errors.js";

export const OPERATOR: Principal = { id: "alice", role: "operator" };
export const CLIENT: Principal = { id: "bob", role: "client" };
export const SYSTEM: Principal = { id: "runtime", role: "system" };

export const DEPLOY: RegisterOptions = { scope: "deployment", principal: OPERATOR };
export function inSession(sessionId: string, principal: Principal = CLIENT): RegisterOptions {
  return { scope: "session", sessionId, principal };
}

/** A valid definition; override any field. */
export function def(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "strip-pii",
    type: "pre_inject",
    priority: 50,
    timeout_ms: 100,
    action: { bundle: "pii", export: "strip" },
    ...overrides,
  };
}

export function fakeClock(start = 1_000) {
  let t = start;
  return { now: () => t, wallNow: () => 1_700_000_000_000 + t, advance: (ms: number) => void (t += ms) };
}

export interface Harness {
  registry: Registry;
  events: LifecycleEvent[];
  clock: ReturnType<typeof fakeClock>;
}

export function harness(options: Partial<RegistryOptions> = {}): Harness {
  const events: LifecycleEvent[] = [];
  const clock = fakeClock();
  const registry = createRegistry({
    clock,
    emit: (e) => events.push(e),
    registrationsPerMinute: 1_000,
    sessionHookAllowlist: ["pii/strip-pii", "pii/log", "audit/log"],
    ...options,
  });
  return { registry, events, clock };
}

/** Runs `fn`, which must throw a VcpError, and returns it. */
export function catchVcp(fn: () => unknown): VcpError {
  try {
    fn();
  } catch (err) {
    if (err instanceof VcpError) return err;
    throw err;
  }
  throw new Error("expected a VcpError, nothing was thrown");
}
