// Builders for the process-free tests of the supervisor's parts: hooks, and chains as the supervisor holds them.
import type { ChainRequest } from "../../../src/model/chain.js";
import type { ResolvedHook } from "../../../src/model/hook.js";
import type { ChainTaskResult } from "../../../src/pool/api.js";
import type { PendingChain } from "../../../src/pool/chain-queue.js";
import { PlanCache } from "../../../src/pool/plan-cache.js";
import { vcpPlanRef } from "../../../src/chain/plan.js";

let seq = 1;
/** A resolved hook; without a digest it names a bundle with no loaded revision (`b-<name>`). */
export function hook(name: string, digest: string | undefined, extra: Partial<ResolvedHook> = {}): ResolvedHook {
  return Object.freeze({
    name,
    type: "pre_inject",
    priority: 50,
    timeout_ms: 1000,
    action: Object.freeze({ bundle: `b-${digest ?? name}`, export: "act", ...(digest !== undefined ? { digest } : {}) }),
    condition: null,
    enabled: true,
    metadata: Object.freeze({}),
    fail_closed: false,
    trust: "deployment",
    scope: "deployment",
    seq: seq++,
    ...extra,
  } satisfies ResolvedHook);
}

const plans = new PlanCache();
const lists = new Map<string, readonly ResolvedHook[]>();
let nextId = 1;

/**
 * A waiting chain running hook `h<i>` of bundle `b-<digest>` for each digest in order (one frozen list
 * per digest list, as the runtime hands it); what it is answered lands in `answers`.
 */
export function pendingChain(digests: string[], answers: (ChainTaskResult | Error)[] = [], accounts: readonly string[] = [...new Set(digests)]): PendingChain {
  const key = digests.join(",");
  let hooks = lists.get(key);
  if (hooks === undefined) {
    hooks = Object.freeze(digests.map((d, i) => hook(`h${i}`, d)));
    lists.set(key, hooks);
  }
  const id = nextId++;
  const request = { chainId: `c${id}`, context: {}, constitution: { id: "c", version: "1", rules: [] }, event: {}, session: { id: "s" } } as unknown as ChainRequest;
  const task = { plan: { profile: vcpPlanRef("pre_inject"), revision: 1, hooks }, request };
  const plan = plans.lookup(task.plan, () => true).entry;
  return {
    id, chainId: `c${id}`, task, plan, hooks: plan.hooks, digests: plan.digests, accounts,
    gated: false, solo: false, counted: false, dispatches: 0, dispatchedAt: 0, hardDeadline: Number.POSITIVE_INFINITY,
    resolve: (value) => answers.push(value),
    reject: (err) => answers.push(err),
  };
}
