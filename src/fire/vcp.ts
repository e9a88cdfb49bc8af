/*
 * The VCP fire path: one chain of one hook type for one session, in execution order.
 *
 *   plan (registry snapshot, cached per plan) ─ empty? ─► empty result, nothing else
 *     └► input bounds ─► open? ─► input schema ─► audit input hash ─► pin revisions
 *        ─► sandbox runChain ─► cascade disables ─► events ─► stats, metrics
 *        ─► audit records durable ─► chain.completed ─► unpin revisions
 *
 * The session is already resolved by the caller (runtime.ts `fire`, or the pipeline): `key` addresses
 * every session table (access.ts `sessionKey`); the hooks and every record see `session.id`.
 */
import { randomUUID } from "node:crypto";
import { VcpError } from "../errors.js";
import type { HookType } from "../model/hook-type.js";
import { isoTime } from "../model/iso-time.js";
import type { ResolvedHook } from "../model/hook.js";
import type { SessionInfo } from "../model/input.js";
import { assertChainInput } from "../model/validate-input.js";
import { assertInputBounds, CHAIN_INPUT_ENVELOPES, type JsonBounds } from "../model/json-bounds.js";
import { chainRequestText } from "../chain/request-text.js";
import type { ChainPlan, ChainRequest, ChainResult } from "../model/chain.js";
import { cascadeDisableTargets } from "../chain/cascade.js";
import { emptyChainResult } from "../chain/contract.js";
import { mergeHookResults, selectVcpHooks, type SelectedChain } from "../chain/select.js";
import { buildDecision, NO_HOOK_SELECTED, VCP_DECISION_PROFILE } from "../chain/decision.js";
import { redactHead } from "../audit/redact-string.js";
import type { Logger } from "../observe/events.js";
import type { EventBus } from "../observe/event-bus.js";
import type { Metrics } from "../observe/metrics.js";
import type { HookSwitches, Registry } from "../registry/index.js";
import { keyParts } from "../pipeline/access.js";
import type { HookRef } from "../pipeline/index.js";
import type { ChainBackend } from "../pool/backend.js";
import type { AuditTrail } from "./audit-trail.js";
import type { createHookStats } from "./stats.js";
import { SYSTEM_PRINCIPAL, type RevisionPins } from "../install/bundles.js";
import type { FireInput } from "./types.js";

export interface ChainFirerDeps {
  registry: Registry;
  /** Cascade disables go through the hook switches: with a shared store every replica sees them. */
  switches: Pick<HookSwitches, "set">;
  backend: ChainBackend;
  pins: RevisionPins;
  bus: EventBus;
  audit: AuditTrail | undefined;
  stats: ReturnType<typeof createHookStats>;
  metrics: Metrics;
  logger: Logger;
  inputBounds: JsonBounds;
  /** Optional whole-chain deadline per hook type, ms (DESIGN §4.3). */
  chainDeadlineMs: Partial<Record<HookType, number>> | undefined;
  /** `cascade.disableFailingHooks` (spec §7.3.4). */
  disableFailingHooks: boolean;
  assertOpen(): void;
}

export interface ChainFirer {
  /**
   * Run one chain for the session known by `key` (access.ts `sessionKey`): the registry's session
   * tables, per-session isolates and cascade disables use the key; the hooks and every record see
   * the caller's own `session.id`, and audit records the owner.
   */
  fireKeyed<T extends HookType>(type: T, input: FireInput<T>, session: SessionInfo, key: string): Promise<ChainResult>;
}

/**
 * @example
 * ```ts
 * const firer = createChainFirer({ registry, switches, backend, pins, bus, audit, stats, metrics, logger, inputBounds,
 *   chainDeadlineMs: undefined, disableFailingHooks: false, assertOpen });
 * const result = await firer.fireKeyed("pre_inject", input, { id: "s1" }, "s1");
 * ```
 */
