/**
 * HTTP error mapping: one table from every error code (the runtime's `ErrorCode`s and the server's
 * own codes) to an HTTP status. Every error leaves the server as
 * `{ "error": { "code", "message", "details" } }` (DESIGN §6.2).
 */
import { ERROR_CODES, VcpError, type ErrorCode } from "../index.js";

/**
 * Codes only the HTTP adapter produces. Kept here, not in src/errors.ts, until the lead merges them
 * into ERROR_CODES and the README's table (they are listed in the issue note).
 */
export const SERVER_ERROR_CODES = {
  UNAUTHENTICATED: "No bearer token, or a token that matches no configured principal.",
  FORBIDDEN: "The token's role may not use this route (operator: bundles, audit, status; client: sessions, events).",
  NOT_FOUND: "No route has this path (a known path with a method it lacks is 405 METHOD_NOT_ALLOWED).",
  METHOD_NOT_ALLOWED: "The path exists but not with this method; the Allow header lists the methods it has.",
  PAYLOAD_TOO_LARGE: "The request body exceeds limits.body_bytes (limits.bundle_bytes for bundle uploads).",
  MALFORMED_JSON: "The request body is not valid JSON.",
  UNSUPPORTED_MEDIA_TYPE: "The request body is not application/json (or application/vnd.vcp.bundle+json for uploads).",
  INVALID_REQUEST: "The body, query or path parameters do not match the route's schema; details name the field.",
  NOT_IMPLEMENTED: "This runtime does not provide the operation behind the route (an embedding that passes a partial runtime).",
  SHUTTING_DOWN: "The server is draining for shutdown; retry against another instance.",
  INTERNAL: "An unexpected error; the server log has the stack under the request id.",
} as const;

export type ServerErrorCode = keyof typeof SERVER_ERROR_CODES;
export type AnyErrorCode = ErrorCode | ServerErrorCode;

/**
 * The one status table. Runtime codes the server does not know yet fall back to 500 (and a test
 * checks that every code of ERROR_CODES has an entry, so a new code is mapped on purpose).
 */
export const HTTP_STATUS: Readonly<Partial<Record<AnyErrorCode, number>>> & Readonly<Record<ServerErrorCode, number>> = {
  // request shape
  INVALID_REQUEST: 400,
  MALFORMED_JSON: 400,
  INVALID_INPUT: 400,
  INVALID_HOOK: 400,
  INVALID_PREDICATE: 400,
  UNKNOWN_HOOK_TYPE: 400,
  ACTION_NOT_CALLABLE: 400,
  INVALID_BUNDLE: 400,
  BUILD_FAILED: 400,
  // a digest that does not match is a corrupt/tampered body: the request is wrong, not the caller
  DIGEST_MISMATCH: 400,
  INVALID_CONFIG: 400,
  INVALID_MATCHER: 400,
  // who may do what
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  UNAUTHORIZED_PRINCIPAL: 403,
  SESSION_HOOK_NOT_ALLOWED: 403,
  // trust decisions about a well-formed bundle: refused, not malformed
  UNSIGNED_BUNDLE: 403,
  SIGNATURE_INVALID: 403,
  TRUST_EXCEEDS_KEY: 403,
  PROFILE_DISABLED: 403,
  // existence
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  // GET /v1/audit on a runtime started without an audit log: there is no such resource
  AUDIT_DISABLED: 404,
  SESSION_NOT_FOUND: 404,
  UNKNOWN_BUNDLE: 404,
  UNKNOWN_HOOK: 404,
  UNKNOWN_PROFILE: 404,
  UNKNOWN_EVENT: 404,
  // another client's approval is "not found", exactly like a missing one
  APPROVAL_NOT_FOUND: 404,
  // state conflicts
  DUPLICATE_HOOK: 409,
  VERSION_DOWNGRADE: 409,
  SESSION_EXISTS: 409,
  // only operators can get it: clients always address their own sessions
  SESSION_AMBIGUOUS: 409,
  BUNDLE_QUARANTINED: 409,
  // the first decision stands
  APPROVAL_DECIDED: 409,
  PAYLOAD_TOO_LARGE: 413,
  BUNDLE_TOO_LARGE: 413,
  // the command lane: refusals of an exec hook at install are trust/deployment decisions
  EXEC_DISABLED: 403,
  EXEC_NOT_ALLOWED: 403,
  EXEC_SHELL_DISABLED: 403,
  // a pinned script that changed or cannot start: the server's state is wrong, not the request
  EXEC_HASH_MISMATCH: 500,
  EXEC_SPAWN_FAILED: 500,
  UNSUPPORTED_MEDIA_TYPE: 415,
  RATE_LIMITED: 429,
  SESSION_LIMIT: 429,
  APPROVAL_LIMIT: 429,
  INTERNAL: 500,
  NOT_IMPLEMENTED: 501,
  UNSUPPORTED_NODE: 500,
  SANDBOX_START_FAILED: 500,
  STORE_CORRUPT: 500,
  // start-time refusals: a server never answers with them, but every code is mapped on purpose
  DATA_DIR_LOCKED: 500,
  AUDIT_LOG_CORRUPT: 500,
  // the result was withheld because it could not be audited (disk full, I/O error): retryable later
  AUDIT_WRITE_FAILED: 503,
  SANDBOX_OVERLOADED: 503,
  SANDBOX_CLOSED: 503,
  SHUTTING_DOWN: 503,
};

