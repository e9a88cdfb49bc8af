/**
 * Select before crossing (issue 25): which hooks of a plan run for one event, decided in the fire path
 * on the main thread before anything is sent to the sandbox process. Only the selected hooks cross
 * (`sent`), with what was decided here (`PreSelection`) so the executor does not decide it again; an
 * event no hook selects costs no crossing at all. The executor (execute.ts) runs
 * the same rules when it is handed a plan without a selection (the main-process exec lane, tests).
 *
 *   plan order ─► disabled ─────────────► skipped_disabled      (decided here, reported here)
 *                 duplicate (profiles) ─► deduplicated
 *                 matcher ✗ (profiles) ─► skipped_matcher       matchers read the input as sent: always final
 *                 condition ✗ ──────────► skipped_predicate     only while no earlier selected hook can have
 *                                                               changed the input the condition reads
 *                 else ─────────────────► sent                  (condition held here: `held`; over its bundle's
 *                                                               budget: `refused`; not decidable yet: the executor)
 *
 * When a condition is final: before the first selected hook nothing has run, so every condition is
 * final; after it, a VCP hook may modify the context or chain_state and a sequential profile chain
 * hands the next hook a changed input, so later conditions are left to the executor. A parallel
 * profile group gives every hook the original input: all its conditions are final here.
 *
 * Budgets stay per bundle per chain: the scan meter (matchers, `MAX_MATCHER_COST`) is used up here
 * alone; the predicate meter's remainder travels in `PreSelection.predicateLeft`, so conditions left
 * to the executor draw on the same budget.
 */
import type { Constitution } from "../model/constitution.js";
import type { HookType } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import type { VcpContext } from "../model/input.js";
import type { LifecycleEvent } from "../observe/events.js";
import { MAX_MATCHER_COST, ScanBudgetExceeded, type ScanMeter } from "../profiles/index.js";
import type { EventProfile, NativeObject } from "../profiles/types.js";
import { hookExecution } from "./contract.js";
import { executionModeOf } from "./plan.js";
import { DEFAULT_PREDICATE_MAX_COST, PredicateBudgetExceeded, type CompiledPredicate, type PredicateMeter } from "./predicate.js";
import type { ChainPlan, ChainRequest, HookExecution, PlannedHook, PreSelection } from "../model/chain.js";

/** Why a hook whose conditions' bundle used up its cost budget did not run (it fails, as a throw). */
export function conditionBudgetText(bundle: string): string {
  return `condition not evaluated: the conditions of bundle '${bundle}' used up their cost budget of ${DEFAULT_PREDICATE_MAX_COST} units for this chain (limit maxCost)`;
}

/** Why a hook whose matchers' bundle used up its scan budget did not run (it fails, as a throw). */
export function matcherBudgetText(bundle: string): string {
  return `matcher not evaluated: the matchers and match filters of bundle '${bundle}' used up their scan budget of ${MAX_MATCHER_COST} units for this chain (limit maxMatcherCost)`;
}

/** The meter of `bundle` in `meters`, made with `left` units (default the full budget) on first use. */
export function meterOf(meters: Map<string, PredicateMeter>, bundle: string, left: Readonly<Record<string, number>> | undefined): PredicateMeter {
  let meter = meters.get(bundle);
  if (meter === undefined) {
    const carried = left !== undefined && Object.hasOwn(left, bundle) ? left[bundle]! : DEFAULT_PREDICATE_MAX_COST;
    meters.set(bundle, (meter = { left: carried }));
  }
  return meter;
}

/** A condition's verdict under its bundle's meter: true, false, or the budget refusal text. */
export function evaluateCondition(predicate: CompiledPredicate, input: object, meter: PredicateMeter, bundle: string): boolean | string {
  try {
    return predicate(input, meter);
  } catch (err) {
    if (!(err instanceof PredicateBudgetExceeded)) throw err;
    // Not evaluated is not false: the hook fails as if its action threw (spec §7.1; fail_closed aborts).
    return conditionBudgetText(bundle);
  }
}

