import { VcpError } from "../errors.js";

/* The pipeline's errors; their codes, statuses and meanings live in ERROR_CODES (src/errors.ts). */

export function sessionNotFound(sessionId: string): VcpError {
  return new VcpError("SESSION_NOT_FOUND", `session '${sessionId}' is not open`, { session_id: sessionId });
}

export function sessionExists(sessionId: string): VcpError {
  return new VcpError("SESSION_EXISTS", `session '${sessionId}' is already open`, { session_id: sessionId });
}

/** Only callers that see every owner get this (operators, the embedding application): naming owners leaks nothing to them. */
export function sessionAmbiguous(sessionId: string, owners: readonly (string | null)[]): VcpError {
  return new VcpError(
    "SESSION_AMBIGUOUS",
    `session '${sessionId}' is open for ${owners.length} owners (${owners.map((o) => (o === null ? "the embedding application" : `'${o}'`)).join(", ")}); say which with owner`,
    { session_id: sessionId, owners: [...owners] },
  );
}

/** A malformed pipeline input; `field` is the wire path, `rule` what it broke. */
export function invalidInput(field: string, rule: string): VcpError {
  return new VcpError("INVALID_INPUT", `${field}: ${rule}`, { field, rule });
}

export function sessionLimit(owner: string, limit: number): VcpError {
  return new VcpError("SESSION_LIMIT", `principal '${owner}' already has ${limit} open session(s), the most allowed (limits.sessions_per_client); close one first`, { principal: owner, limit });
}
