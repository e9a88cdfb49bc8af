import type { Constitution } from "../model/constitution.js";
import type { VcpContext } from "../model/input.js";
import type { ResultStatus } from "../model/result.js";
import type { Clock, EventSink, InputSummary } from "../observe/events.js";
import { countFailures, isCascade } from "./cascade.js";
import { ChainDeadline } from "./deadline.js";
import type { PredicateMeter } from "./predicate.js";
import { evaluateCondition, meterOf } from "./select.js";
import { DEFAULT_JSON_DEPTH, jsonTextExceeds } from "../model/json-bounds.js";
import { AnnotationBudget, DEFAULT_ANNOTATION_BYTES_PER_CHAIN, DEFAULT_ANNOTATION_BYTES_PER_HOOK } from "./annotations.js";
import { parseGuestJson, parseHookResult } from "./result.js";
import { sanitizeGuestText, STACK_MAX_CHARS } from "./guest-text.js";
import { emptyChainResult, hookCompletedEvent, hookExecution, hookFiredEvent, deadlineCutText, timeoutText } from "./contract.js";
import type {
  ActionInvoker,
  ChainPlan,
  ChainRequest,
  ChainResult,
  ConstitutionCheck,
  ConstitutionProvenance,
  HookExecution,
  InvokeOutcome,
} from "./types.js";

export interface ChainDeps {
  invoker: ActionInvoker;
  clock: Clock;
  emit: EventSink;
  /** Integrity checker for modified constitutions (DESIGN §4.5); absent ⇒ modifications are accepted. */
  checkConstitution?: ConstitutionCheck;
  /** When given, a modifying hook's result carries `modification`: an RFC 6902 diff for the audit log. */
  diff?: (before: unknown, after: unknown) => unknown[];
  /**
   * Bounds on what hooks return (SandboxLimits): `jsonDepth` for every result field and the chain
   * state (the sandbox enforces it in the isolate; this is the host's backstop), and the annotation
   * caps (annotations.ts). Defaults: 64, 64 KiB, 256 KiB.
   */
  limits?: { jsonDepth?: number; annotationBytesPerHook?: number; annotationBytesPerChain?: number };
}

/**
 * The chain's evolving input. Each part is serialized to JSON once and again only after a `modify`
 * replaced it, so an N-hook chain without modifications stringifies the input once, not N times; the
 * assembled HookInput string is kept too, until a `modify` or a chain_state change.
 */
class ChainInput {
  context: VcpContext;
  constitution: Constitution;
  private stateJson = "{}";
  private contextJson: string | undefined;
  private constitutionJson: string | undefined;
  private inputJson: string | undefined;
  private readonly fixedJson: string;
  private chainStateCache: { json: string; value: Record<string, unknown> } | undefined;

  constructor(readonly request: ChainRequest) {
    this.context = request.context;
    this.constitution = request.constitution;
    this.fixedJson = `,"event":${JSON.stringify(request.event)},"session":${JSON.stringify(request.session)}`;
  }

  get chainStateJson(): string {
    return this.stateJson;
  }

  set chainStateJson(json: string) {
    if (json === this.stateJson) return;
    this.stateJson = json;
    this.inputJson = undefined;
  }

  replaceContext(context: VcpContext): void {
    this.context = context;
    this.contextJson = undefined;
    this.inputJson = undefined;
  }

  replaceConstitution(constitution: Constitution): void {
    this.constitution = constitution;
    this.constitutionJson = undefined;
    this.inputJson = undefined;
  }

  /** The whole HookInput as one JSON string: the only thing that crosses into the sandbox. */
  json(): string {
    if (this.inputJson !== undefined) return this.inputJson;
    this.contextJson ??= JSON.stringify(this.context);
    this.constitutionJson ??= JSON.stringify(this.constitution);
    this.inputJson = `{"context":${this.contextJson},"constitution":${this.constitutionJson}${this.fixedJson},"chain_state":${this.stateJson}}`;
    return this.inputJson;
  }

