/**
 * The executor: runs one chain of any profile — VCP (spec §5, §7; DESIGN §4.2–§4.4) and the agents'
 * hook systems (PROFILES §1, §2, §8) alike. Every per-hook behaviour is here once (selection, chain
 * and class deadlines, predicate budget, invocation, the closed outcome set, guest text sanitized, the
 * observer rule, fail_closed, stopping the chain); what a hook's output means is the profile
 * descriptor's (profiles/types.ts): decode, failure output, verdict, chaining, stop, fold, answer, and
 * for VCP (profiles/vcp/) the composed HookInput, modify with its integrity check, chain state,
 * annotations and cascades.
 *
 *   plan order ─► selection (chain/select.ts; in the fire path when it selected, else here):
 *                 disabled, deduplicated, matcher ✗, condition ✗ ─► skipped (recorded, not run)
 *   selected ─► mode (per_definition: any sequential ⇒ sequential)
 *        sequential: each hook gets the input as the hooks before it left it (VCP: the composed
 *                    HookInput after modify / chain_state; agents: chainInput)
 *        parallel:   every hook gets the ORIGINAL input; all at once when the invoker is `concurrent`
 *   per hook: condition (if not decided) ─► budget: chain deadline, class deadline (hookBudgetMs)
 *        ─► hook.fired ─► invoke ─► returned ─► decode ─► annotations, reason ─► observer? ─► chain state
 *                        threw · timeout · invalid · crashed · command ─► failure ─► failureOutput(fail_closed)
 *        ─► verdict (a block an event cannot make is an allow: blockIgnored) ─► modify: apply (integrity)
 *        ─► entry ─► chainInput ─► [hook.error | hook.timeout] ─► hook.completed ─► stopsChain ⇒ no later hook
 *   after: cascade (VCP) ─► annotation cap ─► result: VCP status/reason/context, agents' folded answer
 *
 * A `session`-trust hook observes (spec §8.3), in every profile: its output — or its failure's — never
 * reaches the fold, the next hook's input, the chain state or the chain's stop.
 */
import type { Clock, EventSink, InputSummary, LifecycleEvent } from "../observe/events.js";
import { countFailures, isCascade } from "./cascade.js";
import { changedPaths } from "./decision.js";
import { ChainDeadline } from "./deadline.js";
import type { PredicateMeter } from "./predicate.js";
import { findProfile, VCP_PROFILE_ID } from "../profiles/index.js";
import { DEFAULT_JSON_DEPTH, jsonTextExceeds } from "../model/json-bounds.js";
import { AnnotationBudget, DEFAULT_ANNOTATION_BYTES_PER_CHAIN, DEFAULT_ANNOTATION_BYTES_PER_HOOK } from "./annotations.js";
import { parseGuestJson } from "../model/result-json.js";
import { sanitizeGuestText, STACK_MAX_CHARS } from "./guest-text.js";
import { deadlineCutText, emptyChainResult, execRecordOf, hookCompletedEvent, hookExecution, hookFiredEvent, timeoutText } from "./contract.js";
import { chainOriginOf, executionModeOf, hookFailsClosed, type ChainPlan, type PlannedHook } from "./plan.js";
import { evaluateCondition, meterOf, selectProfileHooks, selectVcpHooks, type SelectedChain } from "./select.js";
import type { ActionInvoker, ChainRequest, ChainResult, ConstitutionCheck, HookExecution, InvokeOutcome, PreSelection } from "../model/chain.js";
import type { HookType } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import { recordedMs, type ResultStatus } from "../model/result.js";
import { VcpError } from "../errors.js";
import type { Aggregated, ComposedInput, Decoded, EventProfile, HookOutputEntry, NativeObject, PresentedAnswer, ProfileContext, Verdict } from "../profiles/types.js";

export interface ChainDeps {
  invoker: ActionInvoker;
  clock: Clock;
  /** Lifecycle events (spec §6.4) go here; absent ⇒ none are built (agent-profile chains report through their result). */
  emit?: EventSink;
  /**
   * With `emit`: `hook.fired` and `hook.completed` are not built; each hook.fired's input summary comes
   * here instead (the sandbox worker: the supervisor rebuilds both from the hook records, pool/events.ts).
   */
  firedSummary?: (summary: InputSummary) => void;
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
  /** Where to find the profile; default the catalogue (profiles/index.ts). */
  profileOf?: (id: string) => EventProfile | undefined;
}

/** A hook's reason kept on its execution record (the decision record bounds it again, after redaction). */
const MAX_REASON_CHARS = 4096;

function statusOf(verdict: Verdict): ResultStatus {
  return verdict === "block" ? "abort" : verdict === "modify" ? "modify" : "continue";
}

