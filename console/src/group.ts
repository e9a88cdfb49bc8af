/** How the Chains page groups GET /v1/hooks (pure: no DOM, unit-tested). */
export interface Hook {
  name: string;
  type: string;
  priority: number;
  timeout_ms: number;
  action: { bundle: string; export: string; digest?: string };
  condition: unknown;
  enabled: boolean;
  fail_closed: boolean;
  trust: string;
  scope: string;
  session_id?: string;
  profile?: string;
  event?: string;
  matcher?: string;
}

/** A chain per hook type today; per profile and event for hooks that carry those fields (the event-profile framework). */
export function groupOf(hook: Hook): string {
  if (hook.profile !== undefined || hook.event !== undefined) return `${hook.profile ?? "vcp"} · ${hook.event ?? hook.type}`;
  return hook.type;
}
