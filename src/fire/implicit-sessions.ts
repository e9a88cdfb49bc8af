/**
 * Implicit profile sessions on this replica (PROFILES §8.3): created on first use, owned by their
 * sender (ids per owner), gone after the profile's idle TTL; a client principal past
 * `limits.sessions_per_client` gets room by eviction, never a refusal (issue 24).
 *
 *   open(profile, ttl, id, principal)
 *     ─► not a client's (the embedding application, an operator): its state key, nothing counted
 *     ─► this replica's table: the session's entry, in use until `end()` (an in-use session is evicted last)
 *     ─► this replica's count (pipeline/implicit-sessions-local.ts): admit, sync; evicted → table, metric `replica`
 *     ─► with `store: redis`, the deployment's count (store/implicit-sessions.ts) when the session is new
 *        here or its last extension there is a refresh period old: evicted → this replica's count and
 *        table too, metric `all_replicas`. Redis unreachable: this replica's count is the cap meanwhile.
 *
 * Both counts are the same port and rule (pipeline/implicit-sessions.ts). They are layers, not twins:
 * this replica's bounds its table (the memory one replica holds for a client), the shared one holds
 * the cap across replicas.
 */
import { VcpError } from "../errors.js";
import type { Clock, Logger } from "../observe/events.js";
import type { Metrics } from "../observe/metrics.js";
import { sessionKey, type SessionPrincipal } from "../pipeline/access.js";
import { implicitMember, NOTHING_TAKEN_OUT, type ImplicitAdmitted, type ImplicitSessionStore } from "../pipeline/implicit-sessions.js";
import { createLocalImplicitSessionStore } from "../pipeline/implicit-sessions-local.js";

/** One use of an implicit session: its guest state key, until `end()`. */
export interface ImplicitSession {
  /** The per-session guest state key (owner-scoped, access.ts `sessionKey`). */
  readonly stateKey: string;
  /** The event is answered: the session is idle again (once per `open`). */
  end(): void;
}

export interface ImplicitSessionsDeps {
  clock: Pick<Clock, "now">;
  metrics: Pick<Metrics, "recordImplicitEvictions">;
  logger?: Logger;
  /** `limits.sessions_per_client`. */
  limit: number;
  /** With `store: redis`: a client's implicit sessions counted on every replica. */
  shared?: ImplicitSessionStore<false>;
}

/** A client's session this replica serves. */
interface Entry extends ImplicitSession {
  readonly owner: string;
  readonly member: string;
  /** Events of this session being answered now. */
  inFlight: number;
  /** In this replica's count: false once a count took it out (the entry then goes when its last event ends). */
  counted: boolean;
  /** The shared count admitted it (then later admissions only extend it there). */
  admitted: boolean;
  /** When (local clock) the shared count last extended it. */
  sharedAt?: number;
  /** The shared count's answer in flight: concurrent first events of one session share it. */
  sharing?: Promise<void>;
}

const NO_MEMBERS: ReadonlySet<string> = new Set();

/**
 * The session's guest state key (isolation: per_session).
 * SECURITY: keyed by owner and profile, never by the bare id: another principal sending the same
 * session_id gets its own session — it can neither reach, detect nor squat this one.
 */
function stateKeyOf(owner: string | null, profile: string, id: string): string {
  return sessionKey(owner, `${profile}:${id}`);
}

/**
 * How often a session in use is extended in the shared count: its expiry there lags its last use by
 * at most this (a quarter of the TTL, at most 5 s), and a busy session costs one round trip per period.
 */
function refreshMs(ttlMs: number): number {
  return Math.min(ttlMs / 4, 5000);
}

/**
 * @example
 * ```ts
 * const implicit = createImplicitSessions({ clock, metrics, limit: 100 });
 * const session = await implicit.open("amplifier", 86_400_000, "s1", { id: "app", role: "client" });
 * try { … session.stateKey … } finally { session.end(); }
 * ```
 */
