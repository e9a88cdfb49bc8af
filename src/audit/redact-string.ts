/**
 * The secret-shape scrubber for free text, with no dependencies: the audit redactor (./redact.ts), the
 * command lane's stderr (src/pool/exec/) and the `vcp-hooks hook` adapter's stderr all use it. Kept
 * apart from ./redact.ts so that a light entry does not load pino.
 */

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
  // JSON Web Tokens: base64url header and payload that both start with `{"` (eyJ). One cut off before
  // its signature at the end of a text is redacted too, like an unterminated PEM key (see redactHead).
  { name: "jwt", pattern: /\beyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}(?:\.[A-Za-z0-9_-]*|$)/g, replace: "[REDACTED:jwt]" },
  // OpenAI / Anthropic style keys: sk-…, sk-proj-…, sk-ant-api03-…
  { name: "sk", pattern: /\bsk-[A-Za-z0-9][A-Za-z0-9_-]{15,}/g, replace: "[REDACTED:api-key]" },
  // AWS access key ids (long-term AKIA, temporary ASIA).
  { name: "aws", pattern: /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, replace: "[REDACTED:aws-key]" },
  // GitHub and Slack tokens.
  { name: "github", pattern: /\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})/g, replace: "[REDACTED:github-token]" },
  { name: "slack", pattern: /\bxox[abprs]-[A-Za-z0-9-]{10,}/g, replace: "[REDACTED:slack-token]" },
];

/**
 * A literal every shape above starts with (matched ignoring case: a superset of each pattern's own
 * start). A string without one cannot match any shape, so the eight replaces are skipped: most audit
 * payload strings (keys, hook reasons, short values) take this path. Keep it in step with SHAPES: the
 * property test in test/unit/audit/redact.test.ts checks that skipping never changes a result.
 */
const ANY_SHAPE = /-----BEGIN |bearer|basic|eyJ|sk-|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abprs]-/i;

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
  if (!ANY_SHAPE.test(text)) return text;
  return redactAllShapes(text);
}

/**
 * Characters {@link redactHead} reads past what its caller keeps. Every shape above is still matched
 * when the text is cut inside it — the token patterns by any long enough start of the token, a PEM key
 * and a JWT by their "cut off at the end" forms — so a secret that starts in the kept part is redacted
 * even when it runs past the lookahead. A secret's start longer than this (a PEM header of thousands
 * of characters, a JWT header of thousands) is shown as it is: no key material is in it.
 */
export const REDACT_LOOKAHEAD = 4096;

/**
 * {@link redactString} for a caller that keeps at most `keep` characters of the result: reads no more
 * than `keep + REDACT_LOOKAHEAD` characters of `text`, so a 10 MB text costs what a short one costs.
 * SECURITY: the limit applies before the work; the result's first `keep` characters never show a
 * secret that redacting the whole text would hide (the shapes survive the cut, see REDACT_LOOKAHEAD).
 * Text past the lookahead is dropped: an unterminated secret is redacted to the end of the head.
 * Does not truncate to `keep` itself.
 *
 * @example
 * ```ts
 * redactHead(`Bearer abc.def ${"x".repeat(10_000_000)}`, 1000); // "Bearer [REDACTED] xxx…" (5,099 characters)
 * ```
 */
export function redactHead(text: string, keep: number): string {
  const scan = keep + REDACT_LOOKAHEAD;
  return redactString(text.length > scan ? text.slice(0, scan) : text);
}

/** Every replace, without the prefilter (exported for the test that keeps ANY_SHAPE honest). */
export function redactAllShapes(text: string): string {
  let out = text;
  for (const { pattern, replace } of SHAPES) {
    pattern.lastIndex = 0;
    out = out.replace(pattern, replace);
  }
  return out;
}