  /** HookInput-shaped view for predicates; chain_state is parsed only if a predicate reads it. */
  predicateView(): object {
    const owner = this;
    return {
      context: this.context,
      constitution: this.constitution,
      event: this.request.event,
      session: this.request.session,
      get chain_state(): Record<string, unknown> {
        return owner.chainState();
      },
    };
  }

  private chainState(): Record<string, unknown> {
    if (this.chainStateCache?.json !== this.chainStateJson) {
      this.chainStateCache = { json: this.chainStateJson, value: parseGuestJson(this.chainStateJson) as Record<string, unknown> };
    }
    return this.chainStateCache.value;
  }

  summary(inputBytes: number): InputSummary {
    return {
      session_id: this.request.session.id,
      constitution_id: this.constitution.id,
      context_keys: Object.keys(this.context).length,
      input_bytes: inputBytes,
    };
  }
}

/**
 * Run one hook chain (spec §5, §7; DESIGN §4.2–§4.4) against an action invoker.
 *
 * - hooks run one at a time, in plan order (spec §5.3); disabled hooks and hooks whose predicate is
 *   false are skipped (`hook.skipped`) as if they returned `continue` (spec §4.4); a condition that
 *   would overrun its bundle's predicate cost budget for the chain is not evaluated, and its hook is
 *   recorded as `error` without running (predicate.ts "cost");
 * - `modify` replaces the context and/or constitution seen by later hooks (spec §5.1.3), a modified
 *   constitution first passing the integrity check when one is configured (DESIGN §4.5);
 * - the first `abort` halts the chain with its reason and `aborted_by` (spec §5.1.4), except for
 *   `periodic`, where abort is treated as continue (spec §3.6);
 * - timeouts, exceptions and invalid results are recorded with their outcome and treated as
 *   `continue` (spec §5.4, §7.1, §7.2) unless the hook is `fail_closed` (spec §7.4);
 * - with a whole-chain deadline (DESIGN §4.3) each hook gets min(timeout_ms, what is left of its
 *   tier's share, see deadline.ts); a hook left no time is `skipped_deadline` (never run, `hook.skipped`
 *   with reason `chain_deadline`), one stopped at a budget the deadline cut below its timeout_ms is
 *   `deadline_exceeded`. Neither is a failure of that hook (the time was not all its own); both leave
 *   a `fail_closed` hook without a verdict, so it aborts the chain;
 * - a `session`-trust hook cannot modify or abort (spec §8.3): `capability_denied`, continue;
 * - more than 50% of executed hooks failing flags a cascade (spec §7.3, cascade.ts). The executor
 *   disables nothing: `hook.cascade_failure` leaves here with `disabled: false`, and the runtime,
 *   which decides and disables, reports what it disabled.
 *
 * An empty plan returns without touching the invoker.
 *
 * @example
 * ```ts
 * const result = await runChain(plan, { chainId, context, constitution, event, session }, { invoker, clock, emit });
 * if (result.status === "aborted") console.log(result.aborted_by, result.reason);
 * ```
 */