/**
 * Run one chain against an action invoker. `request.event` is the event (VCP) or the agent's native
 * input (validated by the caller with `profile.validateInput`); an agent chain's answer is on
 * `result.profile`. A plan in which no hook runs touches no invoker.
 *
 * VCP specifics, all through its descriptor: `modify` replaces the context and/or constitution seen by
 * later hooks (spec §5.1.3), a modified constitution first passing the integrity check (DESIGN §4.5);
 * the first `abort` halts the chain with its reason and `aborted_by` (§5.1.4), except for `periodic`
 * (§3.6); timeouts, exceptions and invalid results continue (§5.4, §7.1, §7.2) unless the hook is
 * `fail_closed` (§7.4); a hook left no time by the whole-chain deadline (DESIGN §4.3) is
 * `skipped_deadline`, one cut by it `deadline_exceeded` (neither is its failure; both leave a
 * fail_closed hook without a verdict, so it aborts); more than 50% of executed hooks failing flags a
 * cascade (§7.3, cascade.ts) — the executor disables nothing: the runtime decides and reports that.
 *
 * @example
 * ```ts
 * const result = await runChain(compileChainPlan("pre_inject", hooks, 7), { chainId, context, constitution, event, session }, { invoker, clock, emit });
 * if (result.status === "aborted") console.log(result.aborted_by, result.reason);
 * const answer = (await runChain(plan, { chainId, context: {}, constitution, event: nativeInput, session: { id: "s1" } }, { invoker, clock })).profile;
 * ```
 */
