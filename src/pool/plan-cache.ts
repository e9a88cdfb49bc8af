import { VcpError } from "../errors.js";
import type { ProfilePlanRef } from "../chain/plan.js";
import type { ResolvedHook } from "../model/hook.js";

/** Plan keys the supervisor remembers (and the host holds); the least recently used is forgotten. */
export const PLAN_KEYS = 1024;

/** The part of a chain task the plan cache reads: its profile and event, registry revision and hook list. */
export interface PlanSource {
  /** The chain's profile, event and deployment settings (VCP: `vcp` and the hook type; frozen, compared by identity). */
  readonly profile: ProfilePlanRef;
  readonly revision: number;
  readonly hooks: readonly ResolvedHook[];
}

/**
 * One hook list as the supervisor knows it: a key that names it to the host for the life of the
 * supervisor, and what admission and the watchdog need, computed once per plan instead of per chain.
 */
export interface PlanEntry {
  readonly key: number;
  readonly profile: ProfilePlanRef;
  readonly revision: number;
  /**
   * A copy of the caller's list, taken when the entry was made: what is sent to the host, and what a
   * later chain's list must still equal element by element to reuse the key (an array changed in place
   * is a new plan).
   */
  readonly hooks: readonly ResolvedHook[];
  /** Enabled hooks, checked against the loaded bundles on every chain. */
  readonly enabled: readonly ResolvedHook[];
  /** Distinct digests of the enabled hooks. */
  readonly digests: readonly string[];
  /** Sum of the enabled hooks' timeout_ms. */
  readonly timeoutSum: number;
}

/**
 * Plan keys (DESIGN §4.1): the hook list of a plan crosses to a worker once (worker-channels.ts), and
 * later chains of the same plan name it by key. The runtime hands the same frozen array for every
 * chain of one registry plan, so an entry is found by identity; a new array is a new plan.
 *
 * ```
 *  lookup(list) ─▶ WeakMap by identity ─▶ entry ─▶ check every enabled digest is loaded ─▶ LRU touch
 *                       └─ miss: create (key, enabled, digests, timeoutSum)        └─ over PLAN_KEYS:
 *                                                                                    evict, tell the channels
 * ```
 *
 * Every hook the runtime hands over names its revision (`action.digest`: the bundle layer sets it); a
 * hook without one names no loaded code and fails UNKNOWN_BUNDLE like a hook of an unloaded revision.
 * Starts no process: the supervisor passes `isLoaded` and sends the keys {@link lookup} evicts.
 */
export class PlanCache {
  private readonly byList = new WeakMap<readonly ResolvedHook[], PlanEntry>();
  /** Insertion order = least recently used first. */
  private readonly lru = new Map<number, PlanEntry>();
  private nextKey = 1;

  constructor(private readonly capacity: number = PLAN_KEYS) {}

  /**
   * The entry of `plan`'s hook list, and the keys of entries evicted to make room (for the worker
   * channels to forget; an evicted list that comes back is sent again). Throws UNKNOWN_BUNDLE when an enabled hook names a revision that
   * is not loaded: checked on every chain, since bundles come and go between chains of one plan.
   */
  lookup(plan: PlanSource, isLoaded: (digest: string) => boolean): { entry: PlanEntry; evicted: number[] } {
    let entry = this.byList.get(plan.hooks);
    if (entry === undefined || !sameList(entry, plan)) {
      entry = this.create(plan);
      this.byList.set(plan.hooks, entry);
    }
    for (const hook of entry.enabled) {
      const digest = hook.action.digest;
      if (digest === undefined || !isLoaded(digest)) {
        throw new VcpError(
          "UNKNOWN_BUNDLE",
          `hook ${hook.name} refers to bundle ${hook.action.bundle}${digest ? ` (${digest})` : " (no revision)"}, which the sandbox has not loaded`,
          { hook: hook.name, bundle: hook.action.bundle, ...(digest ? { digest } : {}) },
        );
      }
    }
    this.lru.delete(entry.key);
    this.lru.set(entry.key, entry);
    const evicted = this.lru.size > this.capacity ? this.evict() : [];
    return { entry, evicted };
  }

  /** Entries remembered (at most the capacity). */
  get size(): number {
    return this.lru.size;
  }

  private create(plan: PlanSource): PlanEntry {
    const enabled: ResolvedHook[] = [];
    const digests: string[] = [];
    let timeoutSum = 0;
    for (const hook of plan.hooks) {
      if (!hook.enabled) continue;
      enabled.push(hook);
      timeoutSum += hook.timeout_ms;
      const digest = hook.action.digest;
      if (digest !== undefined && !digests.includes(digest)) digests.push(digest);
    }
    return {
      key: this.nextKey++,
      profile: plan.profile,
      revision: plan.revision,
      hooks: plan.hooks.slice(),
      enabled,
      digests,
      timeoutSum,
    };
  }

  /** Forget the least recently used entries; return their keys. */
  private evict(): number[] {
    const forget: number[] = [];
    for (const key of this.lru.keys()) {
      if (this.lru.size <= this.capacity) break;
      // Still reachable through byList while the caller holds the list: then it is sent again.
      this.lru.delete(key);
      forget.push(key);
    }
    return forget;
  }
}

function sameList(entry: PlanEntry, plan: PlanSource): boolean {
  const list = plan.hooks;
  if (entry.profile !== plan.profile || entry.revision !== plan.revision || entry.hooks.length !== list.length) return false;
  for (let i = 0; i < list.length; i++) if (entry.hooks[i] !== list[i]) return false;
  return true;
}
