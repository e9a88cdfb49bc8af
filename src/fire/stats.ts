import type { ChainResult } from "../model/chain.js";
import { hookEventOf, type ResolvedHook } from "../model/hook.js";
import { OUTCOMES, SKIPPED_OUTCOMES, type Outcome } from "../model/result.js";
import { keyParts } from "../pipeline/access.js";

/** Per-hook counters (spec §5.4.4 timeout counter, §7.1.5 error counter) and latency. */
export interface HookStatsView {
  hook: string;
  /** The VCP hook type; for an event-profile hook its event (see `profile`). */
  type: string;
  /** Event-profile hooks: the profile id (`event` is its event). */
  profile?: string;
  event?: string;
  /** Exec hooks (the command lane, PROFILES §6): `false`, they run outside the sandbox. */
  sandboxed?: false;
  /** Exec hooks: the pinned command and its hash. */
  exec?: { command: string; sha256: string; shell: boolean };
  scope: string;
  session_id?: string;
  /** The owner of `session_id`'s session when a principal opened it (session ids are per owner). */
  owner?: string;
  bundle: string;
  enabled: boolean;
  calls: number;
  outcomes: Record<Outcome, number>;
  timeouts: number;
  errors: number;
  mean_duration_ms: number;
  max_duration_ms: number;
}

interface Counter {
  calls: number;
  outcomes: Record<Outcome, number>;
  totalMs: number;
  maxMs: number;
}

function emptyOutcomes(): Record<Outcome, number> {
  return Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
}

/** Aggregates hook results on the main thread, where every chain's result arrives in order. */
export function createHookStats() {
  // scope → bundle → hook: a lookup per hook record of every chain builds no key string.
  const counters = new Map<string, Map<string, Map<string, Counter>>>();
  function counterOf(scope: string, bundle: string, hook: string): Counter | undefined {
    return counters.get(scope)?.get(bundle)?.get(hook);
  }
  function newCounter(scope: string, bundle: string, hook: string): Counter {
    let byBundle = counters.get(scope);
    if (byBundle === undefined) counters.set(scope, (byBundle = new Map()));
    let byHook = byBundle.get(bundle);
    if (byHook === undefined) byBundle.set(bundle, (byHook = new Map()));
    const counter: Counter = { calls: 0, outcomes: emptyOutcomes(), totalMs: 0, maxMs: 0 };
    byHook.set(hook, counter);
    return counter;
  }
  const stats = {
    record(result: ChainResult): void {
      for (const execution of result.hook_results) {
        const counter = counterOf(execution.scope, execution.bundle, execution.hook) ?? newCounter(execution.scope, execution.bundle, execution.hook);
        counter.outcomes[execution.outcome]++;
        if (SKIPPED_OUTCOMES.has(execution.outcome)) continue;
        counter.calls++;
        counter.totalMs += execution.duration_ms;
        if (execution.duration_ms > counter.maxMs) counter.maxMs = execution.duration_ms;
      }
    },
    /** `status().hooks`: exec hooks first (PROFILES §6: they run outside the sandbox), then the VCP and profile hooks, each group in its order. */
    status(hooks: Iterable<ResolvedHook>): HookStatsView[] {
      const views = stats.view([...hooks]);
      return [...views.filter((h) => h.sandboxed === false), ...views.filter((h) => h.sandboxed !== false)];
    },
    view(hooks: readonly ResolvedHook[]): HookStatsView[] {
      return hooks.map((hook) => {
        const counter = counterOf(hook.scope, hook.action.bundle, hook.name);
        const outcomes = counter?.outcomes ?? emptyOutcomes();
        return {
          hook: hook.name,
          type: hookEventOf(hook),
          ...(hook.profile !== undefined ? { profile: hook.profile, event: hook.event } : {}),
          ...(hook.exec !== undefined ? { sandboxed: false as const, exec: { command: hook.exec.command.slice(0, 512), sha256: hook.exec.sha256, shell: hook.exec.shell === true } } : {}),
          scope: hook.scope,
          ...(hook.session_id !== undefined ? sessionFields(hook.session_id) : {}),
          bundle: hook.action.bundle,
          enabled: hook.enabled,
          calls: counter?.calls ?? 0,
          outcomes,
          timeouts: outcomes.timeout,
          errors: outcomes.error + outcomes.invalid_result + outcomes.crashed + outcomes.exec_nonzero + outcomes.exec_signal,
          mean_duration_ms: counter && counter.calls > 0 ? counter.totalMs / counter.calls : 0,
          max_duration_ms: counter?.maxMs ?? 0,
        };
      });
    },
  };
  return stats;
}

/** The registry knows a session hook's session by key: the status view shows its id and owner. */
function sessionFields(key: string): { session_id: string; owner?: string } {
  const { id, owner } = keyParts(key);
  return { session_id: id, ...(owner !== null ? { owner } : {}) };
}
