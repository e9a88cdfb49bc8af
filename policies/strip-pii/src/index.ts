import type { HookInput, HookResult, PreInjectEvent, VcpContext } from "vcp-hooks";

/**
 * Spec §9.1 strip_pii_before_inject: redact emails, phone numbers and SSN-like numbers from every
 * string of the context (nested objects and arrays included) and annotate which fields were redacted
 * and how many of each kind — never the values themselves, so the audit record carries no PII.
 */
type Kind = "ssn" | "email" | "phone";

// Order matters: SSN-like numbers first, so the phone pattern does not claim them.
const PATTERNS: ReadonlyArray<readonly [Kind, RegExp]> = [
  ["ssn", /\b\d{3}-\d{2}-\d{4}\b/g],
  ["email", /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g],
  // Candidates only; isPhone() decides (9-15 digits, not an ISO date).
  ["phone", /\+?\(?\d[\d\s().-]{6,}\d/g],
];

function isPhone(candidate: string): boolean {
  const digits = candidate.replace(/\D/g, "").length;
  return digits >= 9 && digits <= 15 && !/^\d{4}-\d{2}-\d{2}$/.test(candidate.trim());
}

function redactString(text: string, counts: Record<Kind, number>): string {
  let out = text;
  for (const [kind, pattern] of PATTERNS) {
    out = out.replace(pattern, (match) => {
      if (kind === "phone" && !isPhone(match)) return match;
      counts[kind] += 1;
      return `[${kind}]`;
    });
  }
  return out;
}

/** A redacted deep copy of `value`; `fields` collects the paths of strings that changed. */
function redact(value: unknown, path: string, fields: string[], counts: Record<Kind, number>): unknown {
  if (typeof value === "string") {
    const redacted = redactString(value, counts);
    if (redacted !== value) fields.push(path);
    return redacted;
  }
  if (Array.isArray(value)) return value.map((item, i) => redact(item, `${path}[${i}]`, fields, counts));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = redact(item, `${path}.${key}`, fields, counts);
    return out;
  }
  return value;
}

export function stripPii(input: HookInput<PreInjectEvent>): HookResult {
  const fields: string[] = [];
  const counts: Record<Kind, number> = { ssn: 0, email: 0, phone: 0 };
  const redacted = redact(input.context, "context", fields, counts) as VcpContext;
  if (fields.length === 0) return { status: "continue" };
  vcp.log("info", "redacted PII from context", { fields: fields.length });
  return {
    status: "modify",
    modified_context: redacted,
    annotations: { pii_fields_redacted: fields, pii_redactions: counts },
  };
}
