/**
 * The one error class of vcp-hooks. The `code` is the discriminant; the whole error is plain data
 * (see {@link VcpError.toJSON}) so it survives piscina, IPC and the isolate boundary unchanged.
 *
 * A policy `abort` is a result, not an error: errors mean the runtime could not do what was asked.
 *
 * @example
 * ```ts
 * try { registry.register(def, { scope: "deployment", principal: "ops" }); }
 * catch (err) { if (err instanceof VcpError && err.code === "INVALID_HOOK") console.error(err.details); }
 * ```
 */
export class VcpError extends Error {
  override readonly name = "VcpError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  toJSON(): { code: ErrorCode; message: string; details?: Readonly<Record<string, unknown>> } {
    return { code: this.code, message: this.message, details: this.details };
  }

  /** Rebuild an error that crossed a process or thread boundary as plain data. */
  static fromJSON(data: { code: ErrorCode; message: string; details?: Record<string, unknown> }): VcpError {
    return new VcpError(data.code, data.message, data.details);
  }
}

/**
 * THE error table: every stable error code, the HTTP status the server answers it with, and a
 * one-line meaning (fastify's style: code, status and text side by side, so a new code is given a
 * status on purpose, in the line that adds it). One code per line. The error table of docs/errors.md is
 * checked against this object by a test, so adding a code without documenting it fails CI.
 */
