/**
 * Implicit sessions counted in this process: the in-memory adapter of the implicit session port
 * (implicit-sessions.ts {@link ImplicitSessionStore}), synchronous, on this process's clock. Each
 * owner's members are kept in the order of their last admission; ties in expiry go in that order.
 */
import type { Clock } from "../observe/events.js";
import { NOTHING_TAKEN_OUT, type ImplicitSessionStore } from "./implicit-sessions.js";

/**
 * @example
 * ```ts
 * const count = createLocalImplicitSessionStore(clock);
 * count.admit({ owner: "app", member: implicitMember("amplifier", "s1"), ttlMs: 86_400_000, limit: 100, inUse: new Set() });
 * ```
 */
export function createLocalImplicitSessionStore(clock: Pick<Clock, "now">): ImplicitSessionStore<true> {
  /** Owner → member → expires at (ms), least recently admitted first. */
  const byOwner = new Map<string, Map<string, number>>();

  /** The member that expires first, skipping `inUse` unless `anyway`; the earlier admitted on a tie. */
  function firstToExpire(owned: Map<string, number>, inUse: ReadonlySet<string>, anyway: boolean): string | undefined {
    let victim: string | undefined;
    let at = Infinity;
    for (const [member, expires] of owned) {
      if (expires < at && (anyway || !inUse.has(member))) {
        victim = member;
        at = expires;
      }
    }
    return victim;
  }

  return {
    scope: "replica",
    available: () => true,
    admit({ owner, member, ttlMs, limit, inUse }) {
      const now = clock.now();
      const expires = now + Math.max(1, Math.floor(ttlMs));
      let owned = byOwner.get(owner);
      const current = owned?.get(member);
      if (owned !== undefined && current !== undefined && current > now) {
        // Most recently admitted last.
        owned.delete(member);
        owned.set(member, expires);
        return NOTHING_TAKEN_OUT;
      }
      if (owned === undefined) byOwner.set(owner, (owned = new Map()));
      owned.delete(member);
      const expired: string[] = [];
      for (const [other, at] of owned) {
        if (at <= now) {
          owned.delete(other);
          expired.push(other);
        }
      }
      const evicted: string[] = [];
      while (owned.size >= limit) {
        const victim = firstToExpire(owned, inUse, false) ?? firstToExpire(owned, inUse, true)!;
        owned.delete(victim);
        evicted.push(victim);
      }
      owned.set(member, expires);
      return evicted.length === 0 && expired.length === 0 ? NOTHING_TAKEN_OUT : { evicted, expired };
    },
    release(owner, member) {
      const owned = byOwner.get(owner);
      if (owned === undefined) return;
      owned.delete(member);
      if (owned.size === 0) byOwner.delete(owner);
    },
  };
}
