import type { ChainRequest, InvokeOutcome, InvokeRequest } from "../model/chain.js";
import type { ResolvedHook } from "../model/hook.js";
import type { ProfilePlanRef } from "../chain/plan.js";
import { VCP_PROFILE_ID } from "../profiles/index.js";
import type { ChainTask, ChainTaskResult } from "./api.js";

/** The request of a one-action task carries no VCP context: the worker reads only the hook's input text. */
const ONE_ACTION_CONSTITUTION = Object.freeze({ id: "(one-action)", version: "0", rules: [] }) as unknown as ChainRequest["constitution"];

/** The plan reference of a one-action task: the hook's own profile and event (the worker compiles its plan so). */
function oneActionRef(hook: ResolvedHook): ProfilePlanRef {
  return Object.freeze({ id: hook.profile ?? VCP_PROFILE_ID, event: hook.event ?? hook.type ?? "", strict: false, settings: Object.freeze({}) });
}

/**
 * Sandbox.invokeAction as a chain task of one hook (PROFILES §6): admission, the watchdog, crash
 * attribution and quarantine apply to it unchanged, and the worker answers the action's raw outcome.
 * One frozen one-hook list per hook object, so the plan key (and each worker's compiled plan) is reused.
 */
export class OneActionTasks {
  private readonly lists = new WeakMap<ResolvedHook, { hooks: readonly ResolvedHook[]; profile: ProfilePlanRef }>();

  /** The chain task, and the `inv` section: the hook input as it is, behind its budget. */
  task(request: InvokeRequest): { task: ChainTask; invoke: { inputJson: string; budgetMs: number } } {
    let plan = this.lists.get(request.hook);
    if (plan === undefined) {
      // Frozen once per hook: the plan cache knows a plan by the identity of its list and reference.
      plan = { hooks: Object.freeze([request.hook]), profile: oneActionRef(request.hook) };
      this.lists.set(request.hook, plan);
    }
    return {
      task: {
        plan: { profile: plan.profile, revision: 0, hooks: plan.hooks },
        request: {
          chainId: request.chainId, context: {}, constitution: ONE_ACTION_CONSTITUTION, event: {}, session: { id: request.sessionId },
          ...(request.sessionScope !== undefined ? { sessionScope: request.sessionScope } : {}),
        },
      },
      invoke: { inputJson: request.inputJson, budgetMs: request.budgetMs },
    };
  }

  /**
   * The action's outcome: the worker's, or — when the host died (or the watchdog killed it) while the
   * action ran — what crash recovery answered for its one hook.
   */
  static outcome({ result, invoked }: ChainTaskResult): InvokeOutcome {
    if (invoked !== undefined) return invoked;
    const execution = result.hook_results[0];
    if (execution?.outcome === "timeout") return { kind: "timeout", elapsedMs: execution.duration_ms };
    return { kind: "crashed", message: execution?.error ?? "the sandbox host died while the hook ran" };
  }
}
