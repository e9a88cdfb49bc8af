import { VcpError } from "../errors.js";

/**
 * Error codes the pipeline needs, with their README line. Until they are entered in `ERROR_CODES`
 * (src/errors.ts), the errors are raised as `INVALID_INPUT` with the intended code in
 * `details.reason`; switching is a change to this file only.
 */
export const PIPELINE_ERROR_CODES = {
  SESSION_NOT_FOUND: "No open session has that id (it was never opened, or it was closed).",
  SESSION_EXISTS: "A session with that id is already open.",
} as const;

export type PipelineErrorCode = keyof typeof PIPELINE_ERROR_CODES;

export function sessionNotFound(sessionId: string): VcpError {
  return new VcpError("INVALID_INPUT", `session '${sessionId}' is not open`, { reason: "SESSION_NOT_FOUND", session_id: sessionId });
}

export function sessionExists(sessionId: string): VcpError {
  return new VcpError("INVALID_INPUT", `session '${sessionId}' is already open`, { reason: "SESSION_EXISTS", session_id: sessionId });
}

/** A malformed pipeline input; `field` is the wire path, `rule` what it broke. */
export function invalidInput(field: string, rule: string): VcpError {
  return new VcpError("INVALID_INPUT", `${field}: ${rule}`, { field, rule });
}
