import { afterEach, vi } from "vitest";
import type { InvokeOutcome, InvokeRequest } from "../../../src/model/chain.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import type { TrustLevel } from "../../../src/model/hook-type.js";
import { createIsolateHost, DEFAULT_SANDBOX_LIMITS } from "../../../src/sandbox-host/isolate-host.js";
import type { BundleCode, GuestLogLine, IsolateHost, SandboxLimits } from "../../../src/sandbox-host/types.js";

let counter = 0;

/** A bundle from the body of an object literal of exports, as esbuild's iife output would define it. */
export function bundle(
  exportsBody: string,
  opts: { trust?: TrustLevel; isolation?: "shared" | "per_session"; memoryMb?: number; prefix?: string; name?: string } = {},
): BundleCode {
  counter++;
  return {
    name: opts.name ?? `b${counter}`,
    digest: `sha256:${counter.toString(16).padStart(64, "0")}`,
    code: `${opts.prefix ?? ""}\nvar __vcp_bundle = (() => { ${exportsBody.startsWith("return") ? exportsBody : `return { ${exportsBody} };`} })();`,
    trust: opts.trust ?? "deployment",
    ...(opts.isolation !== undefined ? { isolation: opts.isolation } : {}),
    ...(opts.memoryMb !== undefined ? { memoryMb: opts.memoryMb } : {}),
  };
}

export function hookFor(b: BundleCode, exportName: string, name = "test_hook"): ResolvedHook {
  return {
    name,
    type: "pre_inject",
    priority: 50,
    timeout_ms: 1000,
    action: { bundle: b.name, export: exportName, digest: b.digest },
    condition: null,
    enabled: true,
    metadata: {},
    fail_closed: false,
    trust: b.trust,
    scope: "deployment",
    seq: 1,
  };
}

export function request(
  b: BundleCode,
  exportName: string,
  opts: { input?: unknown; inputJson?: string; sessionId?: string; budgetMs?: number } = {},
): InvokeRequest {
  return {
    hook: hookFor(b, exportName),
    chainId: "c1",
    sessionId: opts.sessionId ?? "s1",
    inputJson: opts.inputJson ?? JSON.stringify(opts.input ?? { context: {}, constitution: {}, event: {}, chain_state: {} }),
    budgetMs: opts.budgetMs ?? 1000,
  };
}

export function makeHost(
  limits: Partial<SandboxLimits> = {},
  extra: {
    allowHosts?: string[];
    codeSource?: (d: string) => BundleCode | undefined;
    onRunawayRun?: (bundle: { name: string; digest: string }) => void;
    runawayRunMs?: number;
  } = {},
) {
  const logs: GuestLogLine[] = [];
  const host: IsolateHost = createIsolateHost({
    limits: { ...DEFAULT_SANDBOX_LIMITS, ...limits },
    fetch: { allowHosts: extra.allowHosts ?? ["api.example.com", "api.openai.com"], denyLlmHosts: ["api.openai.com", "api.anthropic.com"] },
    onLog: (l) => logs.push(l),
    ...(extra.codeSource ? { codeSource: extra.codeSource } : {}),
    // A test that does not expect a runaway run fails loudly on one.
    onRunawayRun:
      extra.onRunawayRun ??
      ((b) => {
        throw new Error(`runaway run of bundle ${b.name}`);
      }),
    ...(extra.runawayRunMs !== undefined ? { runawayRunMs: extra.runawayRunMs } : {}),
  });
  return { host, logs };
}

/**
 * `makeHost` for a test file, with cleanup: call `useHosts()` once at module level; it registers an
 * afterEach that disposes every host created through the returned `host()` and restores mocks.
 */
export function useHosts(): (...args: Parameters<typeof makeHost>) => ReturnType<typeof makeHost> {
  const hosts: { dispose(): void }[] = [];
  afterEach(() => {
    while (hosts.length > 0) hosts.pop()!.dispose();
    vi.restoreAllMocks();
  });
  return (...args) => {
    const h = makeHost(...args);
    hosts.push(h.host);
    return h;
  };
}

/** The annotations of a returned result (fails the test on any other outcome). */
export function annotations(o: InvokeOutcome): Record<string, unknown> {
  if (o.kind !== "returned") throw new Error(`expected returned, got ${JSON.stringify(o)}`);
  return JSON.parse(o.resultJson).annotations;
}