export function createImplicitSessions(deps: ImplicitSessionsDeps) {
  const local = createLocalImplicitSessionStore(deps.clock);
  const shared = deps.shared;
  /** Owner → member → the session's entry. */
  const table = new Map<string, Map<string, Entry>>();
  /** Owner → the members with an event in flight here (the counts evict those last). */
  const busy = new Map<string, Set<string>>();

  function drop(owner: string, member: string): void {
    const owned = table.get(owner);
    const entry = owned?.get(member);
    if (entry === undefined) return;
    entry.counted = false;
    entry.admitted = false;
    if (entry.inFlight > 0) return;
    owned!.delete(member);
    if (owned!.size === 0) {
      table.delete(owner);
      busy.delete(owner);
    }
  }

  /** What a count took out of `owner`'s sessions leaves this replica's table (and, from the shared count, this replica's count). */
  function takeOut(owner: string, out: ImplicitAdmitted, scope: "replica" | "all_replicas"): void {
    if (out === NOTHING_TAKEN_OUT) return;
    for (const member of [...out.evicted, ...out.expired]) {
      if (scope === "all_replicas") local.release(owner, member);
      drop(owner, member);
    }
    if (out.evicted.length > 0) deps.metrics.recordImplicitEvictions(scope, out.evicted.length);
  }

  function end(entry: Entry): void {
    if (--entry.inFlight > 0) return;
    busy.get(entry.owner)?.delete(entry.member);
    if (!entry.counted) drop(entry.owner, entry.member);
  }

  function entryOf(owner: string, member: string, id: string, profile: string): Entry {
    let owned = table.get(owner);
    if (owned === undefined) {
      table.set(owner, (owned = new Map()));
      // Kept while the owner has sessions here (drop), not allocated per event.
      busy.set(owner, new Set());
    }
    let entry = owned.get(member);
    if (entry === undefined) {
      const created: Entry = { stateKey: stateKeyOf(owner, profile, id), owner, member, inFlight: 0, counted: false, admitted: false, end: () => end(created) };
      owned.set(member, (entry = created));
    }
    return entry;
  }

  /**
   * The deployment-wide count, before any work on the event: admits the session, evicting the
   * client's sessions that expire first past the cap. Redis unreachable: this replica's own count is
   * the cap until it is back — a resource limit, not a policy decision, so the chain still runs.
   */
  function admitShared(store: ImplicitSessionStore<false>, entry: Entry, ttlMs: number): Promise<void> {
    if (entry.sharing !== undefined) return entry.sharing;
    const { owner, member } = entry;
    const started = deps.clock.now();
    const sharing = (async () => {
      if (!store.available()) return;
      let out: ImplicitAdmitted;
      try {
        out = await store.admit({ owner, member, ttlMs, limit: deps.limit, inUse: busy.get(owner) ?? NO_MEMBERS });
      } catch (err) {
        if (!(err instanceof VcpError && err.code === "STORE_UNAVAILABLE")) throw err;
        deps.logger?.warn({ err, member, owner }, "implicit sessions: the shared store did not answer; this replica's own count applies");
        return;
      }
      entry.admitted = true;
      entry.sharedAt = started;
      takeOut(owner, out, "all_replicas");
    })().finally(() => {
      entry.sharing = undefined;
    });
    entry.sharing = sharing;
    return sharing;
  }

  return {
    /**
     * Session `id` of `profile` for `principal`, in use until its `end()`. Synchronous unless the
     * shared count is asked (a session new here, or due for its refresh there).
     */
    open(profile: string, ttlMs: number, id: string, principal: SessionPrincipal | undefined): ImplicitSession | Promise<ImplicitSession> {
      const owner = principal === undefined ? null : principal.id;
      // The embedding application's and operators' sessions are not counted: nothing to track.
      if (owner === null || principal?.role !== "client") return { stateKey: stateKeyOf(owner, profile, id), end: () => undefined };
      const member = implicitMember(profile, id);
      const entry = entryOf(owner, member, id, profile);
      const inUse = busy.get(owner)!;
      // In use from here: never the idle session another admission evicts.
      if (entry.inFlight++ === 0) inUse.add(member);
      const now = deps.clock.now();
      const out = local.admit({ owner, member, ttlMs, limit: deps.limit, inUse });
      entry.counted = true;
      takeOut(owner, out, "replica");
      // Only with a shared store: this replica's count is the whole rule otherwise (no await on the hot path).
      if (shared === undefined || (entry.admitted && entry.sharedAt !== undefined && now - entry.sharedAt < refreshMs(ttlMs))) return entry;
      return admitShared(shared, entry, ttlMs).then(
        () => entry,
        (err: unknown) => {
          entry.end();
          throw err;
        },
      );
    },
  };
}

export type ImplicitSessions = ReturnType<typeof createImplicitSessions>;