export async function runChain(plan: ChainPlan, request: ChainRequest, deps: ChainDeps): Promise<ChainResult> {
  const { clock, emit } = deps;
  const startedAt = clock.now();
  const profile = (deps.profileOf ?? findProfile)(plan.profile.id);
  if (profile === undefined) {
    throw new VcpError("UNKNOWN_PROFILE", `profile '${plan.profile.id}' is not in this process's catalogue`, { profile: plan.profile.id });
  }
  const event = plan.profile.event;
  const vcp = profile.id === VCP_PROFILE_ID;
  // What the chain's lifecycle events name it by: VCP's hook type, or the profile and its event.
  const origin = chainOriginOf(plan.profile);
  if (vcp && plan.hooks.length === 0) return emptyChainResult(event as HookType, request);
  const chainId = request.chainId;
  const ctx: ProfileContext = { strict: plan.profile.strict, settings: plan.profile.settings };
  const spec = profile.specOf?.(event) ?? profile.events[event];
  const unstamped = request.event as NativeObject;
  const jsonDepth = deps.limits?.jsonDepth ?? DEFAULT_JSON_DEPTH;
  const annotations = new AnnotationBudget({
    perHook: deps.limits?.annotationBytesPerHook ?? DEFAULT_ANNOTATION_BYTES_PER_HOOK,
    perChain: deps.limits?.annotationBytesPerChain ?? DEFAULT_ANNOTATION_BYTES_PER_CHAIN,
  });
  const integrity = { ...(deps.checkConstitution !== undefined ? { check: deps.checkConstitution } : {}), ...(deps.diff !== undefined ? { diff: deps.diff } : {}) };
  // The input the chain carries and changes (VCP's HookInput), or none: the agent's native input.
  const composed: ComposedInput | undefined = profile.composeInput?.(request, event);
  // Runtime-owned input fields (Amplifier data.timestamp), stamped once per chain that runs a hook
  // (or whose conditions are decided: they read what the first hook will receive).
  let stamped: NativeObject | undefined;
  const stampedOnce = (): NativeObject =>
    (stamped ??= profile.stampInput !== undefined ? profile.stampInput(unstamped, event, new Date(clock.wallNow()).toISOString()) : unstamped);

  // Which hooks run: the fire path's selection (it sent only those, with its decisions), or the same
  // selection made here on the whole plan (the main-process exec lane, tests, direct callers).
  const chosen: SelectedChain =
    request.selection !== undefined
      ? preselected(plan, request.selection)
      : composed !== undefined
        ? selectVcpHooks(plan, request)
        : selectProfileHooks(plan, profile, unstamped, stampedOnce);
  const selection = chosen.selection;
  if (emit !== undefined) for (const skippedEvent of chosen.events) emit(skippedEvent);
  const hookResults: HookExecution[] = [];
  const matching: Array<{ planned: PlannedHook; slot: number; position: number }> = [];
  for (let i = 0; i < plan.hooks.length; i++) {
    const decided = chosen.decided.get(i);
    if (decided !== undefined) hookResults.push(decided);
    else {
      // A placeholder keeps results in plan order; the hook's execution replaces it below.
      matching.push({ planned: plan.hooks[i]!, slot: hookResults.length, position: matching.length });
      hookResults.push(hookExecution(plan.hooks[i]!.hook, "ok", 0));
    }
  }
  // Slot → why the hook is not run though it may apply: its matcher or condition would overrun its bundle's meter.
  const budgetRefusals = new Map<number, string>();
  const heldConditions = new Set<number>();
  for (const { slot, position } of matching) {
    if (Object.hasOwn(selection.refused, position)) budgetRefusals.set(slot, selection.refused[position]!);
    if (selection.held.includes(position)) heldConditions.add(slot);
  }
  const mode = selection.mode ?? executionModeOf(profile, matching.map((m) => m.planned.hook));
  if (matching.length === 0) {
    if (composed !== undefined) return vcpResult(composed, hookResults, false);
    return profileResult(request, hookResults, null, false, startedAt, clock, profile, event, mode, answerWhenNoneRuns(profile, event, ctx, unstamped, hookResults), 0);
  }
  const original = composed === undefined ? stampedOnce() : unstamped;
  const entries: HookOutputEntry[] = [];
  // A profile with per-hook budgets (ai-memory class deadlines) owns the chain deadline: ChainDeadline
  // then only applies a caller's explicit one.
  const deadline = new ChainDeadline(request.deadlineMs ?? (profile.hookBudgetMs === undefined ? spec?.chain_deadline_ms : undefined), clock, startedAt);
  // One predicate meter per bundle: a bundle's conditions together cost at most maxCost per chain
  // (what the fire path spent included), and never use up another bundle's (predicate.ts "cost").
  const meters = new Map<string, PredicateMeter>();
  const originalJson = composed === undefined ? JSON.stringify(original) : "";
  let current = original;
  let currentJson = originalJson;
  let stoppedBy: string | null = null;
  let stopReason: string | null = null;
  let timeoutViolations = 0;
  let classDeadlineSpent = false;
  // Whether any hook produced an entry: if none did, the fold sees the unstamped input (no handler ran).
  let ranAny = false;
  const unrun = new Set(matching.map((m) => m.slot));

  /** A hook that passed its condition and budget checks and was started: what settling it needs. */
  interface Started {
    hook: ResolvedHook;
    slot: number;
    execution: HookExecution;
    budgetMs: number;
    blocking: boolean;
    failClosed: boolean;
    summary: InputSummary | undefined;
    /** The native input the hook was given (profile chains): what `checkOutput` checks its output against. */
    input: NativeObject;
    /** Its invocation (undefined: no budget left, not started), with the clock when it ended; never rejects. */
    run: Promise<{ invoked: InvokeOutcome; durationMs: number; resultJsonLength: number } | undefined>;
  }

  /**
   * For the decision record (chain/decision.ts), an agent hook's: the reason a blocking, asking or
   * modifying output gives, and — for a modification of the hook's input `before` — which fields it
   * changed (RFC 6902 op and path, no values). Only for those verdicts: an allow costs nothing here.
   */
  const explain = (execution: HookExecution, output: NativeObject, before: NativeObject | undefined): void => {
    const why = profile.reasonOf?.(output, event);
    if (why !== undefined && execution.reason === undefined) execution.reason = why.length > MAX_REASON_CHARS ? `${why.slice(0, MAX_REASON_CHARS)}…` : why;
    if (before !== undefined && execution.verdict === "modify" && profile.chainInput !== undefined) {
      const after = profile.chainInput(before, output, event, ctx);
      if (after !== before) execution.modification = changedPaths(before, after);
    }
  };

  /** Record a hook that ends without running, with its `hook.skipped` when it has one. */
  const skip = (hook: ResolvedHook, slot: number, outcome: HookExecution["outcome"], reason?: "disabled" | "predicate_false"): "skipped" => {
    hookResults[slot] = hookExecution(hook, outcome, 0);
    if (emit !== undefined && reason !== undefined) {
      emit({ event: "hook.skipped", payload: { hook: hook.name, ...origin, chain_id: chainId, reason, ...(reason === "predicate_false" ? { predicate: hook.condition } : {}) } });
    }
    return "skipped";
  };

  /**
   * Conditions, the class and chain deadlines, then the invocation of one hook, started and not
   * awaited. Answers "skipped" when the hook ends here without an entry, "stopped" when its
   * deadline-exhausted output stops the chain, else the started hook for `settle`.
   */
  const start = (planned: PlannedHook, slot: number, inputNow: NativeObject, inputJson: string): Started | "skipped" | "stopped" => {
    const { hook, predicate } = planned;
    if (!hook.enabled) return skip(hook, slot, "skipped_disabled", "disabled");
    // repo-yaml: a failing `blocking` hook blocks like a fail_closed one (PROFILES §8.8).
    // SECURITY: never for a session-trust hook (spec §8.3), in both flags (hookFailsClosed).
    const blocking = hook.blocking === true && hook.trust !== "session";
    const failClosed = hookFailsClosed(hook);

    // A matcher or condition over its budget is a failure to decide whether the hook applies: the hook
    // is not run (`error`, or its fail_closed answer).
    let conditionFailure: string | undefined = budgetRefusals.get(slot);
    if (predicate !== null && conditionFailure === undefined && !heldConditions.has(slot)) {
      const conditionStart = deadline.enabled ? clock.now() : 0;
      const view = composed !== undefined ? composed.conditionView() : inputNow;
      const verdict = evaluateCondition(predicate, view, meterOf(meters, hook.action.bundle, selection.predicateLeft), hook.action.bundle);
      // A condition's time is its hook's: an observer's conditions are not charged to policy hooks either.
      if (deadline.enabled) deadline.charge(hook, clock.now() - conditionStart);
      if (verdict === false) return skip(hook, slot, "skipped_predicate", "predicate_false");
      if (verdict !== true) conditionFailure = verdict;
    }

    const execution = hookExecution(hook, "ok", 0);
    let budgetMs = deadline.budgetFor(hook);
    if (profile.hookBudgetMs !== undefined) {
      // A hook stopped at the class deadline spent it, even if the clock reads a millisecond short
      // (timers and clocks disagree slightly): the next hooks must not run on a sliver of time.
      const classBudget = classDeadlineSpent ? undefined : profile.hookBudgetMs(hook.timeout_ms, event, clock.now() - startedAt);
      if (classBudget === undefined) {
        // The event class's chain deadline is spent (PROFILES §3.5): counted, then open ⇒ skip, closed ⇒ its answer.
        timeoutViolations++;
        execution.outcome = "deadline_exhausted";
        execution.error = `the ${spec?.class ?? event} chain deadline${spec?.chain_deadline_ms !== undefined ? ` of ${spec.chain_deadline_ms} ms` : ""} was spent before it ran`;
        // SECURITY: an observer contributes nothing, not even its skip's answer (spec §8.3).
        const exhausted = hook.trust === "session" ? undefined : profile.deadlineExhaustedOutput?.(hook.name, hook.fail_closed, event, ctx);
        hookResults[slot] = execution;
        if (exhausted === undefined) return "skipped";
        const verdict = profile.verdictOf(exhausted, event);
        execution.verdict = verdict;
        execution.status = statusOf(verdict);
        if (verdict === "block") explain(execution, exhausted, undefined);
        ranAny = true;
        entries.push({ hook: hook.name, output: exhausted, failed: true, ...(blocking ? { blocking } : {}) });
        if (profile.stopsChain?.(exhausted, event, ctx) === true) {
          stoppedBy = hook.name;
          return "stopped";
        }
        return "skipped";
      }
      budgetMs = Math.min(budgetMs, Math.max(1, Math.floor(classBudget)));
    }
    // Built only for a listener: the input as the hook gets it (VCP: its HookInput's summary).
    const summary = emit !== undefined && budgetMs > 0 ? (composed !== undefined ? composed.summary(inputJson.length) : nativeSummary(request, inputJson.length)) : undefined;
    if (summary !== undefined) {
      if (deps.firedSummary !== undefined) deps.firedSummary(summary);
      else emit!(hookFiredEvent(hook.name, origin, chainId, request.session.id, summary));
    }

    const invoke = async (): Promise<{ invoked: InvokeOutcome; durationMs: number; resultJsonLength: number }> => {
      const hookStart = clock.now();
      let invoked: InvokeOutcome;
      if (conditionFailure !== undefined) invoked = { kind: "threw", message: conditionFailure };
      else {
        try {
          // SECURITY: per-session guest state is kept by the session's key: two owners' equal ids never share it.
          invoked = await deps.invoker.invoke({
            hook, chainId, sessionId: request.sessionKey ?? request.session.id, inputJson, budgetMs,
            ...(composed === undefined ? { native: true } : {}),
            ...(request.sessionScope !== undefined ? { sessionScope: request.sessionScope } : {}),
          });
        } catch (err) {
          invoked = { kind: "threw", message: `${hook.exec !== undefined ? "the command lane" : "sandbox"} failed to run the hook: ${err instanceof Error ? err.message : String(err)}` };
        }
      }
      // Read when this hook ends, not when the executor gets to it (a parallel group settles in plan order).
      return { invoked, durationMs: clock.now() - hookStart, resultJsonLength: invoked.kind === "returned" ? invoked.resultJson.length : 0 };
    };
    return { hook, slot, execution, budgetMs, blocking, failClosed, summary, input: inputNow, run: budgetMs <= 0 ? Promise.resolve(undefined) : invoke() };
  };

  /** A started hook's outcome → its execution record, events and output entry (in plan order). True when it stops the chain. */
  const settle = async (started: Started): Promise<boolean> => {
    const { hook, slot, execution, budgetMs, blocking, failClosed, summary, input } = started;
    let output: NativeObject | undefined;
    let failureWhy: string | undefined;
    // The event that follows hook.fired for a failure: hook.error or hook.timeout, with what it names.
    let failureEvent: LifecycleEvent | undefined;
    // An exec hook's failed run that its profile's table still reads (Gemini exit 1 + text ⇒ allow with
    // a warning): a fail-open hook contributes that, as the agent would; a fail-closed one blocks.
    let failedRunOutput: NativeObject | undefined;
    /** A decoded output: annotations, reason, the observer rule, the chain state it left. */
    const accept = (raw: Decoded<NativeObject>, resultJson: string | undefined, chainStateJson: string | undefined): void => {
      if (!raw.ok) {
        execution.outcome = "invalid_result";
        failureWhy = sanitizeGuestText(raw.error);
        return;
      }
      output = raw.value;
      const said = output["annotations"];
      if (profile.annotations === true && resultJson !== undefined && typeof said === "object" && said !== null) {
        annotations.admit(execution, said as Record<string, unknown>, resultJson.length);
      }
      // A VCP result's reason is its record's, whatever its status (spec §4.3).
      const reason = composed !== undefined ? profile.reasonOf?.(output, event) : undefined;
      if (reason !== undefined) execution.reason = reason;
      if (hook.trust === "session") {
        // What an observer said is withheld (below); naming it tells the author why nothing showed.
        // SECURITY: spec §8.3 — session-trust hooks observe and annotate; they cannot modify, abort,
        // or steer later hooks through chain_state.
        if (profile.observerDenial !== undefined) {
          const denial = profile.observerDenial(output, event);
          if (denial !== undefined) {
            execution.outcome = "capability_denied";
            execution.error = denial;
          }
          return;
        }
        const withheld = profile.answerFields(output, event);
        if (withheld.length > 0) {
          execution.outcome = "capability_denied";
          execution.stripped = [...withheld];
          execution.error = `a session-trust hook observes only: its output never reaches the answer (spec §8.3); withheld: ${withheld.join(", ")}`;
        }
        return;
      }
      if (composed !== undefined && chainStateJson !== undefined) {
        const refused = composed.adoptChainState(chainStateJson, jsonDepth);
        if (refused !== undefined) {
          execution.outcome = "invalid_result";
          failureWhy = refused;
        }
      }
      // An output that does not fit the input it answers (VS Code: an updatedInput the tool's schema
      // refuses) is invalid: fail_closed ⇒ the hook's failure output; else what fits stands, the why on its record.
      const misfit = composed === undefined ? profile.checkOutput?.(output, input, event, hook.name) : undefined;
      if (misfit !== undefined) {
        execution.outcome = "invalid_result";
        // SECURITY: a fail_closed hook's rewrite the agent would discard never lets the original input run under its decision.
        if (failClosed) failureWhy = sanitizeGuestText(misfit.error);
        else {
          output = misfit.kept;
          execution.error = sanitizeGuestText(misfit.error);
        }
      }
    };
    /** A hook stopped at its budget: its own timeout, or the chain deadline's cut (sandboxed and exec alike). */
    const timedOut = (elapsedMs: number): void => {
      // PROFILES §8.10: a hook timeout, like an exhausted chain deadline, is a timeout violation.
      timeoutViolations++;
      if (budgetMs < hook.timeout_ms) {
        // Stopped by the chain deadline, before its own timeout_ms: part of the time it lacked was
        // spent by other hooks, so this is not a timeout of this hook (spec §5.4 is about timeout_ms).
        execution.outcome = "deadline_exceeded";
        // Its tier's share is spent, whatever the clocks measured (a timer may fire a hair early).
        deadline.exhaust(hook);
        if (profile.hookBudgetMs !== undefined) classDeadlineSpent = true;
        failureWhy = deadlineCutText(elapsedMs, budgetMs, hook.timeout_ms);
      } else {
        execution.outcome = "timeout";
        failureWhy = timeoutText(elapsedMs, budgetMs, hook.timeout_ms);
        if (summary !== undefined) {
          failureEvent = { event: "hook.timeout", payload: { hook: hook.name, ...origin, chain_id: chainId, timeout_ms: hook.timeout_ms, elapsed_ms: elapsedMs, input_summary: summary } };
        }
      }
    };
    const errorEvent = (outcome: HookExecution["outcome"], error: string, stack?: string): void => {
      if (summary === undefined) return;
      failureEvent = {
        event: "hook.error",
        payload: { hook: hook.name, ...origin, chain_id: chainId, outcome, error, ...(stack !== undefined ? { stack: sanitizeGuestText(stack, STACK_MAX_CHARS) } : {}), input_summary: summary },
      };
    };
    const ran = await started.run;
    if (ran === undefined) {
      // Its share of the chain deadline is spent: the hook never runs, and that is not its failure.
      execution.outcome = "skipped_deadline";
      failureWhy = "the chain deadline was spent before it ran";
      emit?.({ event: "hook.skipped", payload: { hook: hook.name, ...origin, chain_id: chainId, reason: "chain_deadline" } });
    } else {
      const { invoked } = ran;
      execution.duration_ms = recordedMs(ran.durationMs);
      deadline.charge(hook, ran.durationMs);
      if ("cpuMs" in invoked && invoked.cpuMs !== undefined) execution.cpu_ms = invoked.cpuMs;
      switch (invoked.kind) {
        case "returned":
          accept(
            profile.decodeResult !== undefined ? profile.decodeResult(invoked.resultJson, event, jsonDepth) : decodeOutput(profile, invoked.resultJson, event, ctx, jsonDepth),
            invoked.resultJson,
            invoked.chainStateJson,
          );
          break;
        case "threw":
          execution.outcome = "error";
          failureWhy = sanitizeGuestText(invoked.message);
          errorEvent("error", failureWhy, invoked.stack);
          break;
        case "timeout":
          timedOut(invoked.elapsedMs);
          break;
        case "invalid":
          execution.outcome = "invalid_result";
          failureWhy = sanitizeGuestText(invoked.message);
          break;
        case "crashed":
          execution.outcome = "crashed";
          failureWhy = sanitizeGuestText(invoked.message);
          errorEvent("crashed", failureWhy);
          break;
        case "command": {
          // The command lane (PROFILES §6): the profile's exit-code table reads the run.
          const run = invoked.run;
          execution.sandboxed = false;
          execution.exec = execRecordOf(invoked);
          if (run === undefined || profile.parseCommandResult === undefined) {
            // Not started (a changed script, shell not allowed, missing file): the hook failed; its fail mode applies.
            execution.outcome = "error";
            failureWhy = sanitizeGuestText(invoked.refused !== undefined ? `${invoked.refused.code}: ${invoked.refused.message}` : `profile ${profile.id} has no exit-code table`);
            break;
          }
          const parsed = profile.parseCommandResult({ exitCode: run.exitCode, signal: run.signal, stdout: run.stdout, stderr: run.stderr, timedOut: run.timedOut }, hook.name, event);
          if (run.timedOut) timedOut(run.durationMs);
          else if (parsed.failure !== undefined) {
            execution.outcome = run.signal !== null || run.exitCode === null ? "exec_signal" : "exec_nonzero";
            failureWhy = sanitizeGuestText(parsed.failure);
          }
          if (failureWhy === undefined) accept(profile.decode(parsed.output, event, ctx), undefined, undefined);
          else {
            const table = profile.decode(parsed.output, event, ctx);
            if (table.ok) failedRunOutput = table.value;
          }
          break;
        }
      }
      // spec §7.2.2: an invalid result MUST be logged as a validation error.
      if (execution.outcome === "invalid_result") errorEvent("invalid_result", failureWhy ?? execution.error ?? "");
    }
    /** The hook failed: its profile's rule for a failed hook (fail-open warning, or its blocking answer when fail_closed). */
    const fail = (why: string): void => {
      failureWhy = why;
      execution.error = why;
      output = failedRunOutput !== undefined && !failClosed ? failedRunOutput : profile.failureOutput(hook.name, why, failClosed, event, ctx);
    };
    if (failureWhy !== undefined) fail(failureWhy);
    if (hook.trust === "session") {
      // SECURITY: spec §8.3, the one rule for every profile: a session-trust hook observes. Its output —
      // or its failure's — never reaches the fold, the next hook's input or the chain's stop, so it
      // changes nothing a guard decided or wrote, whichever of them runs first.
      execution.verdict = "observe";
      return record(false);
    }
    let verdict = profile.verdictOf(output!, event);
    let ignored: string | undefined;
    if (verdict === "block" && (ignored = profile.blockIgnored?.(output!, event)) !== undefined) {
      execution.reason = ignored;
      verdict = "allow";
    }
    if (verdict === "modify" && composed !== undefined) {
      const refused = composed.apply(output!, hook, execution, integrity);
      if (refused !== undefined) {
        // A refused modification is the hook's failure (fail_closed ⇒ the chain stops), not a change.
        execution.outcome = "integrity_rejected";
        fail(refused);
        verdict = profile.verdictOf(output!, event);
      }
    }
    execution.verdict = verdict;
    execution.status = statusOf(verdict);
    if (composed !== undefined) {
      // A failed VCP hook's reason is its failure output's (fail-closed: the abort's).
      const reason = failureWhy !== undefined ? profile.reasonOf?.(output!, event) : undefined;
      if (reason !== undefined) execution.reason = reason;
    } else if (verdict === "block" || verdict === "ask" || verdict === "modify") {
      explain(execution, output!, failureWhy === undefined ? (mode === "sequential" ? current : original) : undefined);
    }
    const entry: { hook: string; output: NativeObject; failed?: boolean; blocking?: boolean } = { hook: hook.name, output: output! };
    if (failureWhy !== undefined) entry.failed = true;
    if (blocking) entry.blocking = true;
    entries.push(entry);
    ranAny = true;
    if (composed === undefined && failureWhy === undefined && mode === "sequential" && profile.chainInput !== undefined) {
      const next = profile.chainInput(current, output!, event, ctx);
      if (next !== current) {
        current = next;
        currentJson = JSON.stringify(next);
      }
    }
    return record(ignored === undefined && profile.stopsChain?.(output!, event, ctx) === true);

    /** The hook's record, its failure event and hook.completed; a stop names it. */
    function record(stops: boolean): boolean {
      hookResults[slot] = execution;
      if (emit !== undefined && ran !== undefined) {
        if (failureEvent !== undefined) emit(failureEvent);
        if (deps.firedSummary === undefined) emit(hookCompletedEvent(execution, origin, chainId));
      }
      if (stops) {
        stoppedBy = hook.name;
        stopReason = execution.reason ?? "aborted";
      }
      return stops;
    }
  };

  if (mode === "parallel" && deps.invoker.concurrent === true) {
    // A parallel group where the invoker can overlap calls (the main-process path: scripts and
    // one-action sandbox tasks): every hook starts at once on the original input, as the agents run
    // them, and is settled (folded, stopsChain asked) in plan order, so the answer is the same as one
    // after another. Conditions and budgets are decided before any hook runs, as in a sequential group's
    // first hook. No parallel profile stops a chain today; if one did, the later hooks' runs would be
    // awaited and left out, as hooks a stop leaves unrun are.
    const group: Started[] = [];
    for (const { planned, slot } of matching) {
      unrun.delete(slot);
      const started = start(planned, slot, original, originalJson);
      if (started === "stopped") break;
      if (started !== "skipped") group.push(started);
    }
    let stopped = false;
    for (const started of group) {
      if (stopped) {
        unrun.add(started.slot);
        await started.run;
      } else stopped = await settle(started);
    }
  } else {
    for (const { planned, slot } of matching) {
      unrun.delete(slot);
      const sequential = mode === "sequential";
      const inputNow = sequential ? current : original;
      const inputJson = composed !== undefined ? composed.json() : sequential ? currentJson : originalJson;
      const started = start(planned, slot, inputNow, inputJson);
      if (started === "stopped") break;
      if (started === "skipped") continue;
      if (await settle(started)) break;
    }
  }
  // Hooks a stop left unrun are not reported.
  const reported = unrun.size === 0 ? hookResults : hookResults.filter((_, i) => !unrun.has(i));
  // The per-chain annotation cap, before the results leave the worker (chain result and audit agree).
  annotations.settle();
  if (composed !== undefined) return vcpResult(composed, reported, profile.cascade === true && cascadeOf(reported));
  // Amplifier: "no timestamp when no handler runs" (every matching hook skipped by its condition).
  const aggregated = foldEntries(profile, entries, event, ctx, ranAny ? original : unstamped);
  const answer = profile.present(aggregated, event, ctx);
  const blocked = profile.verdictOf(aggregated, event) === "block";
  return profileResult(request, reported, stoppedBy, blocked, startedAt, clock, profile, event, mode, answer, timeoutViolations);

  /** Spec §7.3: flag (and report) a cascade; the runtime decides what to disable. */
  function cascadeOf(results: readonly HookExecution[]): boolean {
    const count = countFailures(results);
    const cascade = isCascade(count);
    if (cascade && emit !== undefined) {
      emit({
        event: "hook.cascade_failure",
        // Cascades are VCP's (its descriptor's `cascade`): the chain's type is its event.
        payload: { type: event as HookType, chain_id: chainId, total: count.total, failed: count.failing.length, failing_hooks: count.failing, disabled: false, disabled_hooks: [] },
      });
    }
    return cascade;
  }

  function vcpResult(state: ComposedInput, results: HookExecution[], cascadeFailure: boolean): ChainResult {
    return {
      chain_id: chainId,
      type: event as HookType,
      status: stoppedBy !== null ? "aborted" : "completed",
      reason: stoppedBy !== null ? stopReason : null,
      aborted_by: stoppedBy,
      context: state.context,
      constitution: state.constitution,
      cascade_failure: cascadeFailure,
      hook_results: results,
      duration_ms: recordedMs(clock.now() - startedAt),
    };
  }
}

