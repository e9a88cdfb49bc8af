import { failureEventOf, hookCompletedEvent, hookFiredEvent } from "../chain/contract.js";
import { VcpError } from "../errors.js";
import type { ChainRequest, ChainResult, HookExecution } from "../model/chain.js";
import type { ResolvedHook } from "../model/hook.js";
import { SKIPPED_OUTCOMES } from "../model/result.js";
import type { ChainOrigin, InputSummary, LifecycleEvent } from "../observe/events.js";
import type { ChainValue, WireChainValue, WireHookRecord } from "./protocol.js";

/**
 * Lifecycle events on the wire (DESIGN §4.1: the budget goes to copying). runChain emits them in the
 * order of chain/contract.ts. `hook.completed` repeats fields of the hook's `hook_results` entry, and
 * `hook.fired` those plus the input summary, so the worker sends neither: {@link EventPacker} keeps the
 * other events and one input summary per executed hook (`0` when unchanged), and {@link rebuildEvents}
 * puts the same events back in the same order on the main side, with the contract's builders and its
 * rule for which event follows `hook.fired` (`failureEventOf`).
 */
export class EventPacker {
  events: LifecycleEvent[] = [];
  sums: (InputSummary | 0)[] = [];
  private last: InputSummary | undefined;

  /** The EventSink given to runChain; bound once, so no closure is made per chain. */
  readonly emit = (event: LifecycleEvent): void => {
    if (event.event === "hook.fired") this.fired(event.payload.input_summary);
    else if (event.event !== "hook.completed") this.events.push(event);
  };

  /** runChain's `firedSummary`: the input summary of a hook.fired it then does not build. */
  readonly fired = (summary: InputSummary): void => {
    const last = this.last;
    if (
      last !== undefined &&
      last.input_bytes === summary.input_bytes &&
      last.context_keys === summary.context_keys &&
      last.constitution_id === summary.constitution_id &&
      last.session_id === summary.session_id
    ) {
      this.sums.push(0);
    } else {
      this.sums.push(summary);
      this.last = summary;
    }
  };

  /** Start a new chain: the arrays handed out for the previous one are not touched again. */
  reset(): void {
    this.events = [];
    this.sums = [];
    this.last = undefined;
  }
}

/**
 * The reply a worker sends for a chain: what the main process does not already have. `hooks`: the
 * plan's hook list as the supervisor sent it (its hook records are packed against it).
 */
export function packChainValue(result: ChainResult, request: ChainRequest, packer: EventPacker, hooks: readonly ResolvedHook[]): WireChainValue {
  const { context, constitution, hook_results, ...rest } = result;
  const wire: WireChainValue = { result: { ...rest, hook_results: packHookResults(hook_results, hooks) }, events: packer.events, sums: packer.sums };
  // Identity, not equality: runChain hands back the request's own objects unless a modify replaced them.
  if (context !== request.context) wire.result.context = context;
  if (constitution !== request.constitution) wire.result.constitution = constitution;
  return wire;
}

/**
 * The chain result of an agent-profile chain, without lifecycle events (the executor builds none for
 * it: its answer and hook records are its report).
 */
export function profileChainValue(wire: WireChainValue, request: ChainRequest, hooks: readonly ResolvedHook[]): ChainValue {
  return { result: resultOf(wire, request, hooks), events: [] };
}

/** The chain result from a {@link WireChainValue}, the request and the hook list the supervisor sent. */
function resultOf(wire: WireChainValue, request: ChainRequest, hooks: readonly ResolvedHook[]): ChainResult {
  const packed = wire.result;
  // Field by field, in runChain's order: callers serialize results, and key order is visible there.
  return {
    chain_id: packed.chain_id,
    ...(packed.type !== undefined ? { type: packed.type } : {}),
    status: packed.status,
    reason: packed.reason,
    aborted_by: packed.aborted_by,
    context: packed.context ?? request.context,
    constitution: packed.constitution ?? request.constitution,
    cascade_failure: packed.cascade_failure,
    hook_results: unpackHookResults(packed.hook_results, hooks),
    duration_ms: packed.duration_ms,
    ...(packed.profile !== undefined ? { profile: packed.profile } : {}),
  };
}

/**
 * The chain result and every lifecycle event, in the order runChain emitted them, from a
 * {@link WireChainValue} and the request the supervisor sent. `firedAndCompleted: false` (nobody
 * listens to them): every event but the per-hook `hook.fired` and `hook.completed`.
 *
 * @example
 * ```ts
 * const { result, events } = rebuildEvents(reply.value as WireChainValue, pending.request, pending.plan.hooks);
 * ```
 */
