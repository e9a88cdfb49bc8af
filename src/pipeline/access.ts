/**
 * Session ownership (DESIGN §6.5): the one rule deciding who may see or act on a session. Every
 * session operation of the pipeline and the runtime looks a session up through {@link maySee}, so a
 * session another principal owns is indistinguishable from one that does not exist.
 */

/** Who is asking. The runtime's `Principal` fits; only `id`, `role` and an approver's `approves` are read. */
export interface SessionPrincipal {
  readonly id: string;
  readonly role: string;
  /** `approver` principals: the client principals whose approvals it sees and decides (absent: every client's). */
  readonly approves?: readonly string[] | undefined;
}

/**
 * Options of every session operation. `principal` absent means the embedding application itself
 * (library use, periodic ticks): it owns the host and may act on every session.
 *
 * `owner` says whose session id is meant, for callers that see every owner's sessions (operators,
 * the runtime, the embedding application): a principal id, or `null` for a session the embedding
 * application opened. A client principal always addresses its own sessions: `owner` is ignored for it.
 */
export interface SessionAccess {
  principal?: SessionPrincipal | undefined;
  owner?: string | null | undefined;
}

/**
 * Session ids are chosen by clients, so each owner has its own namespace (issue 10): the same id
 * opened by two principals is two sessions, and neither can learn that the other's exists. Inside
 * the runtime a session is known by its key: the id itself for a session of the embedding
 * application (today's behaviour, also for sessions only ever named in `fire`), `\u0000` + the JSON
 * of `[owner, id]` for a principal's. The registry's session tables, the periodic scheduler, the
 * sandbox's per-session isolates and the cascade's per-session disables all use the key; every view
 * handed back shows the caller's own `session_id` (and `owner`).
 *
 * @example
 * ```ts
 * sessionKey(null, "s1"); // "s1"
 * sessionKey("app-a", "s1") === sessionKey("app-b", "s1"); // false
 * ```
 */
export function sessionKey(owner: string | null, id: string): string {
  // SECURITY: JSON of a two-string array is injective, so no (owner, id) pair shares another's key.
  return owner === null ? id : `${OWNED_PREFIX}${JSON.stringify([owner, id])}`;
}

/**
 * The key of a chain that runs with no session (a profile event without a session id, PROFILES §8.3):
 * the chain's own, so `isolation: per_session` guest state is per (principal, chain), never shared
 * between principals or between two chains of one principal. Chain ids are random UUIDs the caller
 * never chooses, so no session id names this key in advance.
 *
 * @example
 * ```ts
 * chainSessionKey("app-a", chainId) === chainSessionKey("app-b", chainId); // false
 * ```
 */
export function chainSessionKey(owner: string | null, chainId: string): string {
  return sessionKey(owner, `(chain ${chainId})`);
}

/** The prefix of an owned session's key. */
const OWNED_PREFIX = "\u0000";

/**
 * The caller-facing id and owner of a session key ({@link sessionKey} reversed). An embedding
 * application's id that happens to look like an owned key is still read as one: the embedding
 * application sees every session anyway.
 *
 * @example
 * ```ts
 * keyParts(sessionKey("app-a", "s1")); // { id: "s1", owner: "app-a" }
 * ```
 */
export function keyParts(key: string): { id: string; owner: string | null } {
  if (key.startsWith(OWNED_PREFIX)) {
    try {
      const parsed: unknown = JSON.parse(key.slice(OWNED_PREFIX.length));
      if (Array.isArray(parsed) && parsed.length === 2 && typeof parsed[0] === "string" && typeof parsed[1] === "string") {
        return { id: parsed[1], owner: parsed[0] };
      }
    } catch {
      // Not an owned key: an embedding application's id that starts with U+0000.
    }
  }
  return { id: key, owner: null };
}

/**
 * Whether `principal` may see (and act on) a session owned by `owner` (`null`: opened without a
 * principal, by the embedding application).
 *
 * @example
 * ```ts
 * maySee("app-a", { id: "app-b", role: "client" }); // false: another client's session
 * maySee("app-a", { id: "ops", role: "operator" }); // true: operators see everything
 * ```
 */