/** A plan the fire path selected: every hook in it is to run (chain/select.ts), nothing is decided here. */
function preselected(plan: ChainPlan, selection: PreSelection): SelectedChain {
  return { sent: plan.hooks.map((_, i) => i), decided: new Map(), selection, events: [] };
}

/** What a lifecycle event says about an agent's native input (no context or constitution). */
function nativeSummary(request: ChainRequest, inputBytes: number): InputSummary {
  return { session_id: request.session.id, constitution_id: request.constitution.id, context_keys: 0, input_bytes: inputBytes };
}

/** The fold: `reduceWithHooks` (hook names, flags, the chain's input) when the profile has it, else `reduce`. */
function foldEntries(profile: EventProfile, entries: readonly HookOutputEntry[], event: string, ctx: ProfileContext, input: NativeObject): Aggregated {
  return profile.reduceWithHooks !== undefined ? profile.reduceWithHooks(entries, event, ctx, input) : profile.reduce(entries.map((e) => e.output), event, ctx);
}

/**
 * The answer of a chain in which no hook runs: the empty plan's answer ({@link presentEmpty}) when no
 * hook applied at all, the neutral fold (no stamp) when hooks applied but their conditions were false.
 *
 * @example
 * ```ts
 * const answer = answerWhenNoneRuns(profile, "BeforeTool", ctx, input, records);
 * ```
 */
