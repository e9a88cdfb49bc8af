import { z } from "zod";
import { HOOK_TYPES, HookTypeSchema, ScopeSchema, TrustLevelSchema } from "./hook-type.js";
import { PredicateSchema } from "./predicate.js";
import { BUNDLE_NAME, EXPORT_NAME, HOOK_NAME } from "./names.js";

export const MAX_TIMEOUT_MS = 30_000;
/** Spec §3.6: periodic hooks never fire more often than once per second. */
export const MIN_PERIODIC_INTERVAL_MS = 1_000;
export const DEFAULT_PERIODIC_INTERVAL_MS = 60_000;

/**
 * Where a hook's action lives: an exported function of a loaded policy bundle. The registry asks an
 * `ActionResolver` whether it is callable (spec §6.2.6); the sandbox invokes it.
 */
export const ActionRefSchema = z
  .object({
    bundle: z.string().regex(BUNDLE_NAME.regex, `bundle name ${BUNDLE_NAME.rule}`),
    export: z.string().regex(EXPORT_NAME.regex, "must be a JavaScript identifier"),
    /** Content digest of the bundle revision the action belongs to (set by the bundle layer). */
    digest: z.string().optional(),
  })
  .strict();
export type ActionRef = z.infer<typeof ActionRefSchema>;

/**
 * A hook definition: every field of spec §4.1, plus `fail_closed` (spec §7.4), `trust` (spec §8.3)
 * and `action` as a reference into a bundle. Each field carries the rule it enforces in its message,
 * so a registration error names the field and the rule (spec §6.2: "a descriptive error").
 */
export const HookDefinitionSchema = z
  .object({
    name: z
      .string({ error: "must be a string" })
      .regex(HOOK_NAME.regex, `${HOOK_NAME.rule} (spec §6.2.2)`),
    type: z.enum(HOOK_TYPES, { error: "must be one of the six hook types (spec §6.2.3)" }),
    priority: z
      .number({ error: "must be an integer in [0, 100] (spec §6.2.4)" })
      .int("must be an integer in [0, 100] (spec §6.2.4)")
      .min(0, "must be an integer in [0, 100] (spec §6.2.4)")
      .max(100, "must be an integer in [0, 100] (spec §6.2.4)"),
    timeout_ms: z
      .number({ error: "must be an integer in [1, 30000] (spec §6.2.5)" })
      .int("must be an integer in [1, 30000] (spec §6.2.5)")
      .min(1, "must be an integer in [1, 30000] (spec §6.2.5)")
      .max(MAX_TIMEOUT_MS, "must be an integer in [1, 30000] (spec §5.4.5)"),
    action: ActionRefSchema,
    condition: PredicateSchema.nullable().optional(),
    enabled: z.boolean({ error: "must be a boolean" }).optional(),
    description: z.string({ error: "must be a string" }).max(4096).optional(),
    metadata: z.record(z.string(), z.unknown(), { error: "must be a map of string keys" }).optional(),
    fail_closed: z.boolean({ error: "must be a boolean" }).optional(),
    trust: TrustLevelSchema.optional(),
  })
  .strict();

/** A hook definition as given by a caller (wire form, snake_case). */
export type HookDefinition = z.input<typeof HookDefinitionSchema>;

/**
 * A hook definition of an event-profile bundle (bundle/hooks.ts builds it from a manifest; the
 * registry compiles it): the registry's definition plus its event, matcher, `sequential`, `match`
 * and `blocking`.
 */
export type ProfileHookDefinition = Omit<HookDefinition, "type"> & { event: string; matcher?: string; sequential?: boolean; match?: unknown; blocking?: boolean; exec?: ExecCommand };

/** A validated hook definition with defaults applied; what the registry stores. Deeply frozen. */
export interface ResolvedHook {
  readonly name: string;
  /** VCP hooks only: the hook type (spec §3), its event. An event-profile hook has `profile` and `event` instead. */
  readonly type?: z.infer<typeof HookTypeSchema>;
  readonly priority: number;
  readonly timeout_ms: number;
  readonly action: Readonly<ActionRef>;
  readonly condition: import("./predicate.js").Predicate | null;
  readonly enabled: boolean;
  readonly description?: string;
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly fail_closed: boolean;
  readonly trust: z.infer<typeof TrustLevelSchema>;
  readonly scope: z.infer<typeof ScopeSchema>;
  /** Session the hook is registered for; only for `scope: "session"`. */
  readonly session_id?: string;
  /** Monotonic registration sequence number: the tiebreak of spec §5.1.2. */
  readonly seq: number;
  /**
   * Event-profile hooks only (PROFILES §2; absent for `vcp@1`): the profile id, its event, the
   * definition's matcher and `sequential`. The registry keys it by (profile, event); it has no `type`.
   */
  readonly profile?: string;
  readonly event?: string;
  readonly matcher?: string;
  readonly sequential?: boolean;
  /** repo-yaml `match` filters as written (compiled by the profile's `compileFilter` when planned). */
  readonly match?: unknown;
  /** repo-yaml `blocking` (PROFILES §8.8): its `blocked_by_policy`, or its failure, blocks. */
  readonly blocking?: boolean;
  /**
   * Exec hooks only (the command lane, PROFILES §6): the pinned script this hook runs instead of a
   * sandboxed action. Such a hook's `action.export` is {@link EXEC_ACTION}, a placeholder no bundle
   * exports; it never reaches the sandbox.
   */
  readonly exec?: ExecCommand;
}

/**
 * The event a hook is registered for: an event-profile hook's `event`, a VCP hook's type (its event,
 * spec §3). Every resolved hook has one of the two (registry/validate.ts `compileHook`).
 *
 * @example
 * ```ts
 * hookEventOf({ type: "pre_inject" }); // "pre_inject"
 * ```
 */
export function hookEventOf(hook: Pick<ResolvedHook, "type" | "event">): string {
  return hook.event ?? hook.type!;
}

/** The pinned command of an exec hook (bundle/exec-hook.ts validates it; pool/exec/ runs it). */
export interface ExecCommand {
  /** Absolute path of the executable, or with `shell: true` a shell string. */
  readonly command: string;
  /** Lowercase hex SHA-256 of the executable (of the string for a shell command). */
  readonly sha256: string;
  readonly args?: readonly string[];
  readonly cwd?: string;
  readonly shell?: boolean;
}

/** `action.export` of an exec hook: it names no export; the hook runs its `exec` command. */
export const EXEC_ACTION = "__exec";

/** The `interval_ms` of a periodic hook, clamped to spec §3.6's once-per-second floor. */
export function periodicIntervalMs(hook: Pick<ResolvedHook, "metadata">): number {
  const raw = hook.metadata["interval_ms"];
  const interval = typeof raw === "number" && Number.isFinite(raw) ? Math.trunc(raw) : DEFAULT_PERIODIC_INTERVAL_MS;
  return Math.max(MIN_PERIODIC_INTERVAL_MS, interval);
}