export function maySee(owner: string | null, principal: SessionPrincipal | undefined): boolean {
  if (seesAllOwners(principal)) return true;
  // SECURITY: a client sees only sessions it opened; a session opened without a principal belongs
  // to the embedding application, never to a client.
  return owner !== null && owner === principal!.id;
}

/** Whether `principal` sees every owner's sessions (operators, the runtime, the embedding application) rather than only its own. */
export function seesAllOwners(principal: SessionPrincipal | undefined): boolean {
  return principal === undefined || principal.role === "operator" || principal.role === "system";
}

/**
 * The key a caller's session id names without a lookup (every store's `keyOf` starts here): a client
 * names only its own namespace; an explicit `owner` names that owner's. `undefined`: a caller that
 * sees every owner gave a bare id, which the store resolves with {@link keyAmong}.
 *
 * @example
 * ```ts
 * namespacedKey("s1", { principal: { id: "app-a", role: "client" } }); // sessionKey("app-a", "s1")
 * namespacedKey("s1", {}); // undefined: look it up among the open sessions
 * ```
 */
export function namespacedKey(id: string, access: SessionAccess | undefined): string | undefined {
  // SECURITY: a client names only its own namespace; it cannot reach, or detect, another owner's id.
  if (!seesAllOwners(access?.principal)) return sessionKey(access!.principal!.id, id);
  if (access?.owner !== undefined) return sessionKey(access.owner, id);
  return undefined;
}

/**
 * A bare id among the keys of the open sessions using it: the embedding application's own session
 * of that id first, else the one owner's; two owners' is SESSION_AMBIGUOUS (name the owner), none
 * names the id itself (a session never opened).
 */
export function keyAmong(id: string, keys: readonly string[], ambiguous: (owners: Array<string | null>) => Error): string {
  if (keys.length === 0 || keys.includes(id)) return id;
  if (keys.length > 1) throw ambiguous(keys.map((k) => keyParts(k).owner));
  return keys[0]!;
}

/**
 * Whether `principal` may read an approval asked in a session owned by `owner` (PROFILES §3.4): the
 * session rule ({@link maySee}), and an `approver` sees the approvals of the clients it approves for.
 *
 * @example
 * ```ts
 * mayReadApproval("app-a", { id: "app-a", role: "client" }); // true: its own agent's ask
 * mayReadApproval("app-a", { id: "human", role: "approver", approves: ["app-b"] }); // false
 * ```
 */
export function mayReadApproval(owner: string | null, principal: SessionPrincipal | undefined): boolean {
  if (principal?.role === "approver") return approvesFor(owner, principal);
  return maySee(owner, principal);
}

/**
 * Whether `principal` may decide that approval. Never a client, not even for its own session: the
 * token that raised the ask is the agent's, and an agent that answers its own "may I?" (or grants
 * itself "allow always") makes the question worthless. Operators, the embedding application and an
 * `approver` for the owning client decide.
 *
 * @example
 * ```ts
 * mayDecideApproval("app-a", { id: "app-a", role: "client" }); // false
 * mayDecideApproval("app-a", { id: "human", role: "approver", approves: ["app-a"] }); // true
 * ```
 */
export function mayDecideApproval(owner: string | null, principal: SessionPrincipal | undefined): boolean {
  if (principal === undefined) return true;
  if (principal.role === "operator" || principal.role === "system") return true;
  // SECURITY: a client never decides an approval, its own included.
  return principal.role === "approver" && approvesFor(owner, principal);
}

function approvesFor(owner: string | null, principal: SessionPrincipal): boolean {
  // SECURITY: a scoped approver sees only the clients it names; an approval of the embedding
  // application (owner null) belongs to no client, so only an unscoped approver sees it.
  if (principal.approves === undefined) return true;
  return owner !== null && principal.approves.includes(owner);
}