export async function runChain(plan: ChainPlan, request: ChainRequest, deps: ChainDeps): Promise<ChainResult> {
  const { clock, emit } = deps;
  const startedAt = clock.now();
  const type = plan.type;
  const chainId = request.chainId;
  const hookResults: HookExecution[] = [];
  let status: ChainResult["status"] = "completed";
  let reason: string | null = null;
  let abortedBy: string | null = null;
  if (plan.hooks.length === 0) return emptyChainResult(type, request);

  const input = new ChainInput(request);
  const deadline = new ChainDeadline(request.deadlineMs, clock, startedAt);
  const meters = new Map<string, PredicateMeter>();
  const jsonDepth = deps.limits?.jsonDepth ?? DEFAULT_JSON_DEPTH;
  const annotations = new AnnotationBudget({
    perHook: deps.limits?.annotationBytesPerHook ?? DEFAULT_ANNOTATION_BYTES_PER_HOOK,
    perChain: deps.limits?.annotationBytesPerChain ?? DEFAULT_ANNOTATION_BYTES_PER_CHAIN,
  });

  // Decided in the fire path before crossing (chain/select.ts), if it selected for this plan.
  const selection = request.selection;
  for (let index = 0; index < plan.hooks.length; index++) {
    const { hook, predicate } = plan.hooks[index]!;
    if (!hook.enabled) {
      emit({ event: "hook.skipped", payload: { hook: hook.name, type, chain_id: chainId, reason: "disabled" } });
      hookResults.push(hookExecution(hook, "skipped_disabled", 0));
      continue;
    }
    let conditionFailure: string | undefined = selection !== undefined && Object.hasOwn(selection.refused, index) ? selection.refused[index] : undefined;
    let fires = true;
    if (predicate !== null && conditionFailure === undefined && selection?.held.includes(index) !== true) {
      const conditionStart = deadline.enabled ? clock.now() : 0;
      // One predicate meter per bundle: a bundle's conditions together cost at most maxCost per chain
      // (what the fire path spent included), and never use up another bundle's (predicate.ts "cost").
      const verdict = evaluateCondition(predicate, input.predicateView(), meterOf(meters, hook.action.bundle, selection?.predicateLeft), hook.action.bundle);
      if (typeof verdict === "string") conditionFailure = verdict;
      else fires = verdict;
      // A condition's time is its hook's: an observer's conditions are not charged to policy hooks either.
      if (deadline.enabled) deadline.charge(hook, clock.now() - conditionStart);
    }
    if (!fires) {
      emit({
        event: "hook.skipped",
        payload: { hook: hook.name, type, chain_id: chainId, reason: "predicate_false", predicate: hook.condition },
      });
      hookResults.push(hookExecution(hook, "skipped_predicate", 0));
      continue;
    }

    const budgetMs = deadline.budgetFor(hook);
    if (budgetMs <= 0) {
      // Its share of the chain deadline is spent: the hook never runs, and that is not its failure.
      emit({ event: "hook.skipped", payload: { hook: hook.name, type, chain_id: chainId, reason: "chain_deadline" } });
      const skipped = hookExecution(hook, "skipped_deadline", 0);
      if (hook.fail_closed && type !== "periodic") {
        // spec §7.4: a fail-closed hook that gave no verdict stops the chain.
        skipped.status = "abort";
        skipped.reason = `fail-closed: ${hook.name}: the chain deadline was spent before it ran`;
        hookResults.push(skipped);
        status = "aborted";
        reason = skipped.reason;
        abortedBy = hook.name;
        break;
      }
      hookResults.push(skipped);
      continue;
    }
    const inputJson = input.json();
    const summary = input.summary(inputJson.length);
    emit(hookFiredEvent(hook.name, type, chainId, request.session.id, summary));

    const hookStart = clock.now();
    let invoked: InvokeOutcome;
    if (conditionFailure !== undefined) {
      invoked = { kind: "threw", message: conditionFailure };
    } else {
      try {
        // SECURITY: per-session guest state is kept by the session's key: two owners' equal ids never share it.
        invoked = await deps.invoker.invoke({ hook, chainId, sessionId: request.sessionKey ?? request.session.id, inputJson, budgetMs });
      } catch (err) {
        invoked = { kind: "threw", message: `sandbox failed to run the hook: ${err instanceof Error ? err.message : String(err)}` };
      }
    }
    const durationMs = clock.now() - hookStart;
    deadline.charge(hook, durationMs);

    const execution = hookExecution(hook, "ok", durationMs);
    if ("cpuMs" in invoked && invoked.cpuMs !== undefined) execution.cpu_ms = invoked.cpuMs;
    let failureWhy: string | undefined;
    let wantsAbort = false;

    switch (invoked.kind) {
      case "returned": {
        // SECURITY: host backstop of the isolate's depth bound, before the text is parsed: what this
        // worker accepts must survive the structured clone and the IPC copy that carry it home.
        const parsed = parseHookResult(invoked.resultJson, jsonDepth);
        if (!parsed.ok) {
          execution.outcome = "invalid_result";
          failureWhy = parsed.message;
          break;
        }
        const result = parsed.result;
        if (result.annotations !== undefined) annotations.admit(execution, result.annotations, invoked.resultJson.length);
        if (result.reason !== undefined) execution.reason = result.reason;
        let returned: ResultStatus = result.status;
        if (hook.trust === "session") {
          // SECURITY: spec §8.3 — session-trust hooks observe and annotate; they cannot modify,
          // abort, or steer later hooks through chain_state.
          if (returned !== "continue") {
            execution.outcome = "capability_denied";
            execution.error = `a session-trust hook cannot ${returned} (spec §8.3)`;
          }
          break;
        }
        if (jsonTextExceeds(invoked.chainStateJson, jsonDepth)) {
          execution.outcome = "invalid_result";
          failureWhy = `chain_state nests deeper than ${jsonDepth} levels (limits.json_depth)`;
          break;
        }
        if (!adoptChainState(input, invoked.chainStateJson)) {
          execution.outcome = "invalid_result";
          failureWhy = "chain_state must stay a JSON object";
          break;
        }
        if (returned === "abort" && type === "periodic") {
          // spec §3.6: periodic hooks are not part of a pipeline event and cannot abort it.
          execution.reason = `periodic abort treated as continue (spec §3.6): ${result.reason ?? ""}`;
          returned = "continue";
        }
        if (returned === "modify") {
          // The constitution is checked first: a rejected modification is rejected whole, so a hook
          // cannot land its context change while its constitution change is refused.
          let nextConstitution: Constitution | undefined;
          let provenance: ConstitutionProvenance | undefined;
          if (result.modified_constitution != null) {
            const verdict: ReturnType<ConstitutionCheck> = deps.checkConstitution
              ? deps.checkConstitution(input.constitution, result.modified_constitution, hook, constitutionsToKeep(type, request.event, result.modified_constitution))
              : { ok: true, constitution: result.modified_constitution };
            if (!verdict.ok) {
              execution.outcome = "integrity_rejected";
              execution.error = verdict.reason;
              if (hook.fail_closed) wantsAbort = true;
              break;
            }
            nextConstitution = verdict.constitution;
            provenance = verdict.provenance;
          }
          execution.status = "modify";
          const before = deps.diff ? { context: input.context, constitution: input.constitution } : undefined;
          if (nextConstitution !== undefined) {
            input.replaceConstitution(nextConstitution);
            execution.modified_constitution = true;
            if (provenance !== undefined) execution.provenance = provenance;
          }
          if (result.modified_context != null) {
            input.replaceContext(result.modified_context);
            execution.modified_context = true;
          }
          if (deps.diff && before) execution.modification = deps.diff(before, { context: input.context, constitution: input.constitution });
        } else if (returned === "abort") {
          execution.status = "abort";
          wantsAbort = true;
        }
        break;
      }
      case "threw":
        execution.outcome = "error";
        failureWhy = sanitizeGuestText(invoked.message);
        emit({
          event: "hook.error",
          payload: {
            hook: hook.name, type, chain_id: chainId, outcome: "error", error: failureWhy,
            ...(invoked.stack ? { stack: sanitizeGuestText(invoked.stack, STACK_MAX_CHARS) } : {}),
            input_summary: summary,
          },
        });
        break;
      case "timeout":
        if (budgetMs < hook.timeout_ms) {
          // Stopped by the chain deadline, before its own timeout_ms: part of the time it lacked was
          // spent by other hooks, so this is not a timeout of this hook (spec §5.4 is about timeout_ms).
          execution.outcome = "deadline_exceeded";
          // Its tier's share is spent, whatever the clocks measured (a timer may fire a hair early).
          deadline.exhaust(hook);
          execution.error = deadlineCutText(invoked.elapsedMs, budgetMs, hook.timeout_ms);
          if (hook.fail_closed) wantsAbort = true;
          break;
        }
        execution.outcome = "timeout";
        failureWhy = timeoutText(invoked.elapsedMs, budgetMs, hook.timeout_ms);
        emit({
          event: "hook.timeout",
          payload: { hook: hook.name, type, chain_id: chainId, timeout_ms: hook.timeout_ms, elapsed_ms: invoked.elapsedMs, input_summary: summary },
        });
        break;
      case "invalid":
        execution.outcome = "invalid_result";
        failureWhy = sanitizeGuestText(invoked.message);
        break;
      case "crashed":
        execution.outcome = "crashed";
        failureWhy = sanitizeGuestText(invoked.message);
        emit({ event: "hook.error", payload: { hook: hook.name, type, chain_id: chainId, outcome: "crashed", error: failureWhy, input_summary: summary } });
        break;
    }
    if (execution.outcome === "invalid_result") {
      // spec §7.2.2: an invalid result MUST be logged as a validation error.
      emit({ event: "hook.error", payload: { hook: hook.name, type, chain_id: chainId, outcome: "invalid_result", error: failureWhy ?? "", input_summary: summary } });
    }
    if (failureWhy !== undefined) {
      execution.error = failureWhy;
      if (hook.fail_closed) wantsAbort = true;
    }
    if (wantsAbort && type === "periodic") wantsAbort = false;
    if (wantsAbort && execution.outcome !== "ok") {
      // spec §7.4 fail-closed: a failure (or integrity rejection) of this hook aborts the chain.
      execution.status = "abort";
      execution.reason = `fail-closed: ${hook.name}: ${execution.error ?? execution.outcome}`;
    }
    hookResults.push(execution);
    emit(hookCompletedEvent(execution, type, chainId));
    if (wantsAbort) {
      status = "aborted";
      reason = execution.reason ?? "aborted";
      abortedBy = hook.name;
      break;
    }
  }

  const count = countFailures(hookResults);
  const cascade = isCascade(count);
  if (cascade) {
    emit({
      event: "hook.cascade_failure",
      payload: { type, chain_id: chainId, total: count.total, failed: count.failing.length, failing_hooks: count.failing, disabled: false, disabled_hooks: [] },
    });
  }
  // The per-chain annotation cap, before the results leave the worker (chain result and audit agree).
  annotations.settle();
  return finish(input, cascade);

  function finish(state: ChainInput, cascadeFailure: boolean): ChainResult {
    return {
      chain_id: chainId,
      type,
      status,
      reason,
      aborted_by: abortedBy,
      context: state.context,
      constitution: state.constitution,
      cascade_failure: cascadeFailure,
      hook_results: hookResults,
      duration_ms: clock.now() - startedAt,
    };
  }
}

