import type { ResolvedHook } from "../model/hook.js";

/**
 * The chain order of spec §5.1 / §6.1 (DESIGN §4.2):
 *
 * ```
 *   priority  ─ descending (100 runs before 0)
 *     scope   ─ at equal priority, deployment before session (spec §6.1 MUST)
 *       seq   ─ then registration order, first registered first (spec §5.1.2)
 * ```
 *
 * `seq` is unique across a registry, so this is a strict total order on its hooks and
 * `Array.prototype.sort` gives the same chain whatever order the hooks arrive in.
 *
 * @example
 * ```ts
 * const chain = hooks.filter((h) => h.type === "pre_inject").sort(compareHooks);
 * ```
 */
export function compareHooks(
  a: Pick<ResolvedHook, "priority" | "scope" | "seq">,
  b: Pick<ResolvedHook, "priority" | "scope" | "seq">,
): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.scope !== b.scope) return a.scope === "deployment" ? -1 : 1;
  return a.seq - b.seq;
}