export const ERROR_CODES = {
  UNSUPPORTED_NODE: { status: 500, description: "The Node.js running vcp-hooks is older than 24." },
  INVALID_HOOK: { status: 400, description: "A hook definition broke a registration rule (spec §6.2); details name the field and rule." },
  INVALID_PREDICATE: { status: 400, description: "A hook condition is not a valid predicate (spec §4.4); details name the path and rule." },
  DUPLICATE_HOOK: { status: 409, description: "A hook name is already registered in that scope (spec §6.2.1); details name both owners." },
  UNKNOWN_HOOK: { status: 404, description: "No hook of that name is registered in that scope." },
  ACTION_NOT_CALLABLE: { status: 400, description: "The hook's action is not an exported function of its bundle (spec §6.2.6)." },
  RATE_LIMITED: { status: 429, description: "Too many registrations or deregistrations by one principal (spec §8.2.5)." },
  SESSION_HOOK_NOT_ALLOWED: { status: 403, description: "A session-scope registration named a hook missing from the deployment allowlist (spec §8.2.1)." },
  UNAUTHORIZED_PRINCIPAL: { status: 403, description: "The principal may not register hooks in that scope (spec §8.2.1)." },
  INVALID_INPUT: { status: 400, description: "An input (context, constitution, event, session, pipeline field, request body) is malformed, nests deeper than limits.json_depth, serializes larger than limits.input_bytes, or is not JSON; details name the field, the rule and the limit." },
  UNKNOWN_HOOK_TYPE: { status: 400, description: "The hook type is not one of the six of spec §3." },
  INVALID_BUNDLE: { status: 400, description: "A bundle's code or manifest cannot be loaded into the sandbox." },
  UNKNOWN_BUNDLE: { status: 404, description: "A chain referred to a bundle the sandbox has not loaded." },
  UNKNOWN_REVISION: { status: 404, description: "A roll back or manifest read named a revision of a bundle the server does not keep." },
  BUNDLE_QUARANTINED: { status: 409, description: "The bundle was running when the sandbox host died and is quarantined until reinstalled." },
  SANDBOX_OVERLOADED: { status: 503, description: "The sandbox queue is full; retry later." },
  SANDBOX_CLOSED: { status: 503, description: "The sandbox was closed; no more chains are accepted." },
  SANDBOX_START_FAILED: { status: 500, description: "The sandbox host process could not be started." },
  SANDBOX_FRAME_TOO_LARGE: { status: 413, description: "A chain's request or reply is larger than the frame limit between the runtime and the sandbox host (sandbox frameBytes, default 64 MiB); nothing was sent. Details name the limit and the size." },
  SANDBOX_PROTOCOL_ERROR: { status: 500, description: "The byte stream between the runtime and the sandbox host was corrupt or cut off; the host is restarted and the chains in flight are answered crashed." },
  SESSION_NOT_FOUND: { status: 404, description: "No open session has that id (it was never opened, or it was closed)." },
  SESSION_EXISTS: { status: 409, description: "A session with that id is already open." },
  // only operators can get it: clients always address their own sessions
  SESSION_AMBIGUOUS: { status: 409, description: "Several owners have a session of that id open; an operator names one with owner." },
  SESSION_LIMIT: { status: 429, description: "The principal already has as many open sessions as allowed (limits.sessions_per_client); close one first." },
  // shared sessions (store: redis): all retryable, and nothing was written when they are answered
  SESSION_BUSY: { status: 503, description: "Another operation of the session (on this or another replica) held it longer than the wait deadline; retry." },
  SESSION_LOCK_LOST: { status: 503, description: "The replica's lock on the session expired before the operation could write (fencing refused the write); nothing was written, retry." },
  // GET /v1/audit on a runtime started without an audit log: there is no such resource
  AUDIT_DISABLED: { status: 404, description: "The runtime was started without an audit log." },
  // the result was withheld because it could not be audited (disk full, I/O error): retryable later
  AUDIT_WRITE_FAILED: { status: 503, description: "The audit log could not be written; the chain's result was not handed out." },
  INVALID_CONFIG: { status: 400, description: "A runtime or sandbox option is invalid; details name the field." },
  BUILD_FAILED: { status: 400, description: "A policy bundle could not be built: a forbidden or unresolvable import, or a compile error; details name the file and import." },
  // a user's file is not read at all: a FIFO would hang the build, a huge (sparse) file cost gigabytes
  INPUT_FILE_REFUSED: { status: 400, description: "A file build, sign, verify or import was asked to read is not a regular file (a FIFO, device, socket, directory), is larger than its bound, or (from an untrusted directory) resolves outside it; details name the file, its kind or size and the limit. Nothing was read." },
  BUNDLE_TOO_LARGE: { status: 413, description: "A bundle's code exceeds the size cap (limits.bundle_bytes, default 5 MiB)." },
  // a digest that does not match is a corrupt/tampered body: the request is wrong, not the caller
  DIGEST_MISMATCH: { status: 400, description: "A .vcpb artifact's digest does not match its manifest and code; details name the expected and actual digests." },
  // trust decisions about a well-formed bundle: refused (403), not malformed
  UNSIGNED_BUNDLE: { status: 403, description: "Signatures are required and the bundle carries none (a stripped signature is a rejection, never a downgrade)." },
  SIGNATURE_INVALID: { status: 403, description: "The bundle is signed but no signature verifies against a keyring key." },
  TRUST_EXCEEDS_KEY: { status: 403, description: "The bundle requests a trust level above the max_trust of the best key that signed it." },
  VERSION_DOWNGRADE: { status: 409, description: "The bundle's version is lower than the installed one; pass allowDowngrade to roll back on purpose." },
  // start-time refusals (this one and AUDIT_LOG_CORRUPT): a server never answers with them, but every code has a status
  DATA_DIR_LOCKED: { status: 500, description: "Another live process holds the data directory (or audit log) lock; details name the lock file and the holder's pid." },
  AUDIT_LOG_CORRUPT: { status: 500, description: "The audit log's tail does not verify at start (two writers, or an edit); details name the file and seq. Run `vcp-hooks audit verify`." },
  // ── the shared store (store.kind redis, src/store/) ──
  // Redis is down or slow: retryable, and nothing was changed (each shared write is one transaction)
  STORE_UNAVAILABLE: { status: 503, description: "The shared store (Redis, store.kind redis) could not be reached or did not answer within store.command_timeout_ms; details name the operation. Nothing was changed; retry later." },
  // start-time refusal: two live processes claimed one replica id
  REPLICA_ID_IN_USE: { status: 500, description: "Another live replica already heartbeats under this replica id in the same store prefix; details name the id. Give each replica its own data directory or VCP_REPLICA_ID." },
  // the shared store took a bundle change, this replica's data directory did not: the change is live elsewhere
  PUBLISHED_NOT_PERSISTED: { status: 500, description: "A bundle install or removal is in the shared store (the other replicas run it) but this replica's data directory could not be written; this replica undid it locally, is not ready, and applies it at its next reconcile." },
  STORE_CORRUPT: { status: 500, description: "The data directory's installed bundles cannot be read or written, or the index and a stored artifact disagree." },
  // ── event profiles (PROFILES §2, §8) ──
  UNKNOWN_PROFILE: { status: 404, description: "No event profile of that name (or pinned version) is in the catalogue (PROFILES §8.2); details name the profile and the known ones." },
  UNKNOWN_EVENT: { status: 404, description: "The event is not one of the profile's events; details name the profile, the event and the known events." },
  INVALID_MATCHER: { status: 400, description: "A hook's matcher or match filter cannot be compiled (RE2 syntax) for its event, or may cost more than maxMatcherCost scan units on one input; details name the hook and the pattern or limit." },
  // a deployment decision about a well-formed bundle or event: refused, not malformed
  PROFILE_DISABLED: { status: 403, description: "The profile is in the catalogue but not enabled in this deployment (vcp.yaml `profiles:`); nothing was installed or run." },
  // ── Amplifier approvals (PROFILES §3.4, §8.9) ──
  // another client's approval answers exactly as an unknown id: ids never leak
  APPROVAL_NOT_FOUND: { status: 404, description: "No approval of that id is visible to the caller (never asked, forgotten after approvals.retain_decided, or another client's)." },
  APPROVAL_DECIDED: { status: 409, description: "The approval was already decided, is being decided by another request, or expired; the first decision (or the timeout's default) stands." },
  APPROVAL_LIMIT: { status: 429, description: "The session (approvals.max_pending_per_session), the client (approvals.max_pending_per_client) or the runtime (approvals.max_pending) already has as many pending approvals as allowed; nothing was asked." },
  // ── the command lane (PROFILES §6): refusals at install are trust/deployment decisions ──
  EXEC_DISABLED: { status: 403, description: "A bundle carries an exec hook (command lane, PROFILES §6) and the deployment has exec.enabled off." },
  EXEC_NOT_ALLOWED: { status: 403, description: "An exec hook came from a bundle that is not signed with trust system (or from a session registration); details name the hook and the trust." },
  EXEC_SHELL_DISABLED: { status: 403, description: "An exec hook's command is a shell string and the deployment has exec.shell off (or the hook did not ask for shell)." },
  // a pinned script that changed or cannot start: the server's state is wrong, not the request
  EXEC_HASH_MISMATCH: { status: 500, description: "An exec hook's executable no longer has the SHA-256 it was pinned with; it was not run. Details name the file, the pinned and the actual hash." },
  EXEC_SPAWN_FAILED: { status: 500, description: "An exec hook's executable could not be opened or started (missing, not executable, wrapper missing); details name the file and the system error." },
  // ── raised by the HTTP adapter (src/server/) ──
  UNAUTHENTICATED: { status: 401, description: "No bearer token, or a token that matches no configured principal." },
  FORBIDDEN: { status: 403, description: "The token's role may not use this route or do this (operator: bundles, audit, status, metrics; client: sessions, events; metrics: GET /metrics only; deciding an approval: operator or approver, never the client whose agent asked)." },
  // per principal, over every server-sent-events route: memory held for unread streams stays bounded
  STREAM_LIMIT: { status: 429, description: "The principal already has limits.streams_per_principal event streams (approvals, decisions) open on this server; close one first." },
  NOT_FOUND: { status: 404, description: "No route has this path (a known path with a method it lacks is 405 METHOD_NOT_ALLOWED)." },
  METHOD_NOT_ALLOWED: { status: 405, description: "The path exists but not with this method; the Allow header lists the methods it has." },
  PAYLOAD_TOO_LARGE: { status: 413, description: "The request body exceeds limits.body_bytes (limits.bundle_bytes for bundle uploads)." },
  MALFORMED_JSON: { status: 400, description: "The request body is not valid JSON." },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, description: "The request body is not application/json (or application/vnd.vcp.bundle+json for uploads)." },
  INVALID_REQUEST: { status: 400, description: "The body, query or path parameters do not match the route's schema; details name the field." },
  SHUTTING_DOWN: { status: 503, description: "The server is draining for shutdown; retry against another instance." },
  INTERNAL: { status: 500, description: "An unexpected error; the server log has the stack under the request id." },
} as const satisfies Readonly<Record<string, ErrorInfo>>;