/**
 * Constitutions whose safety-critical rules a modified constitution must keep besides those of the
 * one the hook was given (spec §8.2.4, integrity/check.ts `keepsSafetyRulesOf`):
 * - `on_conflict`: every constitution being composed (`event.constitutions`), since the hook is handed
 *   only the composition base, which leaves the conflicting rules out;
 * - `post_select`: the candidate the replacement names by id, so "selecting" a candidate cannot
 *   strip that candidate's safety rules. (Candidates are alternatives: a replacement need not keep
 *   the rules of candidates it does not name.)
 */
function constitutionsToKeep(type: ChainPlan["type"], event: ChainRequest["event"], proposed: Constitution): readonly Constitution[] {
  if (type === "on_conflict") return constitutionList((event as { constitutions?: unknown }).constitutions);
  if (type === "post_select") return constitutionList((event as { candidates?: unknown }).candidates).filter((c) => c.id === proposed.id);
  return [];
}

/** The event's constitutions (validated at the boundary, assertChainInput); anything else is none. */
function constitutionList(value: unknown): readonly Constitution[] {
  return Array.isArray(value) ? (value as Constitution[]) : [];
}

/** Accept the chain state a hook left behind if it is still a JSON object (spec §5.6). */
function adoptChainState(input: ChainInput, chainStateJson: string): boolean {
  if (chainStateJson === input.chainStateJson) return true;
  if (chainStateJson.length < 2 || chainStateJson[0] !== "{") return false;
  input.chainStateJson = chainStateJson;
  return true;
}
