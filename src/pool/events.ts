import { failureEventOf, hookCompletedEvent, hookFiredEvent } from "../chain/contract.js";
import type { ChainRequest, ChainResult } from "../model/chain.js";
import { SKIPPED_OUTCOMES } from "../model/result.js";
import type { ChainOrigin, InputSummary, LifecycleEvent } from "../observe/events.js";
import type { ChainValue, WireChainValue } from "./protocol.js";

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
    if (event.event === "hook.fired") {
      const summary = event.payload.input_summary;
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
    } else if (event.event !== "hook.completed") {
      this.events.push(event);
    }
  };

  /** Start a new chain: the arrays handed out for the previous one are not touched again. */
  reset(): void {
    this.events = [];
    this.sums = [];
    this.last = undefined;
  }
}

/** The reply a worker sends for a chain: what the main process does not already have. */
export function packChainValue(result: ChainResult, request: ChainRequest, packer: EventPacker): WireChainValue {
  const { context, constitution, ...rest } = result;
  const wire: WireChainValue = { result: rest, events: packer.events, sums: packer.sums };
  // Identity, not equality: runChain hands back the request's own objects unless a modify replaced them.
  if (context !== request.context) wire.result.context = context;
  if (constitution !== request.constitution) wire.result.constitution = constitution;
  return wire;
}

/**
 * The chain result of an agent-profile chain, without lifecycle events (the executor builds none for
 * it: its answer and hook records are its report).
 */
export function profileChainValue(wire: WireChainValue, request: ChainRequest): ChainValue {
  return { result: resultOf(wire, request), events: [] };
}

/** The chain result from a {@link WireChainValue} and the request the supervisor sent. */
function resultOf(wire: WireChainValue, request: ChainRequest): ChainResult {
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
    hook_results: packed.hook_results,
    duration_ms: packed.duration_ms,
    ...(packed.profile !== undefined ? { profile: packed.profile } : {}),
  };
}

/**
 * The chain result and every lifecycle event, in the order runChain emitted them, from a
 * {@link WireChainValue} and the request the supervisor sent.
 *
 * @example
 * ```ts
 * const { result, events } = rebuildEvents(reply.value as WireChainValue, pending.request);
 * ```
 */
export function rebuildEvents(wire: WireChainValue, request: ChainRequest): ChainValue {
  const result = resultOf(wire, request);
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
    const inputSummary: InputSummary = summary
      ? { ...summary }
      : { session_id: sessionId, constitution_id: result.constitution.id, context_keys: 0, input_bytes: 0 };
    events.push(hookFiredEvent(hook, origin, chainId, sessionId, inputSummary));
    const expected = failureEventOf(outcome);
    const between = rest[next];
    if (expected !== undefined && between?.event === expected && between.payload.hook === hook) {
      events.push(between);
      next++;
    }
    events.push(hookCompletedEvent(execution, origin, chainId));
  }
  // hook.cascade_failure, and anything runChain may emit that this module does not know about.
  for (; next < rest.length; next++) events.push(rest[next]!);
  return { result, events };
}