export function answerWhenNoneRuns(profile: EventProfile, event: string, ctx: ProfileContext, input: NativeObject, records: readonly HookExecution[]): PresentedAnswer {
  if (!records.some((r) => r.outcome === "skipped_predicate")) return presentEmpty(profile, event, ctx, input);
  return profile.present(foldEntries(profile, [], event, ctx, input), event, ctx);
}

/**
 * The answer of an event no hook applies to (PROFILES §2 "Empty plan"): the profile's
 * `emptyPlanAnswer` (ai-memory `required_events`: deny 503), else its neutral answer from the
 * unstamped input. Used by the executor and by `fireProfile` when the event has no hook at all.
 *
 * @example
 * ```ts
 * presentEmpty(aiMemoryProfile, "pre_store", { strict: false, settings: { required_events: ["pre_store"] } }, input).native;
 * // { action: "deny", reason: "required event pre_store has no enabled hook …", code: 503 }
 * ```
 */
export function presentEmpty(profile: EventProfile, event: string, ctx: ProfileContext, input: NativeObject): PresentedAnswer {
  const aggregated = profile.emptyPlanAnswer?.(event, ctx) ?? foldEntries(profile, [], event, ctx, input);
  return profile.present(aggregated, event, ctx);
}

function profileResult(
  request: ChainRequest, reported: HookExecution[], stoppedBy: string | null, blocked: boolean, startedAt: number, clock: Clock,
  profile: EventProfile, event: string, mode: "sequential" | "parallel", answer: PresentedAnswer, timeoutViolations: number,
): ChainResult {
  const blocker = stoppedBy ?? (blocked ? (reported.find((e) => e.verdict === "block")?.hook ?? null) : null);
  return {
    chain_id: request.chainId,
    status: blocker !== null || blocked ? "aborted" : "completed",
    reason: null,
    aborted_by: blocker,
    context: request.context,
    constitution: request.constitution,
    cascade_failure: false,
    hook_results: reported,
    duration_ms: recordedMs(clock.now() - startedAt),
    profile: {
      profile: profile.id,
      event,
      mode,
      native: answer.native,
      exit_code: answer.exit_code,
      ...(answer.stderr !== undefined ? { stderr: answer.stderr } : {}),
      // Counted here in the worker, added to vcp_timeout_violations_total in the main process (PROFILES §8.10).
      ...(timeoutViolations > 0 ? { timeout_violations: timeoutViolations } : {}),
    },
  };
}

