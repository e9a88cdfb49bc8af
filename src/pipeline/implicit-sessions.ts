/**
 * The count of a client's implicit profile sessions (PROFILES §8.3): the port, and its rule once.
 *
 * A profile event naming a `session_id` opens an implicit session of its sender; a client principal
 * holds at most `limits.sessions_per_client` of them at a time, and a count never refuses an event
 * (issue 24). One {@link ImplicitSessionStore.admit} is one atomic step of every adapter:
 *
 * ```
 *  member live (expires after now)?  → extend it: expires at now + ttl. Nothing else changes.
 *  else (new, or past its expiry)    → the owner's members past their expiry leave      (→ expired)
 *                                    → while the owner holds ≥ limit: evict the one that
 *                                      expires first, the caller's in-use members last  (→ evicted)
 *                                    → admit it: expires at now + ttl
 * ```
 * Each use extends a session by its profile's idle TTL, so "expires first" is the least recently
 * used (with one TTL for all; ties, to the millisecond, go in the adapter's own order). `release`
 * takes a member out of the count. Adapters: this process's memory (implicit-sessions-local.ts,
 * one replica's count) and Redis (store/implicit-sessions.ts, every replica's; one script per step,
 * on Redis's clock). test/integration/scale-out/implicit-session-store.test.ts runs the same cases
 * on both. How the runtime uses them (which sessions count, the table of sessions in use on this
 * replica, how often a shared count is extended) is src/fire/implicit-sessions.ts.
 */

/** One admission: the owner's session `member` (see {@link implicitMember}). */
export interface ImplicitAdmission {
  owner: string;
  member: string;
  /** The session's idle TTL: it leaves the count this long after its last admission. */
  ttlMs: number;
  /** `limits.sessions_per_client`. */
  limit: number;
  /** Members of this owner that the caller is answering an event of now: evicted only when every other one is too. */
  inUse: ReadonlySet<string>;
}

/** The members an admission took out of the owner's count (never the admitted one). */
export interface ImplicitAdmitted {
  /** Live members evicted to make room: each is one eviction. */
  readonly evicted: readonly string[];
  /** Members past their expiry that left: gone by their TTL, not evictions. */
  readonly expired: readonly string[];
}

/** The answer of an admission that took nothing out (most of them). */
export const NOTHING_TAKEN_OUT: ImplicitAdmitted = Object.freeze({ evicted: Object.freeze([]), expired: Object.freeze([]) });

/**
 * Where a client's implicit sessions are counted (the port). `Sync` is true for the in-memory adapter
 * (counted on every event without a round trip), false for Redis.
 */
export interface ImplicitSessionStore<Sync extends boolean = boolean> {
  /** Whose sessions one count holds: this replica's, or every replica's. */
  readonly scope: "replica" | "all_replicas";
  /** False while the store cannot answer (Redis disconnected): the caller keeps its own count meanwhile. */
  available(): boolean;
  /** Admit or extend one session, making room past the limit (the rule above); STORE_UNAVAILABLE when Redis does not answer. */
  admit(input: ImplicitAdmission): Sync extends true ? ImplicitAdmitted : Promise<ImplicitAdmitted>;
  /** Take one session out of the owner's count (a count that evicted it elsewhere, say). */
  release(owner: string, member: string): Sync extends true ? void : Promise<void>;
}

/** The member naming session `id` of `profile` in its owner's count (the Redis set's member, too). */
export function implicitMember(profile: string, id: string): string {
  return JSON.stringify([profile, id]);
}