export function createChainFirer(deps: ChainFirerDeps): ChainFirer {
  const { registry, backend, pins, bus, audit, stats, metrics, logger, inputBounds } = deps;

  async function fireKeyed<T extends HookType>(type: T, input: FireInput<T>, session: SessionInfo, key: string): Promise<ChainResult> {
    let plan = registry.snapshot().chain(type, key);
    if (input.hooks !== undefined) plan = onlyHooks(plan, input.hooks);
    // Empty chain: no dispatch (LLxprt's zero overhead when disabled); its decision, and its audit record when there is a log.
    if (plan.hooks.length === 0) return emptyChain(type, input, session, key);
    // SECURITY: depth and size bounds before any work on the input: a too-deep input must not reach
    // the audit hash, the sandbox IPC or a worker's structured clone, and nothing is marked in flight
    // for it. An empty chain does none of that (it hands the caller's own objects back), so it stays
    // free; the HTTP server bounds every body itself.
    // One object for the bounds, the schema check and the audit hash (none of them keeps it).
    const hookInput = { context: input.context, constitution: input.constitution, event: input.event, session };
    const fieldTexts = assertInputBounds(hookInput, inputBounds, CHAIN_INPUT_ENVELOPES);
    deps.assertOpen();
    assertChainInput(type, hookInput);
    const chainId = randomUUID();
    // Select before crossing (chain/select.ts): the hooks before the first one that runs are decided
    // here; only that hook and the rest of the chain are sent, and a chain none runs sends nothing.
    const chosen = selectVcpHooks(plan, { chainId, context: input.context, constitution: input.constitution, event: input.event, session });
    const wire = wireOf(plan, chosen.sent);
    const inputHash = audit?.inputHash(hookInput);
    const startedAt = Date.now();
    pins.pin(wire.digests);
    const deadlineMs = deps.chainDeadlineMs?.[type];
    // The session's owner, for the audit records and chain.completed: parsed from the key once.
    let ownerOfKey: string | null | undefined;
    const owner = (): string | null => (ownerOfKey === undefined ? (ownerOfKey = keyParts(key).owner) : ownerOfKey);
    try {
      const request: ChainRequest = {
        chainId,
        context: input.context,
        constitution: input.constitution,
        event: input.event,
        session,
        ...(key !== session.id ? { sessionKey: key } : {}),
        ...(deadlineMs !== undefined ? { deadlineMs } : {}),
        ...(selectionMatters(chosen) ? { selection: chosen.selection } : {}),
      };
      const ran =
        chosen.sent.length === 0
          ? { result: { ...emptyChainResult(type, request), hook_results: [] }, events: [] }
          : await backend.runChain({
              plan: { profile: plan.profile, revision: plan.revision, hooks: wire.hooks },
              request,
              // Serialized once: the bounds check's field texts make the sandbox frame's payload.
              requestText: chainRequestText(request, fieldTexts),
              // Two events per hook that only a listener reads: not built for nobody.
              firedAndCompleted: bus.listening("hook.fired") || bus.listening("hook.completed"),
            });
      const result = ran.result;
      // Every hook of the plan in plan order, the hooks decided here included; their hook.skipped first.
      if (chosen.decided.size > 0) result.hook_results = mergeHookResults(wire.all, chosen, result.hook_results);
      const events = chosen.events.length > 0 ? [...chosen.events, ...ran.events] : ran.events;
      // One decision record for the answer, the audit record and the stream (chain/decision.ts).
      result.decision = buildDecision(result, {
        profile: VCP_DECISION_PROFILE, event: type, at: isoTime(startedAt), subject: { kind: "vcp", vcp_type: type },
        session: session.id, client: owner(), redact: redactHead, ...(chosen.sent.length === 0 ? { idleReason: NO_HOOK_SELECTED } : {}),
      });
      let disabledHooks: string[] = [];
      if (result.cascade_failure) {
        logger.warn({ chain_id: result.chain_id, type }, "cascading hook failure (spec §7.3)");
        if (deps.disableFailingHooks) disabledHooks = await disableFailing(result, key);
      }
      for (const event of events) {
        // The chain's hook.cascade_failure cannot know what the runtime disabled; say it here.
        if (event.event === "hook.cascade_failure") {
          const where = disabledHooks.length > 0 ? { disabled_scope: "session" as const, disabled_session: session.id, disabled_owner: owner() } : {};
          bus.emit({ event: event.event, payload: { ...event.payload, disabled: disabledHooks.length > 0, disabled_hooks: disabledHooks, ...where } });
        } else bus.emit(event);
      }
      stats.record(result);
      metrics.recordChain(result);
      // spec §8.2.3: the chain's records are durable before its result is handed out.
      if (audit !== undefined) {
        await audit.recordChain(result, { id: session.id, owner: owner() }, inputHash!, disabledHooks).catch((err: unknown) => {
          throw new VcpError("AUDIT_WRITE_FAILED", `audit log write failed: ${err instanceof Error ? err.message : String(err)}`, { chain_id: result.chain_id }, { cause: err });
        });
      }
      // Built only while someone listens: nothing on the hot path otherwise.
      bus.chainCompleted(result, session.id, owner());
      return result;
    } finally {
      pins.unpin(wire.digests);
    }
  }

  /**
   * A chain with no hook for its type: the caller's own context and constitution back, nothing
   * dispatched, no work on the input (no validation beyond the type, no input hash) — and, like every
   * chain, one decision record (allow, no hook selected), which with an audit log is its chain record,
   * durable before the answer (docs/decisions.md "A chain no hook applied to").
   */
  async function emptyChain(type: HookType, input: FireInput<HookType>, session: SessionInfo, key: string): Promise<ChainResult> {
    const result = emptyChainResult(type, { chainId: randomUUID(), context: input.context, constitution: input.constitution });
    const owner = keyParts(key).owner;
    result.decision = buildDecision(result, {
      profile: VCP_DECISION_PROFILE, event: type, at: isoTime(Date.now()), subject: { kind: "vcp", vcp_type: type },
      session: session.id, client: owner, redact: redactHead, idleReason: NO_HOOK_SELECTED,
    });
    // Counted with the type's chains (vcp_chains_total, vcp_chains_no_hook_total): a counter increment.
    metrics.recordChain(result);
    if (audit !== undefined) {
      deps.assertOpen();
      await audit.recordChain(result, { id: session.id, owner }, undefined).catch((err: unknown) => {
        throw new VcpError("AUDIT_WRITE_FAILED", `audit log write failed: ${err instanceof Error ? err.message : String(err)}`, { chain_id: result.chain_id }, { cause: err });
      });
    }
    // The decision stream carries it like any chain's; built only while someone listens.
    bus.chainCompleted(result, session.id, owner);
    return result;
  }

  /**
   * Spec §7.3.4 with `cascade.disableFailingHooks`: disable the failing hooks that chain/cascade.ts
   * allows (never from a session-trust or session-scope cause to a hook above it), every one of them
   * in this session only (a deployment hook keeps running for every other session). Returns the
   * names actually disabled.
   */
  async function disableFailing(result: ChainResult, key: string): Promise<string[]> {
    const disabled: string[] = [];
    for (const execution of cascadeDisableTargets(result.hook_results)) {
      try {
        // SECURITY: always in this session only, deployment-scope hooks included: one client's input
        // must never switch policy off for another tenant; only an operator disables a hook globally.
        // Recorded for every replica that serves the session; not recorded ⇒ not disabled here either.
        await deps.switches.set(execution.hook, false, { scope: execution.scope, sessionId: key, principal: SYSTEM_PRINCIPAL });
        disabled.push(execution.hook);
        logger.warn({ hook: execution.hook, scope: execution.scope, session: keyParts(key).id, owner: keyParts(key).owner, chain_id: result.chain_id }, "hook disabled in this session after a cascading failure (spec §7.3.4); re-enable it with hooks.setEnabled(name, true, { sessionId })");
      } catch (err) {
        logger.warn({ err, hook: execution.hook }, "could not disable a failing hook");
      }
    }
    return disabled;
  }

  return { fireKeyed };
}