/** JSON text from the sandbox → the profile's native output, depth-bounded before it is parsed. */
function decodeOutput(profile: EventProfile, resultJson: string, event: string, ctx: ProfileContext, jsonDepth: number): Decoded<NativeObject> {
  // SECURITY: host backstop of the isolate's depth bound, checked on the text before parsing.
  if (jsonTextExceeds(resultJson, jsonDepth + 1)) {
    return { ok: false as const, error: `output nests deeper than ${jsonDepth} levels (limits.json_depth)` };
  }
  let raw: unknown;
  try {
    raw = parseGuestJson(resultJson);
  } catch {
    return { ok: false as const, error: "output is not valid JSON" };
  }
  return profile.decode(raw, event, ctx);
}

/**
 * The answer of an agent chain whose result carries none (the sandbox host died mid-chain and the
 * supervisor answered for it, or nothing ran): each failed hook's failure output, folded and presented.
 *
 * @example
 * ```ts
 * const answer = result.profile ?? answerWithout(profile, result, "BeforeTool", ctx);
 * ```
 */
export function answerWithout(profile: EventProfile, result: ChainResult, event: string, ctx: ProfileContext, failClosed: (hook: string) => boolean, input: NativeObject = {}, blocking: (hook: string) => boolean = () => false) {
  const entries: HookOutputEntry[] = result.hook_results
    // SECURITY: as in the executor, a session-trust hook's failure contributes nothing (spec §8.3).
    .filter((e) => (e.outcome === "crashed" || e.outcome === "timeout") && e.trust !== "session")
    .map((e) => ({ hook: e.hook, output: profile.failureOutput(e.hook, e.error ?? e.outcome, failClosed(e.hook) || blocking(e.hook), event, ctx), failed: true, blocking: blocking(e.hook) }));
  return profile.present(foldEntries(profile, entries, event, ctx, input), event, ctx);
}
