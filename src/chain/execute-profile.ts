/**
 * The executor's event-profile path (PROFILES §1, §2, §8): the same per-hook machinery as
 * `runChain` (chain deadline, predicates under the bundle's `maxCost`, invocation through the
 * ActionInvoker, the closed set of outcomes, guest text sanitized), with the profile deciding what a
 * hook's output means. `vcp@1` never comes here: VCP chains keep running through `runChain`.
 *
 *   plan order ──► disabled? ─► skipped_disabled     matching hooks ──► mode (per_definition: any sequential ⇒ sequential)
 *                  duplicate? ─► deduplicated           │ sequential: input = chainInput(input, output) after a successful hook
 *                  matcher ✗ ─► skipped_matcher         │ parallel:   every hook gets the ORIGINAL input; all at once when
 *                                                       │             the invoker is `concurrent` (main process), else one by one
 *                                                       ▼
 *        no hook applies ─► emptyPlanAnswer?(event) ?? neutral answer (no stamp, no dispatch) ─► present
 *        else: input = stampInput?(input, event, now) once ─► per hook: budget = hookBudgetMs?(timeout, elapsed)
 *              (undefined ⇒ deadline_exhausted: deadlineExhaustedOutput?(hook, fail_closed) or skip)
 *        returned ─► JSON (depth-bounded) ─► decode ─────────────────────────────────────► output ─┐
 *        threw · timeout · invalid · crashed ─► failureOutput(hook, why, fail_closed ∨ blocking) ┤ reduceWithHooks?(entries, input)
 *        stopsChain(output) ⇒ no later hook runs                                              ┘   ?? reduce(outputs) ─► present
 *        session trust (an observer): its output or failure is withheld — no entry, no chained input,
 *        no stop; the fields it said are reported (answerFields ⇒ capability_denied, `stripped`)
 *
 * A matcher (or `match` filter) that would overrun its bundle's scan budget for the chain
 * (profiles/common/scan.ts, `maxMatcherCost`) is not evaluated and its hook is not run: it is `error`
 * (or its fail_closed answer), exactly as a condition over its cost budget.
 */
import { deadlineCutText, execRecordOf, timeoutText } from "./contract.js";
import { changedPaths } from "./decision.js";
import type { Clock } from "../observe/events.js";
import { ChainDeadline } from "./deadline.js";
import { DEFAULT_PREDICATE_MAX_COST, PredicateBudgetExceeded, type PredicateMeter } from "./predicate.js";
import { findProfile, MAX_MATCHER_COST, ScanBudgetExceeded, type ScanMeter } from "../profiles/index.js";
import { DEFAULT_JSON_DEPTH, jsonTextExceeds } from "../model/json-bounds.js";
import { parseGuestJson } from "./result.js";
import { sanitizeGuestText } from "./guest-text.js";
import { executionModeOf, hookFailsClosed, type PlannedProfileHook, type ProfileChainPlan } from "./plan.js";
import type { ActionInvoker, ChainRequest, ChainResult, HookExecution, InvokeOutcome } from "./types.js";
import type { ResolvedHook } from "../model/hook.js";
import type { ResultStatus } from "../model/result.js";
import { VcpError } from "../errors.js";
import type { Aggregated, Decoded, EventProfile, HookOutputEntry, NativeObject, PresentedAnswer, ProfileContext, Verdict } from "../profiles/types.js";

export interface ProfileChainDeps {
  invoker: ActionInvoker;
  clock: Clock;
  /** `jsonDepth` bounds what a hook returns (the isolate enforces it too; this is the host's backstop). Default 64. */
  limits?: { jsonDepth?: number };
  /** Where to find the profile; default the catalogue (profiles/index.ts). */
  profileOf?: (id: string) => EventProfile | undefined;
}

/** A hook's reason kept on its execution record (the decision record bounds it again, after redaction). */
const MAX_REASON_CHARS = 4096;

function statusOf(verdict: Verdict): ResultStatus {
  return verdict === "block" ? "abort" : verdict === "modify" ? "modify" : "continue";
}

