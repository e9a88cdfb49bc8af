/**
 * Every name pattern of vcp-hooks in one place: hook, bundle and export names, key ids, session ids,
 * allowlist entries and digests. Each is one {@link NamePattern}: the regex code tests with, the
 * JSON Schema `pattern` the HTTP routes use, and the rule in the words error messages give, built
 * from one source string so the three cannot drift. Names often become file names, log fields and
 * isolate keys: SECURITY: the patterns admit no path separator (except the allowlist's one `/`),
 * no whitespace and nothing unbounded.
 */

export interface NamePattern {
  /** Anchored regex for code. */
  readonly regex: RegExp;
  /** The same rule as a JSON Schema `pattern` (anchored). */
  readonly pattern: string;
  /** The rule as an error message says it: `must match [a-z0-9_-]{1,64}`. */
  readonly rule: string;
}

function namePattern(body: string): NamePattern {
  return Object.freeze({ regex: new RegExp(`^${body}$`), pattern: `^${body}$`, rule: `must match ${body}` });
}

const NAME = "[a-z0-9_-]{1,64}";

/** A hook's name (spec §6.2.2). */
export const HOOK_NAME = namePattern(NAME);
/** A policy bundle's name: also a file name in the data directory. */
export const BUNDLE_NAME = namePattern(NAME);
/** An entry of `session_hook_allowlist`: `bundle/hook`. */
export const SESSION_HOOK_REF = namePattern(`${NAME}/${NAME}`);
/** What an action's `export` may be: a JavaScript identifier (the name of an exported function). */
export const EXPORT_NAME = namePattern("[A-Za-z_$][A-Za-z0-9_$]{0,127}");
/** A signing key's `key_id`: short, printable, safe in file names and logs. */
export const KEY_ID = namePattern("[A-Za-z0-9._-]{1,128}");
/** A session id (DESIGN §6.2 `/v1/sessions/{id}`): printable, no spaces or slashes. */
export const SESSION_ID = namePattern("[A-Za-z0-9._:-]{1,256}");
/** A content digest (bundles, constitutions). */
export const DIGEST = namePattern("sha256:[0-9a-f]{64}");
/** A plain JavaScript identifier: a path segment written `a.b` rather than `a["b"]`. */
export const IDENTIFIER = namePattern("[A-Za-z_$][A-Za-z0-9_$]*");
/**
 * A replica's id (issue 18, store/replica-id.ts): in every audit record, its heartbeat and leases.
 * Room for a Kubernetes pod name or a host name; no slashes or spaces (log lines, key parts).
 */
export const REPLICA_ID = namePattern("[A-Za-z0-9._-]{1,128}");
