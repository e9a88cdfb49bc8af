/**
 * Session ownership (DESIGN §6.5): the one rule deciding who may see or act on a session. Every
 * session operation of the pipeline and the runtime looks a session up through {@link maySee}, so a
 * session another principal owns is indistinguishable from one that does not exist.
 */

/** Who is asking. The runtime's `Principal` fits; only `id` and `role` are read. */
export interface SessionPrincipal {
  readonly id: string;
  readonly role: string;
}

/**
 * Options of every session operation. `principal` absent means the embedding application itself
 * (library use, periodic ticks): it owns the host and may act on every session.
 */
export interface SessionAccess {
  principal?: SessionPrincipal | undefined;
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
  if (principal === undefined) return true;
  if (principal.role === "operator" || principal.role === "system") return true;
  // SECURITY: a client sees only sessions it opened; a session opened without a principal belongs
  // to the embedding application, never to a client.
  return owner !== null && owner === principal.id;
}
