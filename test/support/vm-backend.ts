/**
 * An in-process ChainBackend for fast unit and conformance runs: bundle code runs in node:vm
 * contexts. NOT a security boundary — node:vm is not a sandbox — so it lives under test/ only.
 * It honours the same contract as the isolated-vm sandbox: only JSON crosses, results and chain
 * state are serialized on the guest side, sync work is bounded by a vm timeout and async work by a
 * deadline.
 */
import vm from "node:vm";
import { compilePlan, orderProfileHooks } from "../../src/chain/plan.js";
import { findProfile, VCP_PROFILE_ID, vcpProfile } from "../../src/profiles/index.js";
import { runChain } from "../../src/chain/execute.js";
import type { ActionInvoker, InvokeOutcome, InvokeRequest } from "../../src/model/chain.js";
import { systemClock, type LifecycleEvent } from "../../src/observe/events.js";
import type { BackendChainTask, ChainBackend } from "../../src/pool/backend.js";
import type { BundleCode } from "../../src/sandbox-host/types.js";
import { VcpError } from "../../src/errors.js";
import { diffForAudit } from "../../src/audit/diff.js";
import { createIntegrityChecker, type IntegrityOptions } from "../../src/integrity/check.js";

const CALL_SOURCE = `(function (exportsObject) {
  return function call(name, inputJson, limit, native) {
    const input = JSON.parse(inputJson);
    const finish = (r) => {
      if (native && r === undefined) r = null;
      const text = JSON.stringify(r);
      if (text === undefined) return { invalid: "result is not JSON (undefined)" };
      if (text.length > limit) return { invalid: "result exceeds " + limit + " bytes" };
      return { resultJson: text, chainStateJson: native ? "{}" : JSON.stringify(input.chain_state) };
    };
    const r = exportsObject[name](input);
    if (r && typeof r.then === "function") return r.then(finish);
    return finish(r);
  };
})`;

export function createVmBackend(options: { resultBytes?: number; integrity?: IntegrityOptions } = {}): ChainBackend & { invocations: number } {
  const resultBytes = options.resultBytes ?? 1024 * 1024;
  // Like the sandbox worker: every modified constitution passes the integrity checker (by default
  // with what a runtime without `integrity` options sends its workers: no listed rules, no keys).
  const checkConstitution = createIntegrityChecker(options.integrity ?? { safetyCriticalRuleIds: [] });
  const loaded = new Map<string, { context: vm.Context; exports: string[] }>();
  // Precompiled once: calls the guest-side dispatcher with arguments placed on the context global,
  // so the vm timeout bounds the synchronous part (a direct host call would not be bounded).
  const callScript = new vm.Script("__vcp_dispatch(__vcp_args[0], __vcp_args[1], __vcp_args[2], __vcp_args[3])");

  const invoker: ActionInvoker = {
    async invoke(request: InvokeRequest): Promise<InvokeOutcome> {
      backend.invocations++;
      const bundle = loaded.get(request.hook.action.digest ?? "");
      if (bundle === undefined) return { kind: "threw", message: `bundle ${request.hook.action.bundle} not loaded` };
      const started = performance.now();
      try {
        bundle.context.__vcp_args = [request.hook.action.export, request.inputJson, resultBytes, request.native === true];
        const value = callScript.runInContext(bundle.context, { timeout: request.budgetMs });
        const settled = await Promise.race([
          Promise.resolve(value),
          new Promise((resolve) => setTimeout(() => resolve(TIMEOUT), request.budgetMs)),
        ]);
        if (settled === TIMEOUT) return { kind: "timeout", elapsedMs: performance.now() - started };
        const out = settled as { invalid?: string; resultJson?: string; chainStateJson?: string };
        if (out.invalid) return { kind: "invalid", message: out.invalid };
        return { kind: "returned", resultJson: out.resultJson!, chainStateJson: out.chainStateJson! };
      } catch (err) {
        const e = err as Error;
        if (/timed out/i.test(String(e?.message))) return { kind: "timeout", elapsedMs: performance.now() - started };
        if (e instanceof TypeError && /circular/i.test(e.message)) return { kind: "invalid", message: e.message };
        return { kind: "threw", message: String(e?.message ?? e), ...(e?.stack ? { stack: String(e.stack) } : {}) };
      }
    },
  };
  const TIMEOUT = Symbol("timeout");

  const backend = {
    invocations: 0,
    async loadBundle(code: BundleCode) {
      const context = vm.createContext({});
      try {
        new vm.Script(code.code, { filename: `bundle:${code.name}` }).runInContext(context, { timeout: 1000 });
      } catch (err) {
        throw new VcpError("INVALID_BUNDLE", `bundle ${code.name}: ${(err as Error).message}`);
      }
      const exportsObject = vm.runInContext("globalThis.__vcp_bundle", context) as Record<string, unknown> | undefined;
      if (exportsObject === undefined || exportsObject === null) throw new VcpError("INVALID_BUNDLE", `bundle ${code.name} defines no __vcp_bundle`);
      const exports = Object.keys(exportsObject).filter((k) => typeof exportsObject[k] === "function");
      context.__vcp_dispatch = (new vm.Script(CALL_SOURCE).runInContext(context) as (e: unknown) => unknown)(exportsObject);
      loaded.set(code.digest, { context, exports });
      return { exports };
    },
    async unloadBundle(digest: string) {
      loaded.delete(digest);
    },
    async runChain(task: BackendChainTask) {
      const events: LifecycleEvent[] = [];
      if (task.plan.profile.id !== VCP_PROFILE_ID) {
        // Event-profile chains, as the sandbox worker runs them (the same executor, no lifecycle events).
        const profile = findProfile(task.plan.profile.id)!;
        const profilePlan = compilePlan(profile, task.plan.profile, orderProfileHooks(profile, task.plan.hooks), task.plan.revision);
        const result = await runChain(profilePlan, task.request, { invoker, clock: systemClock });
        return JSON.parse(JSON.stringify({ result, events }));
      }
      const plan = compilePlan(vcpProfile, task.plan.profile, task.plan.hooks, task.plan.revision);
      // Like the sandbox worker with an audit log: modifications carry their RFC 6902 diff.
      const result = await runChain(plan, task.request, { invoker, clock: systemClock, emit: (e) => events.push(e), diff: diffForAudit, checkConstitution });
      // Mimic the process boundary: results arrive as JSON.
      return JSON.parse(JSON.stringify({ result, events }));
    },
    // One sandboxed action of a chain with exec hooks, whose executor runs in the main process (PROFILES §6).
    invokeAction: (request: InvokeRequest) => invoker.invoke(request),
    stats: () => ({ restarts: 0, inFlight: 0, queued: 0, quarantined: [], slowBundles: [] }),
    async close() {
      loaded.clear();
    },
  };
  return backend;
}