/** What the fire path decided for one chain. */
export interface SelectedChain {
  /** Plan indices of the hooks to send, in plan order; empty ⇒ nothing crosses. */
  readonly sent: readonly number[];
  /** The record of each hook decided here not to run, by plan index. */
  readonly decided: ReadonlyMap<number, HookExecution>;
  /** What travels with the sent hooks (indices into `sent`). */
  readonly selection: PreSelection;
  /** VCP only: the `hook.skipped` events of the decided hooks, in plan order (all before any sent hook). */
  readonly events: readonly LifecycleEvent[];
}

function finishSelection(
  sent: number[], decided: Map<number, HookExecution>, held: number[], refused: Record<string, string>, meters: Map<string, PredicateMeter>, events: LifecycleEvent[],
  mode?: "sequential" | "parallel",
): SelectedChain {
  const predicateLeft: Record<string, number> = {};
  for (const [bundle, meter] of meters) predicateLeft[bundle] = meter.left;
  return { sent, decided, selection: { matched: true, held, refused, predicateLeft, ...(mode !== undefined ? { mode } : {}) }, events };
}

/**
 * A VCP chain's selection: the hooks before the first one that will run are decided here (disabled,
 * condition false); that hook and every later one are sent. A VCP condition reads
 * `{context, constitution, event, session, chain_state}`, all as the caller gave them before any hook ran.
 *
 * @example
 * ```ts
 * const chosen = selectVcpHooks(plan, { chainId, context, constitution, event, session });
 * if (chosen.sent.length === 0) return resultWithout(chosen);
 * ```
 */
export function selectVcpHooks(plan: ChainPlan, request: Pick<ChainRequest, "chainId" | "context" | "constitution" | "event" | "session">): SelectedChain {
  const first = plan.hooks[0];
  // The common chain: its first hook runs unconditionally, so every hook is sent and nothing is
  // decided here — the same selection for every chain of the plan, made once.
  if (first !== undefined && first.hook.enabled && first.predicate === null) return everyHookOf(plan);
  const decided = new Map<number, HookExecution>();
  const events: LifecycleEvent[] = [];
  const meters = new Map<string, PredicateMeter>();
  const held: number[] = [];
  const refused: Record<string, string> = {};
  const type = plan.profile.event as HookType;
  let view: object | undefined;
  for (let i = 0; i < plan.hooks.length; i++) {
    const { hook, predicate } = plan.hooks[i]!;
    if (!hook.enabled) {
      decided.set(i, hookExecution(hook, "skipped_disabled", 0));
      events.push({ event: "hook.skipped", payload: { hook: hook.name, type, chain_id: request.chainId, reason: "disabled" } });
      continue;
    }
    if (predicate !== null) {
      view ??= vcpConditionView(request.context, request.constitution, request.event, request.session);
      const verdict = evaluateCondition(predicate, view, meterOf(meters, hook.action.bundle, undefined), hook.action.bundle);
      if (verdict === false) {
        decided.set(i, hookExecution(hook, "skipped_predicate", 0));
        events.push({ event: "hook.skipped", payload: { hook: hook.name, type, chain_id: request.chainId, reason: "predicate_false", predicate: hook.condition } });
        continue;
      }
      if (verdict === true) held.push(0);
      else refused["0"] = verdict;
    }
    // This hook runs: it and the rest of the chain cross (later conditions may read what it changes).
    const sent: number[] = [];
    for (let j = i; j < plan.hooks.length; j++) sent.push(j);
    return finishSelection(sent, decided, held, refused, meters, events);
  }
  return finishSelection([], decided, held, refused, meters, events);
}

/** Per plan: the selection that sends every hook and decides none (frozen: shared by its chains). */
const everyHook = new WeakMap<ChainPlan, SelectedChain>();
function everyHookOf(plan: ChainPlan): SelectedChain {
  let chosen = everyHook.get(plan);
  if (chosen === undefined) {
    const selection: PreSelection = Object.freeze({ matched: true, held: Object.freeze([]), refused: Object.freeze({}), predicateLeft: Object.freeze({}) });
    chosen = Object.freeze({ sent: Object.freeze(plan.hooks.map((_, i) => i)), decided: new Map(), selection, events: Object.freeze([]) });
    everyHook.set(plan, chosen);
  }
  return chosen;
}

