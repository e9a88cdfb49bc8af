import { z } from "zod";
import { VcpError } from "../errors.js";
import { HOOK_TYPES, ScopeSchema, TrustLevelSchema } from "../model/hook-type.js";
import { HOOK_NAME_PATTERN, MAX_TIMEOUT_MS } from "../model/hook.js";
import { assertPredicateNesting, PredicateSchema } from "../model/predicate.js";
import { describeIssues } from "../model/zod-errors.js";

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/** One hook of a bundle manifest (DESIGN §3.1): spec §4.1 fields, `action` names an export. */
export const ManifestHookSchema = z
  .object({
    name: z.string({ error: "must be a string" }).regex(HOOK_NAME_PATTERN, "must match [a-z0-9_-]{1,64} (spec §6.2.2)"),
    type: z.enum(HOOK_TYPES, { error: "must be one of the six hook types (spec §6.2.3)" }),
    action: z
      .string({ error: "must name an exported function" })
      .regex(/^[A-Za-z_$][A-Za-z0-9_$]{0,127}$/, "must be a JavaScript identifier naming an exported function"),
    priority: z.number({ error: "must be an integer in [0, 100] (spec §6.2.4)" }).int("must be an integer in [0, 100] (spec §6.2.4)").min(0, "must be an integer in [0, 100] (spec §6.2.4)").max(100, "must be an integer in [0, 100] (spec §6.2.4)"),
    timeout_ms: z.number({ error: "must be an integer in [1, 30000] (spec §6.2.5)" }).int("must be an integer in [1, 30000] (spec §6.2.5)").min(1, "must be an integer in [1, 30000] (spec §6.2.5)").max(MAX_TIMEOUT_MS, "must be an integer in [1, 30000] (spec §5.4.5)"),
    fail_closed: z.boolean({ error: "must be a boolean" }).optional(),
    enabled: z.boolean({ error: "must be a boolean" }).optional(),
    scope: ScopeSchema.optional(),
    condition: PredicateSchema.nullable().optional(),
    description: z.string().max(4096).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();
export type ManifestHook = z.infer<typeof ManifestHookSchema>;

/** `policy.yaml` / the `manifest` of a `.vcpb` (DESIGN §3.1). */
export const ManifestSchema = z
  .object({
    bundle: z.string({ error: "must be a string" }).regex(/^[a-z0-9_-]{1,64}$/, "must match [a-z0-9_-]{1,64}"),
    version: z.string({ error: "must be a string" }).regex(SEMVER, "must be a semantic version (e.g. 1.2.0)"),
    description: z.string().max(4096).optional(),
    trust: TrustLevelSchema.default("session"),
    entry: z.string().optional(),
    limits: z.object({ memory_mb: z.number().int().min(8, "must be at least 8").max(4096).optional() }).strict().optional(),
    isolation: z.enum(["shared", "per_session"]).default("shared"),
    hooks: z.array(ManifestHookSchema).min(1, "a bundle declares at least one hook").max(256),
  })
  .strict();
export type Manifest = z.infer<typeof ManifestSchema>;
export type ManifestInput = z.input<typeof ManifestSchema>;

/**
 * Validate a manifest. Errors name the file (when given), the path (`hooks[2].timeout_ms`) and the
 * rule broken, every broken field at once.
 *
 * @example
 * ```ts
 * const manifest = parseManifest(YAML.parse(text), "policies/strip-pii/policy.yaml");
 * ```
 */
export function parseManifest(raw: unknown, file = "manifest"): Manifest {
  // SECURITY: bound predicate recursion before zod's recursive schema sees the value.
  const rawHooks = (raw as { hooks?: unknown } | null)?.hooks;
  if (Array.isArray(rawHooks)) {
    rawHooks.forEach((hook: unknown, i) => assertPredicateNesting((hook as { condition?: unknown } | null)?.condition, `hooks[${i}].condition`));
  }
  const parsed = ManifestSchema.safeParse(raw);
  if (!parsed.success) {
    const problems = describeIssues(parsed.error);
    throw new VcpError(
      "INVALID_BUNDLE",
      `${file}: ${problems.map((p) => `${p.field}: ${p.rule}`).join("; ")}`,
      { file, problems },
    );
  }
  const names = new Set<string>();
  parsed.data.hooks.forEach((hook, index) => {
    if (names.has(hook.name)) {
      throw new VcpError("INVALID_BUNDLE", `${file}: hooks[${index}].name: '${hook.name}' is declared twice (names are unique within a scope, spec §6.2.1)`, {
        file,
        problems: [{ field: `hooks[${index}].name`, rule: "unique within the bundle" }],
      });
    }
    names.add(hook.name);
  });
  return parsed.data;
}