export function rebuildEvents(wire: WireChainValue, request: ChainRequest, hooks: readonly ResolvedHook[], firedAndCompleted = true): ChainValue {
  const result = resultOf(wire, request, hooks);
  const chainId = result.chain_id;
  // Only VCP chains cross with lifecycle events (an agent chain's answer is its report): named by their type.
  const origin: ChainOrigin = { type: result.type! };
  const sessionId = request.session.id;
  const rest = wire.events;
  const events: LifecycleEvent[] = [];
  let next = 0;
  let sumIndex = 0;
  let summary: InputSummary | undefined;
  for (const execution of result.hook_results) {
    const hook = execution.hook;
    const outcome = execution.outcome;
    if (SKIPPED_OUTCOMES.has(outcome)) {
      const skipped = rest[next];
      if (skipped?.event === "hook.skipped" && skipped.payload.hook === hook) {
        events.push(skipped);
        next++;
      }
      continue;
    }
    const sum = wire.sums[sumIndex++];
    if (sum !== undefined && sum !== 0) summary = sum;
    if (firedAndCompleted) {
      const inputSummary: InputSummary = summary
        ? { ...summary }
        : { session_id: sessionId, constitution_id: result.constitution.id, context_keys: 0, input_bytes: 0 };
      events.push(hookFiredEvent(hook, origin, chainId, sessionId, inputSummary));
    }
    const expected = failureEventOf(outcome);
    const between = rest[next];
    if (expected !== undefined && between?.event === expected && between.payload.hook === hook) {
      events.push(between);
      next++;
    }
    if (firedAndCompleted) events.push(hookCompletedEvent(execution, origin, chainId));
  }
  // hook.cascade_failure, and anything runChain may emit that this module does not know about.
  for (; next < rest.length; next++) events.push(rest[next]!);
  return { result, events };
}

/** The members every record starts with, in {@link hookExecution}'s order (chain/contract.ts). */
const LEADING = ["hook", "bundle", "scope", "trust", "status", "outcome", "duration_ms"] as const;

/** The executor's hook records (in plan order, some left out) against the plan's hook list. */
export function packHookResults(results: readonly HookExecution[], hooks: readonly ResolvedHook[]): WireHookRecord[] {
  const packed: WireHookRecord[] = new Array<WireHookRecord>(results.length);
  let at = 0;
  for (let r = 0; r < results.length; r++) {
    const record = results[r]!;
    let position = at;
    while (position < hooks.length && !names(record, hooks[position]!)) position++;
    const hook = hooks[position];
    const rest = hook === undefined ? undefined : restOf(record, hook);
    if (rest === undefined) {
      packed[r] = record;
      continue;
    }
    at = position + 1;
    packed[r] = rest === null ? [position, record.status, record.outcome, record.duration_ms] : [position, record.status, record.outcome, record.duration_ms, rest];
  }
  return packed;
}

function names(record: HookExecution, hook: ResolvedHook): boolean {
  return record.hook === hook.name && record.bundle === hook.action.bundle && record.scope === hook.scope && record.trust === hook.trust;
}

/**
 * The members of `record` after its leading ones (null: none), or undefined when it does not start
 * with them in order or names another revision than `hook`'s: then it is sent whole.
 */
function restOf(record: HookExecution, hook: ResolvedHook): Partial<HookExecution> | null | undefined {
  let index = 0;
  let digestSeen = false;
  let rest: Record<string, unknown> | null = null;
  for (const key in record) {
    if (index < LEADING.length) {
      if (key !== LEADING[index]) return undefined;
      index++;
      continue;
    }
    if (index === LEADING.length) {
      index++;
      if (key === "bundle_digest") {
        if (record.bundle_digest !== hook.action.digest) return undefined;
        digestSeen = true;
        continue;
      }
    }
    (rest ??= {})[key] = (record as unknown as Record<string, unknown>)[key];
  }
  if (index < LEADING.length || digestSeen !== (hook.action.digest !== undefined)) return undefined;
  return rest as Partial<HookExecution> | null;
}

/** The hook records back, member for member and in the same member order, from their wire form. */
export function unpackHookResults(packed: readonly WireHookRecord[], hooks: readonly ResolvedHook[]): HookExecution[] {
  const out: HookExecution[] = new Array<HookExecution>(packed.length);
  for (let r = 0; r < packed.length; r++) {
    const entry = packed[r]!;
    if (!Array.isArray(entry)) {
      out[r] = entry;
      continue;
    }
    const [position, status, outcome, duration_ms, rest] = entry;
    const hook = hooks[position];
    if (hook === undefined) throw new VcpError("SANDBOX_PROTOCOL_ERROR", `corrupt reply: a hook record names position ${String(position)} of a ${hooks.length}-hook list`);
    const record: HookExecution = { hook: hook.name, bundle: hook.action.bundle, scope: hook.scope, trust: hook.trust, status, outcome, duration_ms };
    if (hook.action.digest !== undefined) record.bundle_digest = hook.action.digest;
    if (rest !== undefined) {
      for (const key in rest) {
        // SECURITY: members by definition, never a prototype (the worker writes only HookExecution's own names).
        if (key !== "__proto__") (record as unknown as Record<string, unknown>)[key] = (rest as Record<string, unknown>)[key];
      }
    }
    out[r] = record;
  }
  return out;
}
