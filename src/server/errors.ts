/**
 * HTTP error mapping: every error leaves the server as `{ "error": { "code", "message", "details" } }`
 * (DESIGN §6.2), with the status of its code in the one error table (ERROR_CODES, src/errors.ts).
 * The server raises VcpError like the rest of the runtime; only fastify's own errors are translated here.
 */
import { ERROR_CODES, HOOK_TYPES, httpStatusOf, pointerPath, VcpError, type ErrorCode } from "../index.js";

export interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/** A route schema failure as fastify's ajv reports it. */
interface ValidationFailure {
  validation: Array<{ instancePath: string; message?: string; params?: unknown }>;
  validationContext?: string;
}

/**
 * Status and body of any error a route can end with: a schema failure (INVALID_REQUEST naming the
 * field, UNKNOWN_HOOK_TYPE for a bad `{type}`, or the route's own code for a bad body), else
 * {@link toHttpError}. The one mapping the error handler and the profile route's fail-closed answer share.
 */
export function describeError(err: unknown, invalidBody?: "INVALID_BUNDLE"): { status: number; body: ErrorBody; internal: boolean } {
  const validation = (err as Partial<ValidationFailure> | null)?.validation;
  if (validation === undefined) return toHttpError(err);
  const context = (err as ValidationFailure).validationContext ?? "body";
  const first = validation[0];
  const field = pointerPath(context, first?.instancePath);
  let code: "INVALID_REQUEST" | "INVALID_BUNDLE" | "UNKNOWN_HOOK_TYPE" = "INVALID_REQUEST";
  if ((context === "params" || context === "querystring") && first?.instancePath === "/type") code = "UNKNOWN_HOOK_TYPE";
  else if (context === "body" && invalidBody !== undefined) code = invalidBody;
  const message = code === "UNKNOWN_HOOK_TYPE" ? `unknown hook type: expected one of ${HOOK_TYPES.join(", ")} (spec §3)` : `${field}: ${first?.message ?? "is invalid"}`;
  return { status: httpStatusOf(code), body: { error: { code, message, details: { field, rule: first?.message, params: first?.params } } }, internal: false };
}

/** Status and body for any thrown value. Unknown errors become INTERNAL without their text. */
export function toHttpError(err: unknown): { status: number; body: ErrorBody; internal: boolean } {
  if (err instanceof VcpError) {
    const status = httpStatusOf(err.code);
    return { status, body: { error: { code: err.code, message: err.message, ...(err.details !== undefined ? { details: err.details } : {}) } }, internal: status >= 500 };
  }
  const fastifyCode = (err as { code?: unknown } | null)?.code;
  const statusCode = (err as { statusCode?: unknown } | null)?.statusCode;
  const message = err instanceof Error ? err.message : String(err);
  // fastify's own errors: map the ones a client can cause to stable codes.
  switch (fastifyCode) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
      return clientError("MALFORMED_JSON", `request body is not valid JSON: ${message.replace(/^Body is not valid JSON but content-type is set to 'application\/json'\s*/, "").slice(0, 200)}`);
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return clientError("MALFORMED_JSON", "request body is empty but content-type is application/json");
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return clientError("PAYLOAD_TOO_LARGE", "request body is too large");
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return clientError("UNSUPPORTED_MEDIA_TYPE", message);
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return clientError("INVALID_REQUEST", "request body length does not match Content-Length");
  }
  if (err instanceof SyntaxError) return clientError("MALFORMED_JSON", `request body is not valid JSON: ${message.slice(0, 200)}`);
  if (typeof statusCode === "number" && statusCode >= 400 && statusCode < 500) {
    return clientError(statusCode === 413 ? "PAYLOAD_TOO_LARGE" : statusCode === 415 ? "UNSUPPORTED_MEDIA_TYPE" : "INVALID_REQUEST", message);
  }
  return { status: httpStatusOf("INTERNAL"), body: { error: { code: "INTERNAL", message: "internal error" } }, internal: true };
}

function clientError(code: ErrorCode, message: string) {
  return { status: httpStatusOf(code), body: { error: { code, message } }, internal: false };
}

/**
 * Every code a response can carry, with its HTTP status: THE function the OpenAPI error schemas are
 * generated from, read from the one error table (ERROR_CODES), so the document follows the table.
 */
export function errorStatusTable(): ReadonlyMap<string, number> {
  return new Map(Object.entries(ERROR_CODES).map(([code, info]) => [code, info.status]));
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
