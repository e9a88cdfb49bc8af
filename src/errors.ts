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
 * Every stable error code with a one-line meaning. The README's error table is checked against this
 * object by a test, so adding a code without documenting it fails CI.
 */
export const ERROR_CODES = {
  UNSUPPORTED_NODE: "The Node.js running vcp-hooks is older than 24.",
  INVALID_HOOK: "A hook definition broke a registration rule (spec §6.2); details name the field and rule.",
  INVALID_PREDICATE: "A hook condition is not a valid predicate (spec §4.4); details name the path and rule.",
  DUPLICATE_HOOK: "A hook name is already registered in that scope (spec §6.2.1); details name both owners.",
  UNKNOWN_HOOK: "No hook of that name is registered in that scope.",
  ACTION_NOT_CALLABLE: "The hook's action is not an exported function of its bundle (spec §6.2.6).",
  RATE_LIMITED: "Too many registrations or deregistrations by one principal (spec §8.2.5).",
  SESSION_HOOK_NOT_ALLOWED: "A session-scope registration named a hook missing from the deployment allowlist (spec §8.2.1).",
  UNAUTHORIZED_PRINCIPAL: "The principal may not register hooks in that scope (spec §8.2.1).",
  INVALID_INPUT: "An input (context, constitution, event, session, pipeline field, request body) is malformed, nests deeper than limits.json_depth, serializes larger than limits.input_bytes, or is not JSON; details name the field, the rule and the limit.",
  UNKNOWN_HOOK_TYPE: "The hook type is not one of the six of spec §3.",
  INVALID_BUNDLE: "A bundle's code or manifest cannot be loaded into the sandbox.",
  UNKNOWN_BUNDLE: "A chain referred to a bundle the sandbox has not loaded.",
  BUNDLE_QUARANTINED: "The bundle was running when the sandbox host died and is quarantined until reinstalled.",
  SANDBOX_OVERLOADED: "The sandbox queue is full; retry later.",
  SANDBOX_CLOSED: "The sandbox was closed; no more chains are accepted.",
  SANDBOX_START_FAILED: "The sandbox host process could not be started.",
  SESSION_NOT_FOUND: "No open session has that id (it was never opened, or it was closed).",
  SESSION_EXISTS: "A session with that id is already open.",
  SESSION_AMBIGUOUS: "Several owners have a session of that id open; an operator names one with owner.",
  SESSION_LIMIT: "The principal already has as many open sessions as allowed (limits.sessions_per_client); close one first.",
  AUDIT_DISABLED: "The runtime was started without an audit log.",
  AUDIT_WRITE_FAILED: "The audit log could not be written; the chain's result was not handed out.",
  INVALID_CONFIG: "A runtime or sandbox option is invalid; details name the field.",
  BUILD_FAILED: "A policy bundle could not be built: a forbidden or unresolvable import, or a compile error; details name the file and import.",
  BUNDLE_TOO_LARGE: "A bundle's code exceeds the size cap (limits.bundle_bytes, default 5 MiB).",
  DIGEST_MISMATCH: "A .vcpb artifact's digest does not match its manifest and code; details name the expected and actual digests.",
  UNSIGNED_BUNDLE: "Signatures are required and the bundle carries none (a stripped signature is a rejection, never a downgrade).",
  SIGNATURE_INVALID: "The bundle is signed but no signature verifies against a keyring key.",
  TRUST_EXCEEDS_KEY: "The bundle requests a trust level above the max_trust of the best key that signed it.",
  VERSION_DOWNGRADE: "The bundle's version is lower than the installed one; pass allowDowngrade to roll back on purpose.",
  DATA_DIR_LOCKED: "Another live process holds the data directory (or audit log) lock; details name the lock file and the holder's pid.",
  AUDIT_LOG_CORRUPT: "The audit log's tail does not verify at start (two writers, or an edit); details name the file and seq. Run `vcp-hooks audit verify`.",
  UNKNOWN_PROFILE: "No event profile of that name (or pinned version) is in the catalogue (PROFILES §8.2); details name the profile and the known ones.",
  UNKNOWN_EVENT: "The event is not one of the profile's events; details name the profile, the event and the known events.",
  INVALID_MATCHER: "A hook's matcher cannot be compiled (RE2 syntax) for its event; details name the hook and the pattern.",
  PROFILE_DISABLED: "The profile is in the catalogue but not enabled in this deployment (vcp.yaml `profiles:`); nothing was installed or run.",
  STORE_CORRUPT: "The data directory's installed bundles cannot be read or written, or the index and a stored artifact disagree.",
  EXEC_DISABLED: "A bundle carries an exec hook (command lane, PROFILES §6) and the deployment has exec.enabled off.",
  EXEC_NOT_ALLOWED: "An exec hook came from a bundle that is not signed with trust system (or from a session registration); details name the hook and the trust.",
  EXEC_SHELL_DISABLED: "An exec hook's command is a shell string and the deployment has exec.shell off (or the hook did not ask for shell).",
  EXEC_HASH_MISMATCH: "An exec hook's executable no longer has the SHA-256 it was pinned with; it was not run. Details name the file, the pinned and the actual hash.",
  APPROVAL_NOT_FOUND: "No approval of that id is visible to the caller (never asked, forgotten after its retention, or another client's: the same answer).",
  APPROVAL_DECIDED: "The approval was already decided or expired; the first decision (or the timeout default) stands. Details name the state and decision.",
  APPROVAL_LIMIT: "Too many pending approvals: per session (approvals.max_pending_per_session) or in the whole runtime (approvals.max_pending); nothing was asked.",
  EXEC_SPAWN_FAILED: "An exec hook's executable could not be opened or started (missing, not executable, wrapper missing); details name the file and the system error.",
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;
