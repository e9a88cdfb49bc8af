/**
 * Bearer-token authentication. Tokens are never stored: the config holds `token_sha256` (lowercase
 * hex), and a presented token is hashed and compared against every stored hash in constant time.
 */
import { createHash, hash, randomBytes, timingSafeEqual } from "node:crypto";
import { VcpError } from "../index.js";

/**
/**
 * `operator`: bundles, audit, status, metrics, every session and approval. `client`: its own sessions
 * and events, and reads its own approvals. `approver`: sees and decides approvals (of the clients in
 * `approves`, or every client's), nothing else — the human's token, never the agent's. `metrics`:
 * GET /metrics only (a Prometheus scraper's token, which can change and read nothing else).
 */
export type Role = "operator" | "client" | "approver" | "metrics";

/** Every role, as `auth[].role` and `vcp-hooks token --role` accept them. */
export const ROLES: readonly Role[] = ["operator", "client", "approver", "metrics"];

/** The prefix of a generated token, so a leaked one says what it opens. */
const TOKEN_PREFIX: Readonly<Record<Role, string>> = { operator: "op", client: "cl", approver: "ap", metrics: "mt" };

export interface AuthEntry {
  readonly id: string;
  readonly role: Role;
  readonly token_sha256: string;
  /** `approver` only: the client principal ids whose approvals it sees and decides; absent: every client's. */
  readonly approves?: readonly string[] | undefined;
}

export interface AuthPrincipal {
  readonly id: string;
  readonly role: Role;
  readonly approves?: readonly string[] | undefined;
}

/** sha256 hex of a token: what `auth[].token_sha256` holds. */
export function hashToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

/** A fresh random token: 32 bytes, base64url, prefixed with its role so a leaked one is recognizable. */
export function generateToken(role: Role): string {
  return `vcp_${TOKEN_PREFIX[role]}_${randomBytes(32).toString("base64url")}`;
}

/**
 * A verifier over a fixed set of entries. Swapped as a whole on config reload (the server holds one
 * reference and replaces it), so a request sees either the old or the new set, never a mix.
 */
export interface Authenticator {
  /** The principal of an `Authorization` header value, or an UNAUTHENTICATED error. */
  authenticate(header: string | undefined): AuthPrincipal;
  readonly size: number;
}

export function createAuthenticator(entries: readonly AuthEntry[]): Authenticator {
  const table = entries.map((e) => ({ id: e.id, role: e.role, approves: e.approves, hash: Buffer.from(e.token_sha256, "hex") }));
  return {
    size: table.length,
    authenticate(header) {
      if (header === undefined || header.length === 0) {
        throw new VcpError("UNAUTHENTICATED", "missing bearer token: send 'Authorization: Bearer <token>'");
      }
      const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(header);
      if (match === null) throw new VcpError("UNAUTHENTICATED", "the Authorization header is not 'Bearer <token>'");
      // One-shot hash (no Hash object): ≈ 0.5 µs per request. No cache in front of it: keyed by the
      // token it would keep tokens in memory, which this module never does; keyed by a hash of the
      // token it would cost the hash it saves.
      const presented = hash("sha256", match[1]!, "buffer");
      let found: (typeof table)[number] | undefined;
      // SECURITY: compare against every entry with timingSafeEqual and no early exit, so the time
      // taken does not reveal which entry (or how much of a hash) matched.
      for (const entry of table) {
        if (timingSafeEqual(presented, entry.hash) && found === undefined) found = entry;
      }
      if (found === undefined) throw new VcpError("UNAUTHENTICATED", "the bearer token matches no configured principal");
      return { id: found.id, role: found.role, ...(found.approves !== undefined ? { approves: found.approves } : {}) };
    },
  };
}

/** The role check of one route: operator routes refuse client tokens and vice versa. */
export function requireRole(principal: AuthPrincipal, roles: readonly Role[], route: string): void {
  if (!roles.includes(principal.role)) {
    throw new VcpError("FORBIDDEN", `a ${principal.role} token may not use ${route} (needs ${roles.join(" or ")})`, { role: principal.role, required: roles });
  }
}