function skipped(hook: ResolvedHook, outcome: HookExecution["outcome"]): HookExecution {
  return { hook: hook.name, bundle: hook.action.bundle, scope: hook.scope, trust: hook.trust, status: "continue", outcome, duration_ms: 0 };
}

/**
 * Run one event-profile chain. `request.event` is the agent's native input (validated by the caller
 * with `profile.validateInput`); the answer is on `result.profile`. An empty or wholly skipped plan
 * touches no invoker and answers the profile's neutral `present(reduce([]))`.
 *
 * @example
 * ```ts
 * const result = await runProfileChain(plan, { chainId, context: {}, constitution, event: nativeInput, session: { id: "s1" } }, { invoker, clock });
 * console.log(result.profile?.native, result.profile?.exit_code);
 * ```
 */
export async function runProfileChain(plan: ProfileChainPlan, request: ChainRequest, deps: ProfileChainDeps): Promise<ChainResult> {
  const { clock } = deps;
  const startedAt = clock.now();
  const profile = (deps.profileOf ?? findProfile)(plan.profile.id);
  if (profile === undefined) {
    throw new VcpError("UNKNOWN_PROFILE", `profile '${plan.profile.id}' is not in this process's catalogue`, { profile: plan.profile.id });
  }
  const event = plan.profile.event;
  const ctx: ProfileContext = { strict: plan.profile.strict, settings: plan.profile.settings };
  const spec = profile.specOf?.(event) ?? profile.events[event];
  const unstamped = request.event as NativeObject;
  const jsonDepth = deps.limits?.jsonDepth ?? DEFAULT_JSON_DEPTH;
  const hookResults: HookExecution[] = [];

  // Which definitions apply: matchers (and `match` filters) test the input as the agent sent it
  // (upstream plans before anything runs). One scan meter per bundle: a bundle's matchers together
  // scan at most MAX_MATCHER_COST units per chain, and never use up another bundle's (profiles/common/scan.ts).
  const matching: Array<{ planned: PlannedProfileHook; slot: number }> = [];
  const scanMeters = new Map<string, ScanMeter>();
  // Slot → why the hook is not run though it may apply: its matcher would overrun its bundle's meter.
  const budgetRefusals = new Map<number, string>();
  for (const planned of plan.hooks) {
    const { hook } = planned;
    if (!hook.enabled) {
      hookResults.push(skipped(hook, "skipped_disabled"));
      continue;
    }
    if (planned.duplicateOf !== undefined) {
      const execution = skipped(hook, "deduplicated");
      execution.reason = `same bundle, action and matcher as '${planned.duplicateOf}', which runs in its place (PROFILES §8.6)`;
      hookResults.push(execution);
      continue;
    }
    let meter = scanMeters.get(hook.action.bundle);
    // SECURITY: every glob/RE2 scan charges this meter before it runs: a bundle's matchers cannot spend more host CPU per chain.
    if (meter === undefined) scanMeters.set(hook.action.bundle, (meter = { left: MAX_MATCHER_COST }));
    let applies: boolean;
    try {
      applies = planned.matcher(unstamped, meter);
    } catch (err) {
      if (!(err instanceof ScanBudgetExceeded)) throw err;
      applies = true;
      budgetRefusals.set(hookResults.length, `matcher not evaluated: the matchers and match filters of bundle '${hook.action.bundle}' used up their scan budget of ${MAX_MATCHER_COST} units for this chain (limit maxMatcherCost)`);
    }
    if (!applies) hookResults.push(skipped(hook, "skipped_matcher"));
    else {
      // A placeholder keeps results in plan order; the hook's execution replaces it below.
      matching.push({ planned, slot: hookResults.length });
      hookResults.push(skipped(hook, "ok"));
    }
  }
  const mode = executionModeOf(profile, matching.map((m) => m.planned.hook));
  if (matching.length === 0) {
    // No hook applies: the profile's answer for an empty plan (ai-memory required_events), no stamp.
    return profileResult(request, hookResults, null, false, startedAt, clock, profile, event, mode, presentEmpty(profile, event, ctx, unstamped), 0);
  }
  // Runtime-owned input fields (Amplifier data.timestamp), stamped once per chain that runs a hook.
  const original = profile.stampInput !== undefined ? profile.stampInput(unstamped, event, new Date(clock.wallNow()).toISOString()) : unstamped;
  const entries: HookOutputEntry[] = [];
  // A profile with per-hook budgets (ai-memory class deadlines) owns the chain deadline: ChainDeadline
  // then only applies a caller's explicit one.
  const deadline = new ChainDeadline(request.deadlineMs ?? (profile.hookBudgetMs === undefined ? spec?.chain_deadline_ms : undefined), clock, startedAt);
  const meters = new Map<string, PredicateMeter>();
  const originalJson = JSON.stringify(original);
  let current = original;
  let currentJson = originalJson;
  let stoppedBy: string | null = null;
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
    /** Its invocation (undefined: no budget left, not started), with the clock when it ended; never rejects. */
    run: Promise<{ invoked: InvokeOutcome; durationMs: number } | undefined>;
  }

  /**
   * Conditions, the class and chain deadlines, then the invocation of one hook, started and not
   * awaited. Answers "skipped" when the hook ends here without an entry, "stopped" when its
   * deadline-exhausted output stops the chain, else the started hook for `settle`.
   */
  /**
   * For the decision record (chain/decision.ts): the reason a blocking, asking or modifying output gives,
   * and — for a modification of the hook's input `before` — which fields it changed (RFC 6902 op and
   * path, no values). Only for those verdicts: an allow costs nothing here.
   */
  const explain = (execution: HookExecution, output: NativeObject, before: NativeObject | undefined): void => {
    const why = profile.reasonOf?.(output, event);
    if (why !== undefined && execution.reason === undefined) execution.reason = why.length > MAX_REASON_CHARS ? `${why.slice(0, MAX_REASON_CHARS)}…` : why;
    if (before !== undefined && execution.verdict === "modify" && profile.chainInput !== undefined) {
      const after = profile.chainInput(before, output, event, ctx);
      if (after !== before) execution.modification = changedPaths(before, after);
    }
  };

  const start = (planned: PlannedProfileHook, slot: number, inputNow: NativeObject, inputJson: string): Started | "skipped" | "stopped" => {
    const { hook, predicate } = planned;
    // repo-yaml: a failing `blocking` hook blocks like a fail_closed one (PROFILES §8.8).
    // SECURITY: never for a session-trust hook (spec §8.3), in both flags (hookFailsClosed).
    const blocking = hook.blocking === true && hook.trust !== "session";
    const failClosed = hookFailsClosed(hook);

    // A matcher over its budget is a failure to decide whether the hook applies: the same outcome as a
    // condition over its budget (the hook is not run; `error`, or its fail_closed answer).
    let conditionFailure: string | undefined = budgetRefusals.get(slot);
    if (predicate !== null && conditionFailure === undefined) {
      let meter = meters.get(hook.action.bundle);
      if (meter === undefined) meters.set(hook.action.bundle, (meter = { left: DEFAULT_PREDICATE_MAX_COST }));
      let fires = true;
      try {
        fires = predicate(inputNow, meter);
      } catch (err) {
        if (!(err instanceof PredicateBudgetExceeded)) throw err;
        conditionFailure = `condition not evaluated: the conditions of bundle '${hook.action.bundle}' used up their cost budget of ${DEFAULT_PREDICATE_MAX_COST} units for this chain (limit maxCost)`;
      }
      if (!fires) {
        hookResults[slot] = skipped(hook, "skipped_predicate");
        return "skipped";
      }
    }

    const execution: HookExecution = { hook: hook.name, bundle: hook.action.bundle, scope: hook.scope, trust: hook.trust, status: "continue", outcome: "ok", duration_ms: 0 };
    if (hook.action.digest !== undefined) execution.bundle_digest = hook.action.digest;

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
        if (exhausted === undefined) {
          hookResults[slot] = execution;
          return "skipped";
        }
        const verdict = profile.verdictOf(exhausted, event);
        execution.verdict = verdict;
        execution.status = statusOf(verdict);
        if (verdict === "block") explain(execution, exhausted, undefined);
        hookResults[slot] = execution;
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

    const invoke = async (): Promise<{ invoked: InvokeOutcome; durationMs: number }> => {
      const hookStart = clock.now();
      let invoked: InvokeOutcome;
      if (conditionFailure !== undefined) invoked = { kind: "threw", message: conditionFailure };
      else {
        try {
          // SECURITY: per-session guest state is kept by the session's key: two owners' equal ids never share it.
          invoked = await deps.invoker.invoke({
            hook, chainId: request.chainId, sessionId: request.sessionKey ?? request.session.id, inputJson, budgetMs, native: true,
            ...(request.sessionScope !== undefined ? { sessionScope: request.sessionScope } : {}),
          });
        } catch (err) {
          invoked = { kind: "threw", message: `${hook.exec !== undefined ? "the command lane" : "sandbox"} failed to run the hook: ${err instanceof Error ? err.message : String(err)}` };
        }
      }
      // Read when this hook ends, not when the executor gets to it (a parallel group settles in plan order).
      return { invoked, durationMs: clock.now() - hookStart };
    };
    return { hook, slot, execution, budgetMs, blocking, failClosed, run: budgetMs <= 0 ? Promise.resolve(undefined) : invoke() };
  };

  /** A started hook's outcome → its execution record and output entry (in plan order). True when it stops the chain. */
  const settle = async (started: Started): Promise<boolean> => {
    const { hook, slot, execution, budgetMs, blocking, failClosed } = started;
    let output: NativeObject | undefined;
    let failureWhy: string | undefined;
    // An exec hook's failed run that its profile's table still reads (Gemini exit 1 + text ⇒ allow with
    // a warning): a fail-open hook contributes that, as the agent would; a fail-closed one blocks.
    let failedRunOutput: NativeObject | undefined;
    /** Decode a native output (guest JSON or a script's table reading) and apply the session-trust view. */
    const accept = (raw: Decoded<NativeObject>): void => {
      if (!raw.ok) {
        execution.outcome = "invalid_result";
        failureWhy = sanitizeGuestText(raw.error);
        return;
      }
      output = raw.value;
      if (hook.trust === "session") {
        // What an observer said is withheld (below); naming it tells the author why nothing showed.
        const said = profile.answerFields(output, event);
        if (said.length > 0) {
          execution.outcome = "capability_denied";
          execution.stripped = [...said];
          execution.error = `a session-trust hook observes only: its output never reaches the answer (spec §8.3); withheld: ${said.join(", ")}`;
        }
      }
    };
    /** A hook stopped at its budget: its own timeout, or the chain deadline's cut (sandboxed and exec alike). */
    const timedOut = (elapsedMs: number): void => {
      // PROFILES §8.10: a hook timeout, like an exhausted chain deadline, is a timeout violation.
      timeoutViolations++;
      if (budgetMs < hook.timeout_ms) {
        execution.outcome = "deadline_exceeded";
        deadline.exhaust(hook);
        if (profile.hookBudgetMs !== undefined) classDeadlineSpent = true;
        failureWhy = deadlineCutText(elapsedMs, budgetMs, hook.timeout_ms);
      } else {
        execution.outcome = "timeout";
        failureWhy = timeoutText(elapsedMs, budgetMs, hook.timeout_ms);
      }
    };
    const ran = await started.run;
    if (ran === undefined) {
      execution.outcome = "skipped_deadline";
      failureWhy = "the chain deadline was spent before it ran";
    } else {
      const { invoked } = ran;
      execution.duration_ms = ran.durationMs;
      deadline.charge(hook, execution.duration_ms);
      if ("cpuMs" in invoked && invoked.cpuMs !== undefined) execution.cpu_ms = invoked.cpuMs;
      switch (invoked.kind) {
        case "returned":
          accept(decodeOutput(profile, invoked.resultJson, event, ctx, jsonDepth));
          break;
        case "threw":
          execution.outcome = "error";
          failureWhy = sanitizeGuestText(invoked.message);
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
          if (failureWhy === undefined) accept(profile.decode(parsed.output, event, ctx));
          else {
            const table = profile.decode(parsed.output, event, ctx);
            if (table.ok) failedRunOutput = table.value;
          }
          break;
        }
      }
    }
    if (failureWhy !== undefined) {
      execution.error = failureWhy;
      // The profile's own rule for a failed hook: fail-open warning, or its blocking answer when fail_closed.
      output = failedRunOutput !== undefined && !failClosed ? failedRunOutput : profile.failureOutput(hook.name, failureWhy, failClosed, event, ctx);
    }
    if (hook.trust === "session") {
      // SECURITY: spec §8.3, the one rule for every profile: a session-trust hook observes. Its output —
      // or its failure's — never reaches the fold, the next hook's input or the chain's stop, so it
      // changes nothing a guard decided or wrote, whichever of them runs first.
      execution.verdict = "observe";
      hookResults[slot] = execution;
      return false;
    }
    const verdict = profile.verdictOf(output!, event);
    execution.verdict = verdict;
    execution.status = statusOf(verdict);
    if (verdict === "block" || verdict === "ask" || verdict === "modify") explain(execution, output!, failureWhy === undefined ? (mode === "sequential" ? current : original) : undefined);
    hookResults[slot] = execution;
    const entry: { hook: string; output: NativeObject; failed?: boolean; blocking?: boolean } = { hook: hook.name, output: output! };
    if (failureWhy !== undefined) entry.failed = true;
    if (blocking) entry.blocking = true;
    entries.push(entry);
    ranAny = true;
    if (failureWhy === undefined && mode === "sequential" && profile.chainInput !== undefined) {
      const next = profile.chainInput(current, output!, event, ctx);
      if (next !== current) {
        current = next;
        currentJson = JSON.stringify(next);
      }
    }
    if (profile.stopsChain?.(output!, event, ctx) === true) {
      stoppedBy = hook.name;
      return true;
    }
    return false;
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
      const inputNow = mode === "sequential" ? current : original;
      const inputJson = mode === "sequential" ? currentJson : originalJson;
      const started = start(planned, slot, inputNow, inputJson);
      if (started === "stopped") break;
      if (started === "skipped") continue;
      if (await settle(started)) break;
    }
  }
  // Hooks a stop left unrun are not reported (as runChain does after an abort).
  const reported = unrun.size === 0 ? hookResults : hookResults.filter((_, i) => !unrun.has(i));

  // Amplifier: "no timestamp when no handler runs" (every matching hook skipped by its condition).
  const aggregated = foldEntries(profile, entries, event, ctx, ranAny ? original : unstamped);
  const answer = profile.present(aggregated, event, ctx);
  const blocked = profile.verdictOf(aggregated, event) === "block";
  return profileResult(request, reported, stoppedBy, blocked, startedAt, clock, profile, event, mode, answer, timeoutViolations);
}

/** The fold: `reduceWithHooks` (hook names, flags, the chain's input) when the profile has it, else `reduce`. */
function foldEntries(profile: EventProfile, entries: readonly HookOutputEntry[], event: string, ctx: ProfileContext, input: NativeObject): Aggregated {
  return profile.reduceWithHooks !== undefined ? profile.reduceWithHooks(entries, event, ctx, input) : profile.reduce(entries.map((e) => e.output), event, ctx);
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
    type: "pre_inject",
    status: blocker !== null || blocked ? "aborted" : "completed",
    reason: null,
    aborted_by: blocker,
    context: request.context,
    constitution: request.constitution,
    cascade_failure: false,
    hook_results: reported,
    duration_ms: clock.now() - startedAt,
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
function decodeOutput(profile: EventProfile, resultJson: string, event: string, ctx: ProfileContext, jsonDepth: number) {
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
 * The answer of a profile chain whose result carries none (the sandbox host died mid-chain and the
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
