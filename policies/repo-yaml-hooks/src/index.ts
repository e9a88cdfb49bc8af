/**
 * Repository-local YAML hooks (spec/related/repo-local-yaml-hooks.md): an action receives the hook
 * context and returns the hook result. A `blocking` PreAbilityCall hook that answers
 * `error: "blocked_by_policy"` stops the ability (exit code 2); other results are merged (lists
 * concatenated).
 */

/** The context fields these actions read (§2.3 of the template). */
export interface AbilityContext {
  event_type: string;
  session_id?: string;
  ability_id?: string;
  status?: "success" | "failure" | "skipped";
  duration_ms?: number;
  [key: string]: unknown;
}

/** The result fields these actions write. */
export interface RepoHookResult {
  logs?: Array<{ level: "debug" | "info" | "warn" | "error"; message: string }>;
  messages_to_user?: string[];
  suggested_documents?: Array<{ path: string; reason: string; stage?: string }>;
  error?: string;
}

/** Abilities this repository may call: its own workflows and the read-only knowledge abilities. */
export const ALLOWED_SCOPES = ["workflow.", "billing_", "knowledge."];

/** PreAbilityCall: an ability outside the allowed scopes is blocked. */
export function guardAbilityScope(input: AbilityContext): RepoHookResult {
  const id = input.ability_id ?? "";
  if (ALLOWED_SCOPES.some((p) => id.startsWith(p))) return {};
  return {
    error: "blocked_by_policy",
    messages_to_user: [`${id} is outside this repository's ability scope (${ALLOWED_SCOPES.map((p) => `${p}*`).join(", ")})`],
    logs: [{ level: "warn", message: `blocked ${id}` }],
  };
}

/** PostAbilityCall on a billing ability that ran a minute or more (the manifest's match): point to the runbook. */
export function suggestBillingRunbook(input: AbilityContext): RepoHookResult {
  const minutes = Math.round((input.duration_ms ?? 0) / 60000);
  return {
    suggested_documents: [{ path: "docs/runbooks/billing.md", reason: `${input.ability_id} ${input.status === "failure" ? "failed" : "ran"} after ${minutes} min`, stage: "review" }],
  };
}
