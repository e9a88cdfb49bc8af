export function guardScope(input: { ability_id?: string }): Record<string, unknown> {
  const id = input.ability_id ?? "";
  if (id.startsWith("workflow.")) return { logs: [{ level: "info", message: `allowed ${id}` }] };
  return { error: "blocked_by_policy", messages_to_user: [`${id} is outside workflow.*`] };
}