export interface ErrorInfo {
  /** The HTTP status `vcp-hooks serve` answers with (src/server/errors.ts reads it from here). */
  readonly status: number;
  readonly description: string;
}

export type ErrorCode = keyof typeof ERROR_CODES;

/** The HTTP status of a code (500 for a string that is not one: an error from elsewhere). */
export function httpStatusOf(code: string): number {
  return Object.hasOwn(ERROR_CODES, code) ? ERROR_CODES[code as ErrorCode].status : 500;
}

/**
 * An error's message followed by its causes' (`cause`, and an AggregateError's first error), so a log
 * line or status field says what really failed: `fetch failed: getaddrinfo ENOTFOUND collector` rather
 * than `fetch failed`. A cause whose message is already in the text is skipped; at most 5 levels.
 *
 * @example
 * ```ts
 * messageWithCauses(new TypeError("fetch failed", { cause: new Error("getaddrinfo ENOTFOUND x") }));
 * // "fetch failed: getaddrinfo ENOTFOUND x"
 * ```
 */
export function messageWithCauses(err: unknown): string {
  let text = err instanceof Error ? err.message || err.name : String(err);
  let next: unknown = err instanceof Error ? causeOf(err) : undefined;
  for (let depth = 0; next !== undefined && depth < 5; depth++) {
    const message = next instanceof Error ? next.message || next.name : String(next);
    if (message !== "" && !text.includes(message)) text = `${text}: ${message}`;
    next = next instanceof Error ? causeOf(next) : undefined;
  }
  return text;
}

function causeOf(err: Error): unknown {
  if (err.cause !== undefined) return err.cause;
  return err instanceof AggregateError ? err.errors[0] : undefined;
}