/** A selection the executor needs to hear about: conditions decided (or metered) in the fire path. */
function selectionMatters(chosen: SelectedChain): boolean {
  return chosen.selection.held.length > 0 || hasMembers(chosen.selection.refused) || hasMembers(chosen.selection.predicateLeft);
}

/** Whether a plain object has an own member (without listing them: this runs for every chain). */
function hasMembers(object: Readonly<Record<string, unknown>>): boolean {
  for (const key in object) if (Object.hasOwn(object, key)) return true;
  return false;
}

interface PlanWire {
  /** The hooks sent to the sandbox: the selected ones, in plan order. */
  hooks: readonly ResolvedHook[];
  /** Every hook of the plan, in plan order (to merge the decided records back). */
  all: readonly ResolvedHook[];
  /** The revisions the sent hooks run: pinned while the chain runs. */
  digests: string[];
}

// Per plan and selection (a VCP selection is a suffix of the plan: at most one per hook), the plain
// hook list sent to the sandbox and the digests it pins. Plans are rebuilt only when the registry
// changes, so the same frozen list crosses for every chain of one selection (the sandbox's plan
// cache keys by the list's identity): computed once, not per event.
const planWire = new WeakMap<ChainPlan, Map<number, PlanWire>>();
function wireOf(plan: ChainPlan, sent: readonly number[]): PlanWire {
  const first = sent[0] ?? plan.hooks.length;
  let bySuffix = planWire.get(plan);
  if (bySuffix === undefined) planWire.set(plan, (bySuffix = new Map()));
  let wire = bySuffix.get(first);
  if (wire === undefined) {
    const all = Object.freeze(plan.hooks.map((p) => p.hook));
    const hooks = Object.freeze(all.slice(first));
    const digests = [...new Set(hooks.map((h) => h.action.digest).filter((d): d is string => d !== undefined))];
    wire = { hooks, all, digests };
    bySuffix.set(first, wire);
  }
  return wire;
}

// Plans filtered to named hooks, cached per plan so a periodic timer does not rebuild one per tick.
const filteredPlans = new WeakMap<ChainPlan, Map<string, ChainPlan>>();
function onlyHooks(plan: ChainPlan, refs: readonly HookRef[]): ChainPlan {
  const key = refs.map((r) => `${r.scope}:${r.name}`).join(",");
  let byKey = filteredPlans.get(plan);
  if (byKey === undefined) {
    byKey = new Map();
    filteredPlans.set(plan, byKey);
  }
  let filtered = byKey.get(key);
  if (filtered === undefined) {
    filtered = Object.freeze({ ...plan, hooks: plan.hooks.filter((p) => refs.some((r) => r.name === p.hook.name && r.scope === p.hook.scope)) });
    byKey.set(key, filtered);
  }
  return filtered;
}

/** UNKNOWN_HOOK_TYPE for a type outside spec §3. */
export function unknownType(type: unknown): VcpError {
  return new VcpError("UNKNOWN_HOOK_TYPE", `unknown hook type '${String(type)}': expected one of pre_inject, post_select, on_transition, on_conflict, on_violation, periodic (spec §3)`, { type: String(type) });
}
