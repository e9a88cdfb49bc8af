export function suggestDocs(input: { ability_id?: string }): Record<string, unknown> {
  return { suggested_documents: [{ path: "docs/runbooks/billing.md", reason: `${input.ability_id} ran slowly` }] };
}

export function logPrompt(input: { user_message?: string }): Record<string, unknown> {
  return { logs: [{ level: "info", message: `prompt of ${(input.user_message ?? "").length} chars` }] };
}
