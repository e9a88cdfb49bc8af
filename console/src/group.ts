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

/**
 * A chain per (profile, event): GET /v1/hooks lists every hook with both. VCP chains keep their
 * type as the heading (a VCP hook is profile `vcp`, its event its type).
 */
export function groupOf(hook: Hook): string {
  if (hook.profile === "vcp" && hook.type !== undefined) return hook.type;
  if (hook.profile !== undefined || hook.event !== undefined) return `${hook.profile ?? "vcp"} · ${hook.event ?? hook.type}`;
  return hook.type;
}
