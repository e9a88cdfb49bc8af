/*
 * Redaction for audit payloads, guest log lines and the operational log (src/observe/logger.ts).
 * No I/O and no pino: the sandbox workers import this module.
 */

/** Replaces the value of a configured key. */
export const REDACTED = "[REDACTED]";


/*
 * Secret shapes found inside strings, replaced wherever they occur. Each pattern is linear: no nested
 * quantifiers, so a hostile string cannot make redaction slow.
 */
const SHAPES: ReadonlyArray<{ name: string; pattern: RegExp; replace: string }> = [
  // A PEM private key; an unterminated one (cut off) is redacted to the end of the string.
  {
    name: "pem",
    pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----|[\s\S]*$)/g,
    replace: "[REDACTED:private-key]",
  },
  { name: "bearer", pattern: /\b(Bearer)\s+[A-Za-z0-9\-._~+/]+=*/gi, replace: "$1 [REDACTED]" },
  { name: "basic", pattern: /\b(Basic)\s+[A-Za-z0-9+/]{8,}=*/g, replace: "$1 [REDACTED]" },
  // JSON Web Tokens: base64url header and payload that both start with `{"` (eyJ).
  { name: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g, replace: "[REDACTED:jwt]" },
  // OpenAI / Anthropic style keys: sk-…, sk-proj-…, sk-ant-api03-…
  { name: "sk", pattern: /\bsk-[A-Za-z0-9][A-Za-z0-9_-]{15,}/g, replace: "[REDACTED:api-key]" },
  // AWS access key ids (long-term AKIA, temporary ASIA).
  { name: "aws", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, replace: "[REDACTED:aws-key]" },
  // GitHub and Slack tokens.
  { name: "github", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g, replace: "[REDACTED:github-token]" },
  { name: "slack", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, replace: "[REDACTED:slack-token]" },
];

export interface RedactorOptions {
  /** Keys whose values are replaced wholesale, matched at any depth, ignoring case, `-` and `_`. */
  keys: readonly string[];
  /** Strings longer than this are cut AFTER redaction; default 4096. */
  maxStringLength?: number;
  /** Nesting deeper than this is replaced by "[MaxDepth]"; default 32. */
  maxDepth?: number;
}

/** Returns a redacted copy; never changes its argument. */
export type Redactor = (value: unknown) => unknown;

const normalizeKey = (key: string) => key.toLowerCase().replace(/[-_\s]/g, "");

/**
 * Replace the secret shapes (PEM private keys, Bearer/Basic credentials, JWTs, `sk-…` and AWS `AKIA…`
 * keys, GitHub and Slack tokens) inside one string. Does not truncate.
 *
 * @example
 * ```ts
 * redactString("Authorization: Bearer abc.def"); // "Authorization: Bearer [REDACTED]"
 * ```
 */
export function redactString(text: string): string {
  let out = text;
  for (const { pattern, replace } of SHAPES) {
    pattern.lastIndex = 0;
    out = out.replace(pattern, replace);
  }
  return out;
}

/**
 * Build a redactor for audit payloads and log fields: configured keys are replaced at any depth,
 * secret shapes are replaced inside every string (keys of objects included), then long strings are
 * truncated. SECURITY: redaction runs before truncation, so a secret cannot escape the patterns by
 * being cut in half. Cycles become "[Circular]"; functions and symbols are dropped; the result is
 * plain JSON data.
 *
 * @example
 * ```ts
 * const redact = createRedactor({ keys: ["password", "authorization"] });
 * redact({ user: "a", password: "hunter2", note: "key sk-abcdefghijklmnop1234" });
 * // { user: "a", password: "[REDACTED]", note: "key [REDACTED:api-key]" }
 * ```
 */
export function createRedactor(options: RedactorOptions): Redactor {
  const keys = new Set(options.keys.map(normalizeKey));
  const maxString = options.maxStringLength ?? 4096;
  const maxDepth = options.maxDepth ?? 32;

  const str = (text: string): string => truncate(redactString(text), maxString);

  function walk(value: unknown, depth: number, ancestors: Set<object>): unknown {
    if (typeof value === "string") return str(value);
    if (value === null || typeof value === "number" || typeof value === "boolean") return value;
    if (typeof value === "bigint") return value.toString();
    if (typeof value !== "object") return undefined; // undefined, function, symbol
    if (ancestors.has(value)) return "[Circular]";
    if (depth >= maxDepth) return "[MaxDepth]";
    if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString();
    if (ArrayBuffer.isView(value)) return `[Binary ${value.byteLength} bytes]`;
    ancestors.add(value);
    try {
      if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1, ancestors) ?? null);
      const source: Record<string, unknown> =
        value instanceof Error ? errorFields(value) : (value as Record<string, unknown>);
      const out: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(source)) {
        const safeKey = str(key);
        if (keys.has(normalizeKey(key))) {
          out[safeKey] = REDACTED;
          continue;
        }
        const redacted = walk(v, depth + 1, ancestors);
        if (redacted !== undefined) out[safeKey] = redacted;
      }
      return out;
    } finally {
      ancestors.delete(value);
    }
  }

  return (value: unknown) => walk(value, 0, new Set());
}

/** An Error's message and stack are not enumerable; keep them (redacted) along with its own fields. */
function errorFields(error: Error): Record<string, unknown> {
  return { ...(error as unknown as Record<string, unknown>), type: error.name, message: error.message, stack: error.stack };
}

function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = max;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--; // do not split a surrogate pair
  return `${text.slice(0, cut)}…[truncated ${text.length - cut} chars]`;
}