/** The HookInput a VCP condition reads before any hook ran (chain_state still empty). */
function vcpConditionView(context: VcpContext, constitution: Constitution, event: unknown, session: unknown): object {
  return { context, constitution, event, session, chain_state: {} };
}

/**
 * An event-profile chain's selection: every matcher (and `match` filter) on the input as the agent
 * sent it; conditions on `conditionInput()` (the input the first hook will receive: stamped, for a
 * profile that stamps) wherever they are final (see the module comment).
 *
 * @example
 * ```ts
 * const chosen = selectProfileHooks(plan, profile, input, () => input);
 * if (chosen.sent.length === 0) return presentEmpty(profile, event, ctx, input);
 * ```
 */
export function selectProfileHooks(plan: ChainPlan, profile: Pick<EventProfile, "execution">, input: NativeObject, conditionInput: () => NativeObject): SelectedChain {
  const scan = scanStateOf(plan, profile);
  const verdicts = scan.verdicts;
  // SECURITY: every glob/RE2 scan charges its bundle's meter before it runs: a bundle's matchers
  // cannot spend more host CPU per chain. The meters are the plan's, reset here: this function runs
  // to its end synchronously, so no other chain's selection can use them meanwhile.
  for (const meter of scan.meters) meter.left = MAX_MATCHER_COST;
  // The common chain: every hook enabled, matched and unconditional — the plan's one frozen selection.
  let everyHookRuns = true;
  for (let i = 0; i < plan.hooks.length; i++) {
    const planned = plan.hooks[i]!;
    let verdict: HookScan;
    if (!planned.hook.enabled) verdict = HookScan.disabled;
    else if (planned.duplicateOf !== undefined) verdict = HookScan.duplicate;
    else {
      try {
        verdict = planned.matcher(input, scan.meters[scan.bundleAt[i]!]!) ? HookScan.matched : HookScan.unmatched;
      } catch (err) {
        if (!(err instanceof ScanBudgetExceeded)) throw err;
        // Not evaluated is not "does not apply": the hook fails (or gives its fail_closed answer).
        verdict = HookScan.refused;
      }
    }
    verdicts[i] = verdict;
    if (verdict !== HookScan.matched || planned.predicate !== null) everyHookRuns = false;
  }
  if (everyHookRuns) return scan.everyHook;
  return selectionFromScan(plan, profile, verdicts, conditionInput);
}

/** What the matcher scan made of one hook of the plan. */
const enum HookScan {
  disabled,
  duplicate,
  matched,
  unmatched,
  refused,
}

/**
 * Per plan, made once: which scan meter each hook charges (its bundle's), the meters, a scratch list
 * of the scan's verdicts, and the selection of a chain in which every hook runs.
 */
interface PlanScan {
  readonly bundleAt: readonly number[];
  readonly meters: ScanMeter[];
  readonly verdicts: HookScan[];
  readonly everyHook: SelectedChain;
}
const planScans = new WeakMap<ChainPlan, PlanScan>();
function scanStateOf(plan: ChainPlan, profile: Pick<EventProfile, "execution">): PlanScan {
  let scan = planScans.get(plan);
  if (scan === undefined) {
    const bundles = new Map<string, number>();
    const bundleAt = plan.hooks.map(({ hook }) => {
      let at = bundles.get(hook.action.bundle);
      if (at === undefined) bundles.set(hook.action.bundle, (at = bundles.size));
      return at;
    });
    const mode = executionModeOf(profile, plan.hooks.map((p) => p.hook));
    const selection: PreSelection = Object.freeze({ matched: true, held: Object.freeze([]), refused: Object.freeze({}), predicateLeft: Object.freeze({}), mode });
    scan = {
      bundleAt,
      meters: [...bundles.keys()].map(() => ({ left: MAX_MATCHER_COST })),
      verdicts: new Array<HookScan>(plan.hooks.length),
      everyHook: Object.freeze({ sent: Object.freeze(plan.hooks.map((_, i) => i)), decided: new Map(), selection, events: Object.freeze([]) }),
    };
    planScans.set(plan, scan);
  }
  return scan;
}