/** An error the adapter raises itself; carries a server code. */
export class HttpError extends Error {
  override readonly name = "HttpError";
  constructor(
    readonly code: AnyErrorCode,
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(message);
  }
}

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/** Status and body for any thrown value. Unknown errors become INTERNAL without their text. */
export function toHttpError(err: unknown): { status: number; body: ErrorBody; internal: boolean } {
  if (err instanceof VcpError || err instanceof HttpError) {
    let code: string = err.code;
    // The pipeline raises session errors as INVALID_INPUT with the intended code in details.reason
    // until SESSION_NOT_FOUND / SESSION_EXISTS are in ERROR_CODES (src/pipeline/errors.ts).
    const reason = err.details?.reason;
    if (code === "INVALID_INPUT" && (reason === "SESSION_NOT_FOUND" || reason === "SESSION_EXISTS")) code = reason;
    const status = HTTP_STATUS[code as AnyErrorCode] ?? 500;
    return { status, body: { error: { code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) } }, internal: status >= 500 };
  }
  const fastifyCode = (err as { code?: unknown } | null)?.code;
  const statusCode = (err as { statusCode?: unknown } | null)?.statusCode;
  const message = err instanceof Error ? err.message : String(err);
  // fastify's own errors: map the ones a client can cause to stable codes.
  switch (fastifyCode) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return clientError(400, "MALFORMED_JSON", `request body is not valid JSON: ${message.replace(/^Body is not valid JSON but content-type is set to 'application\/json'\s*/, "").slice(0, 200)}`);
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return clientError(400, "MALFORMED_JSON", "request body is empty but content-type is application/json");
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return clientError(413, "PAYLOAD_TOO_LARGE", "request body is too large");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return clientError(415, "UNSUPPORTED_MEDIA_TYPE", message);
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return clientError(400, "INVALID_REQUEST", "request body length does not match Content-Length");
  }
  if (err instanceof SyntaxError) return clientError(400, "MALFORMED_JSON", `request body is not valid JSON: ${message.slice(0, 200)}`);
  if (typeof statusCode === "number" && statusCode >= 400 && statusCode < 500) {
    return clientError(statusCode, statusCode === 413 ? "PAYLOAD_TOO_LARGE" : statusCode === 415 ? "UNSUPPORTED_MEDIA_TYPE" : "INVALID_REQUEST", message);
  }
  return { status: 500, body: { error: { code: "INTERNAL", message: "internal error" } }, internal: true };
}

function clientError(status: number, code: ServerErrorCode, message: string) {
  return { status, body: { error: { code, message } }, internal: false };
}

/**
 * Every code a response can carry, with its HTTP status: THE function the OpenAPI error schemas are
 * generated from. It reads whichever table holds the codes (today ERROR_CODES plus the server's own
 * codes, mapped by HTTP_STATUS), so moving the server codes and statuses into src/errors.ts changes
 * this function only, and the document follows.
 */
export function errorStatusTable(): ReadonlyMap<string, number> {
  const table = new Map<string, number>();
  for (const code of [...Object.keys(ERROR_CODES), ...Object.keys(SERVER_ERROR_CODES)] as AnyErrorCode[]) table.set(code, HTTP_STATUS[code] ?? 500);
  return table;
}

/** The codes answered with `status`, sorted (a stable document). */
export function errorCodesFor(status: number): string[] {
  return [...errorStatusTable()].filter(([, s]) => s === status).map(([code]) => code).sort();
}

/** Every status some code maps to, ascending. */
export function errorStatuses(): number[] {
  return [...new Set(errorStatusTable().values())].sort((a, b) => a - b);
}

const errorBody = (codes: readonly string[], description: string) => ({
  type: "object",
  description,
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string", enum: [...codes] },
        message: { type: "string", description: "what is wrong, naming the field or limit" },
        details: { description: "structured data about the error (field, limit, retry_after_ms, request_id, …)" },
      },
    },
  },
});

/** JSON schema of the error body with every code (the OpenAPI document's `VcpErrorResponse`). */
export const ERROR_SCHEMA = { $id: "VcpErrorResponse", ...errorBody([...errorStatusTable().keys()].sort(), "Any error: { error: { code, message, details } }") };

/** `VcpError<status>`: the error body of one status, its `code` an enum of exactly the codes answered with that status. */
export const ERROR_SCHEMAS_BY_STATUS = errorStatuses().map((status) => ({ $id: `VcpError${status}`, ...errorBody(errorCodesFor(status), `The error answers with HTTP ${status}`) }));
