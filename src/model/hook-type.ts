import { z } from "zod";

/** The six interception points of spec §3, in pipeline order. */
export const HOOK_TYPES = [
  "pre_inject",
  "post_select",
  "on_transition",
  "on_conflict",
  "on_violation",
  "periodic",
] as const;

export const HookTypeSchema = z.enum(HOOK_TYPES);
export type HookType = z.infer<typeof HookTypeSchema>;

export function isHookType(value: unknown): value is HookType {
  return typeof value === "string" && (HOOK_TYPES as readonly string[]).includes(value);
}

/** Trust levels of spec §8.3, most to least privileged. */
export const TRUST_LEVELS = ["system", "deployment", "session"] as const;
export const TrustLevelSchema = z.enum(TRUST_LEVELS);
export type TrustLevel = z.infer<typeof TrustLevelSchema>;

/** Rank for comparisons: a higher rank is more privileged. */
export function trustRank(level: TrustLevel): number {
  return level === "system" ? 2 : level === "deployment" ? 1 : 0;
}

export const SCOPES = ["deployment", "session"] as const;
export const ScopeSchema = z.enum(SCOPES);
export type Scope = z.infer<typeof ScopeSchema>;