/** The selection of a chain in which some hook does not run as scanned: the decided records, then conditions. */
function selectionFromScan(plan: ChainPlan, profile: Pick<EventProfile, "execution">, verdicts: readonly HookScan[], conditionInput: () => NativeObject): SelectedChain {
  const decided = new Map<number, HookExecution>();
  const matching: Array<{ planned: PlannedHook; index: number; refusal?: string }> = [];
  for (let i = 0; i < plan.hooks.length; i++) {
    const planned = plan.hooks[i]!;
    switch (verdicts[i]) {
      case HookScan.disabled:
        decided.set(i, profileSkipped(planned, "skipped_disabled"));
        break;
      case HookScan.duplicate: {
        const execution = profileSkipped(planned, "deduplicated");
        execution.reason = `same bundle, action and matcher as '${planned.duplicateOf!}', which runs in its place (PROFILES §8.6)`;
        decided.set(i, execution);
        break;
      }
      case HookScan.unmatched:
        decided.set(i, profileSkipped(planned, "skipped_matcher"));
        break;
      case HookScan.refused:
        matching.push({ planned, index: i, refusal: matcherBudgetText(planned.hook.action.bundle) });
        break;
      default:
        matching.push({ planned, index: i });
    }
  }
  const mode = executionModeOf(profile, matching.map((m) => m.planned.hook));
  const parallel = mode === "parallel";
  const meters = new Map<string, PredicateMeter>();
  const sent: number[] = [];
  const held: number[] = [];
  const refused: Record<string, string> = {};
  let conditionView: NativeObject | undefined;
  for (const { planned, index, refusal } of matching) {
    const slot = String(sent.length);
    // Final while nothing selected before it can have changed its input (or every hook gets the original).
    const final = parallel || sent.length === 0;
    if (refusal !== undefined) refused[slot] = refusal;
    else if (planned.predicate !== null && final) {
      conditionView ??= conditionInput();
      const verdict = evaluateCondition(planned.predicate, conditionView, meterOf(meters, planned.hook.action.bundle, undefined), planned.hook.action.bundle);
      if (verdict === false) {
        decided.set(index, profileSkipped(planned, "skipped_predicate"));
        continue;
      }
      if (verdict === true) held.push(sent.length);
      else refused[slot] = verdict;
    }
    sent.push(index);
  }
  return finishSelection(sent, decided, held, refused, meters, [], mode);
}

/** A hook's record when it does not run. */
export function profileSkipped(planned: Pick<PlannedHook, "hook">, outcome: HookExecution["outcome"]): HookExecution {
  return hookExecution(planned.hook, outcome, 0);
}

/**
 * The chain's hook records in plan order: the decided ones from here, the sent ones from the
 * executor's result, which reports the sent hooks it got to in order (a stop leaves the rest out).
 *
 * @example
 * ```ts
 * result.hook_results = mergeHookResults(plan.hooks.map((p) => p.hook), chosen, result.hook_results);
 * ```
 */
export function mergeHookResults(hooks: readonly Pick<ResolvedHook, "name" | "action">[], chosen: Pick<SelectedChain, "decided">, fromExecutor: readonly HookExecution[]): HookExecution[] {
  if (chosen.decided.size === 0) return [...fromExecutor];
  const merged: HookExecution[] = [];
  let next = 0;
  for (let i = 0; i < hooks.length; i++) {
    const decided = chosen.decided.get(i);
    if (decided !== undefined) {
      merged.push(decided);
      continue;
    }
    const reported = fromExecutor[next];
    if (reported !== undefined && reported.hook === hooks[i]!.name && reported.bundle === hooks[i]!.action.bundle) {
      merged.push(reported);
      next++;
    }
  }
  return merged;
}
