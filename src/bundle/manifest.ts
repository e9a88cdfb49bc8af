import { join } from "node:path";
import { LineCounter, parseDocument } from "yaml";
import { z } from "zod";
import { VcpError } from "../errors.js";
import { ScopeSchema, TrustLevelSchema } from "../model/hook-type.js";
import { HookDefinitionSchema } from "../model/hook.js";
import { BUNDLE_NAME, EXPORT_NAME } from "../model/names.js";
import { assertPredicateNesting } from "../model/predicate.js";
import { describeIssues } from "../model/zod-errors.js";
import { compileHook } from "../registry/validate.js";
import { hookMatcher, isProfileEvent, MAX_MATCHER_COST, MatcherCostError, profileConditionFields, VCP_PROFILE_ID } from "../profiles/index.js";
import type { CompiledMatcher, EventProfile } from "../profiles/types.js";
import { hookDefinition, hookFields, isVcpManifest, manifestProfile } from "./hooks.js";
import { checkExecShape, ExecBlockSchema } from "./exec-hook.js";
import { INPUT_FILE_BYTES, readInputFile } from "./input-file.js";

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * One hook of a bundle manifest (DESIGN §3.1): the hook-definition schema of spec §4.1
 * (src/model/hook.ts) with two manifest forms. `action` names an export of this bundle (the bundle
 * and digest of the full ActionRef are known only at install); `trust` is the bundle's, not the
 * hook's; `scope` says whether install registers the hook or only offers it to sessions. Derived,
 * not copied, so a field rule changed in the model changes `policy.yaml` and its JSON Schema too.
 */
export const ManifestHookSchema = HookDefinitionSchema.omit({ action: true, trust: true })
  .extend({
    // Required unless the hook is an exec hook (`exec`, checked in parseManifest): exactly one of the two.
    action: z
      .string({ error: "must name an exported function" })
      .regex(EXPORT_NAME.regex, "must be a JavaScript identifier naming an exported function")
      .optional(),
    /** The command lane (PROFILES §6): a pinned script instead of an action; agent profiles only. */
    exec: ExecBlockSchema.optional(),
    scope: ScopeSchema.optional(),
    // Required for `vcp@1` hooks (spec §6.2.4, checked below); 50 when an event-profile hook gives none
    // (PROFILES §8.5), so hooks without one keep registration order.
    priority: HookDefinitionSchema.shape.priority.optional(),
    // Required for `vcp@1` hooks (spec §6.2.5); an event-profile hook without one gets its profile's
    // default timeout, capped at the sandbox's 30 000 ms (PROFILES §3.2: Gemini's 60 s ⇒ 30 s).
    timeout_ms: HookDefinitionSchema.shape.timeout_ms.optional(),
    // `vcp@1` hooks name a `type`; the hooks of any other profile name an `event` instead (PROFILES §2).
    type: HookDefinitionSchema.shape.type.optional(),
    event: z.string({ error: "must be a string naming one of the profile's events" }).min(1).max(128).optional(),
    /** Matched against the event's matcher field (RE2; PROFILES §3.2). Not for `vcp@1`. */
    matcher: z.string({ error: "must be a string (an RE2 pattern)" }).max(1024).optional(),
    /** gemini-cli/llxprt: this definition makes its matching group run sequentially. */
    sequential: z.boolean({ error: "must be a boolean" }).optional(),
    /** repo-yaml `match` filters (PROFILES §8.8), compiled by the profile's `compileFilter` at build and install. */
    match: z.unknown().optional(),
    /** repo-yaml: a `blocking` hook's `blocked_by_policy` blocks, and so does its failure (PROFILES §8.8). */
    blocking: z.boolean({ error: "must be a boolean" }).optional(),
  })
  .strict();
export type ManifestHook = z.infer<typeof ManifestHookSchema>;

/** `policy.yaml` / the `manifest` of a `.vcpb` (DESIGN §3.1). */
export const ManifestSchema = z
  .object({
    bundle: z.string({ error: "must be a string" }).regex(BUNDLE_NAME.regex, BUNDLE_NAME.rule),
    version: z.string({ error: "must be a string" }).regex(SEMVER, "must be a semantic version (e.g. 1.2.0)"),
    description: z.string().max(4096).optional(),
    trust: TrustLevelSchema.default("session"),
    entry: z.string().optional(),
    limits: z.object({ memory_mb: z.number().int().min(8, "must be at least 8").max(4096).optional() }).strict().optional(),
    isolation: z.enum(["shared", "per_session"]).default("shared"),
    /** Event profile of every hook of the bundle: `name` or `name@version` (PROFILES §8.2). Absent ⇒ `vcp@1`. */
    profile: z.string({ error: "must be a string: <name> or <name>@<version>" }).max(100).optional(),
    hooks: z.array(ManifestHookSchema).min(1, "a bundle declares at least one hook").max(256),
  })
  .strict()
  .superRefine((manifest, ctx) => {
    // spec §6.2.4, §6.2.5: every VCP hook states its priority and timeout (only event-profile hooks default them).
    if (!isVcpManifest(manifest)) return;
    manifest.hooks.forEach((hook, i) => {
      if (hook.priority === undefined) ctx.addIssue({ code: "custom", path: ["hooks", i, "priority"], message: "must be an integer in [0, 100] (spec §6.2.4)" });
      if (hook.timeout_ms === undefined) ctx.addIssue({ code: "custom", path: ["hooks", i, "timeout_ms"], message: "must be an integer in [1, 30000] (spec §6.2.5)" });
    });
  });
export type Manifest = z.infer<typeof ManifestSchema>;
export type ManifestInput = z.input<typeof ManifestSchema>;

/**
 * Validate a manifest: the one validation build, sign, verify and install run. Errors name the file
 * (when given), the path (`hooks[2].timeout_ms`) and the rule broken: `INVALID_BUNDLE` for the shape
 * (every broken field at once), then, hook by hook, the registry's own checks with their codes:
 * `INVALID_HOOK` (e.g. `hooks[0].fail_closed` with session trust) and `INVALID_PREDICATE`
 * (`hooks[1].condition.value`). Each error has `details: { file, problems: [{ field, rule }] }`.
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
        problems: [{ field: `hooks[${index}].name`, rule: `'${hook.name}' is declared twice (hook names are unique within a bundle, spec §6.2.1)` }],
      });
    }
    names.add(hook.name);
    // Exactly one of action and exec (the exec block's own rules are the lane's: exec-hook.ts).
    if (hook.exec !== undefined) checkExecShape(hook, index, file);
    else if (hook.action === undefined) {
      const rule = "must name an exported function (or give exec: a pinned command, for an agent profile's exec hook)";
      throw new VcpError("INVALID_BUNDLE", `${file}: hooks[${index}].action: ${rule}`, { file, problems: [{ field: `hooks[${index}].action`, rule }] });
    }
  });
  const profile = checkProfileFields(parsed.data, file);
  // The registry's own per-hook validation (trust and fail_closed, the condition compiled with the
  // install limits, JSON-only metadata), run on what install will register. Build, sign, verify and
  // install all come through here, so none of them accepts a manifest another refuses. Left to
  // install, because they need its state: names across bundles, the session allowlist, and whether
  // each action is an exported function (build checks that in a real isolate).
  parsed.data.hooks.forEach((hook, index) => {
    const scope = hook.scope ?? "deployment";
    try {
      // A profile hook names no VCP hook type: checked as what it is, by every other rule.
      const vcp = profile.id === VCP_PROFILE_ID;
      compileHook(vcp ? hookDefinition(parsed.data, hook, scope) : hookFields(parsed.data, hook, scope), {
        scope, seq: 0, at: ["hooks", index], profileHook: !vcp,
        // A profile hook's condition reads its event's native input (PROFILES §2).
        ...(profile.id !== VCP_PROFILE_ID && hook.event !== undefined ? { conditionFields: profileConditionFields(profile, hook.event) } : {}),
      });
    } catch (err) {
      throw withFile(err, file);
    }
  });
  return parsed.data;
}

function problem(code: "INVALID_BUNDLE" | "UNKNOWN_PROFILE" | "UNKNOWN_EVENT" | "INVALID_MATCHER", file: string, field: string, rule: string, extra: Record<string, unknown> = {}): VcpError {
  return new VcpError(code, `${file}: ${field}: ${rule}`, { file, ...extra, problems: [{ field, rule }] });
}

/**
 * PROFILES §2 manifest rules: the profile is catalogued; `vcp@1` hooks have a `type` and none of the
 * profile fields; other profiles' hooks have an `event` of that profile (no `type`), a matcher the
 * profile compiles (RE2: a bad pattern is an error naming the hook, never a silent exact match),
 * `sequential` only where the profile runs per definition, and no session scope.
 */
function checkProfileFields(manifest: Manifest, file: string): EventProfile {
  let profile: EventProfile;
  try {
    profile = manifestProfile(manifest);
  } catch (err) {
    if (err instanceof VcpError) throw problem("UNKNOWN_PROFILE", file, "profile", err.message, { profile: manifest.profile });
    throw err;
  }
  manifest.hooks.forEach((hook, i) => {
    const at = `hooks[${i}]`;
    if (hook.exec !== undefined && profile.parseCommandResult === undefined) {
      throw problem("INVALID_BUNDLE", file, `${at}.exec`, `profile ${profile.id} has no command hooks to run (exec hooks are for the agent profiles: gemini-cli, llxprt, claude-code, ai-memory); use an action`);
    }
    if (profile.id === VCP_PROFILE_ID) {
      if (hook.type === undefined) throw problem("INVALID_BUNDLE", file, `${at}.type`, "must be one of the six hook types (spec §6.2.3)");
      for (const field of ["event", "matcher", "sequential", "match", "blocking"] as const) {
        if (hook[field] !== undefined) throw problem("INVALID_BUNDLE", file, `${at}.${field}`, `only for bundles of an event profile other than vcp@1 (set profile:; vcp@1 hooks use type and condition)`);
      }
      return;
    }
    if (hook.type !== undefined) throw problem("INVALID_BUNDLE", file, `${at}.type`, `a ${profile.id} hook names an event, not a VCP hook type (PROFILES §2)`);
    if (hook.event === undefined) throw problem("INVALID_BUNDLE", file, `${at}.event`, `required: one of the events of profile ${profile.id}: ${Object.keys(profile.events).join(", ")}`);
    if (!isProfileEvent(profile, hook.event)) {
      throw problem("UNKNOWN_EVENT", file, `${at}.event`, `'${hook.event}' is not an event of profile ${profile.id}; its events: ${Object.keys(profile.events).join(", ")}`, { profile: profile.id, event: hook.event, hook: hook.name });
    }
    if (hook.scope === "session" && hook.exec !== undefined) {
      // SECURITY: scripts run unsandboxed with the server's user: never something a session registers (PROFILES §6).
      throw new VcpError("EXEC_NOT_ALLOWED", `${file}: ${at}.scope: exec hook '${hook.name}' cannot be registered per session (the command lane takes deployment hooks of system-trust bundles only)`, {
        file, hook: hook.name, scope: "session", problems: [{ field: `${at}.scope`, rule: "exec hooks cannot be registered per session" }],
      });
    }
    if (hook.scope === "session") throw problem("INVALID_BUNDLE", file, `${at}.scope`, `session-scope hooks are not supported for profile ${profile.id}; a session-trust bundle's hooks observe (spec §8.3)`);
    if (hook.sequential !== undefined && profile.execution !== "per_definition") {
      throw problem("INVALID_BUNDLE", file, `${at}.sequential`, `profile ${profile.id} runs its hooks ${profile.execution === "sequential" ? "sequentially" : "in parallel"} always; sequential is only for profiles whose definitions choose (gemini-cli, llxprt)`);
    }
    if (hook.timeout_ms !== undefined && hook.timeout_ms > profile.timeouts.max_ms) {
      throw problem("INVALID_BUNDLE", file, `${at}.timeout_ms`, `must be at most ${profile.timeouts.max_ms} for profile ${profile.id}`);
    }
    let matcher: CompiledMatcher;
    try {
      matcher = profile.compileMatcher(hook.matcher, hook.event);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw problem("INVALID_MATCHER", file, `${at}.matcher`, `hook '${hook.name}': ${why}`, { hook: hook.name, matcher: hook.matcher });
    }
    let filter: CompiledMatcher | undefined;
    if (hook.match !== undefined) {
      if (profile.compileFilter === undefined) {
        throw problem("INVALID_BUNDLE", file, `${at}.match`, `profile ${profile.id} has no match filters (only repo-yaml hooks take match; use matcher or a condition)`);
      }
      try {
        filter = profile.compileFilter(hook.match, hook.event);
      } catch (err) {
        // The profile names the field (`match.ability_scope: …`); the error names it under the hook.
        const why = err instanceof Error ? err.message : String(err);
        const field = /^(match(?:[.[][^:\s]*)?): /.exec(why);
        const path = field !== null ? `${at}.${field[1]}` : `${at}.match`;
        const rule = field !== null ? why.slice(field[0].length) : why;
        throw problem("INVALID_MATCHER", file, path, `hook '${hook.name}': ${rule}`, { hook: hook.name, match: hook.match });
      }
    }
    try {
      hookMatcher(matcher, filter);
    } catch (err) {
      if (!(err instanceof MatcherCostError)) throw err;
      throw problem("INVALID_MATCHER", file, `${at}.${hook.match !== undefined ? "match" : "matcher"}`, `hook '${hook.name}': ${err.message}`, {
        hook: hook.name, limit: "maxMatcherCost", max: MAX_MATCHER_COST, cost: err.cost,
      });
    }
    if (hook.blocking !== undefined && profile.blockingHooks !== true) {
      throw problem("INVALID_BUNDLE", file, `${at}.blocking`, `profile ${profile.id} has no blocking hooks (blocking is a repo-yaml field; use fail_closed)`);
    }
  });
  return profile;
}

/**
 * A registry refusal (INVALID_HOOK, INVALID_PREDICATE) of a manifest hook, reported like the
 * manifest's other problems: same code, the file, `problems: [{ field, rule }]` with
 * `hooks[i].…` paths (so parseManifestYaml adds their line and column).
 */
function withFile(err: unknown, file: string): unknown {
  if (!(err instanceof VcpError) || err.details === undefined) return err;
  const d = err.details;
  const issues = Array.isArray(d["issues"]) ? (d["issues"] as ManifestProblem[]) : undefined;
  const field = typeof d["field"] === "string" ? d["field"] : typeof d["path"] === "string" ? d["path"] : undefined;
  // A predicate's `received` is already a short string rendering (chain/predicate.ts); keep it in the rule.
  const received = err.code === "INVALID_PREDICATE" && typeof d["received"] === "string" ? ` (received ${d["received"]})` : "";
  const problems = issues ?? (field !== undefined ? [{ field, rule: `${String(d["rule"] ?? err.message)}${received}` }] : undefined);
  if (problems === undefined) return err;
  return new VcpError(err.code, `${file}: ${problems.map((p) => `${p.field}: ${p.rule}`).join("; ")}`, { ...d, file, problems }, { cause: err });
}

/** The manifest file of a policy directory (DESIGN §3.1). */
export const MANIFEST_FILE = "policy.yaml";

/** One broken rule of a manifest: `field` is a path like `hooks[2].timeout_ms`; line/column are 1-based. */
export interface ManifestProblem {
  field: string;
  rule: string;
  line?: number;
  column?: number;
}

/**
 * Read and validate `<dir>/policy.yaml` ({@link parseManifest}). Errors are `VcpError`s
 * (`INVALID_BUNDLE`, `INVALID_HOOK`, `INVALID_PREDICATE`) with
 * `details: { file, problems: [{ field, rule, line?, column? }] }`; the message names the file, each
 * path (`hooks[2].timeout_ms`), its line and column, and the rule. YAML syntax errors name the line
 * and column.
 *
 * @example
 * ```ts
 * const manifest = await loadManifestFile("policies/strip-pii");
 * ```
 */
export async function loadManifestFile(dir: string): Promise<Manifest> {
  const file = join(dir, MANIFEST_FILE);
  let text: string;
  try {
    text = (await readInputFile(file, INPUT_FILE_BYTES.manifest, "the manifest")).toString("utf8");
  } catch (err) {
    if (err instanceof VcpError) throw err; // INPUT_FILE_REFUSED: a FIFO, a device, a huge file
    const reason = (err as NodeJS.ErrnoException).code === "ENOENT" ? "file not found" : (err as Error).message;
    throw new VcpError("INVALID_BUNDLE", `${file}: ${reason} (a policy directory holds its manifest in ${MANIFEST_FILE})`, {
      file,
      problems: [{ field: "(file)", rule: reason }],
    });
  }
  return parseManifestYaml(text, file);
}

/**
 * Parse and validate manifest YAML text; `file` is only used in messages. See {@link loadManifestFile}.
 *
 * @example
 * ```ts
 * const manifest = parseManifestYaml("bundle: x\nversion: 1.0.0\nhooks: []\n", "policy.yaml"); // throws: hooks
 * ```
 */
export function parseManifestYaml(text: string, file = MANIFEST_FILE): Manifest {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    const problems: ManifestProblem[] = doc.errors.map((e) => {
      const pos = e.linePos?.[0];
      // The pretty message repeats the position and quotes the source; the first line without it is the rule.
      const rule = (e.message.split("\n")[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, "");
      return { field: "(yaml)", rule: `YAML syntax error: ${rule}`, ...(pos ? { line: pos.line, column: pos.col } : {}) };
    });
    throw new VcpError("INVALID_BUNDLE", `${file}: ${problems.map(formatProblem).join("; ")}`, { file, problems });
  }
  let raw: unknown;
  try {
    // SECURITY: yaml's default maxAliasCount (100) bounds alias expansion ("billion laughs").
    raw = doc.toJS();
  } catch (err) {
    const rule = `YAML error: ${(err as Error).message}`;
    throw new VcpError("INVALID_BUNDLE", `${file}: ${rule}`, { file, problems: [{ field: "(yaml)", rule }] });
  }
  try {
    return parseManifest(raw, file);
  } catch (err) {
    // Manifest problems (INVALID_BUNDLE) and the registry's (INVALID_HOOK, INVALID_PREDICATE) alike.
    if (!(err instanceof VcpError) || !Array.isArray(err.details?.["problems"])) throw err;
    // Add the line and column of each problem: the node at its path, or the nearest enclosing one
    // (a missing key is reported where its parent mapping starts).
    const problems = (err.details["problems"] as ManifestProblem[]).map((p): ManifestProblem => {
      const path = parseFieldPath(p.field);
      // An unknown field is reported where it is written, not where its mapping starts.
      const unknown = /^unknown field\(s\): ([^,]+)/.exec(p.rule)?.[1];
      if (unknown !== undefined) path.push(unknown);
      for (let n = path.length; n >= 0; n--) {
        const node = (n === 0 ? doc.contents : doc.getIn(path.slice(0, n), true)) as { range?: [number, number, number] } | null | undefined;
        if (node?.range != null) {
          const pos = lineCounter.linePos(node.range[0]);
          return { ...p, line: pos.line, column: pos.col };
        }
      }
      return p;
    });
    throw new VcpError(err.code, `${file}: ${problems.map(formatProblem).join("; ")}`, { ...err.details, file, problems }, { cause: err });
  }
}

function formatProblem(p: ManifestProblem): string {
  const where = p.line !== undefined ? ` (line ${p.line}, column ${p.column ?? 1})` : "";
  return p.field === "(yaml)" ? `line ${p.line ?? "?"}, column ${p.column ?? "?"}: ${p.rule}` : `${p.field}${where}: ${p.rule}`;
}

/** `hooks[2].timeout_ms` → `["hooks", 2, "timeout_ms"]`; `(root)` → `[]`. */
function parseFieldPath(field: string): Array<string | number> {
  if (field.startsWith("(")) return [];
  const out: Array<string | number> = [];
  for (const m of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    if (m[2] !== undefined) out.push(Number(m[2]));
    else if (m[1] !== undefined) out.push(m[1]);
  }
  return out;
}

/**
 * The JSON Schema (draft 2020-12) of `policy.yaml`, generated from {@link ManifestSchema} so it
 * cannot drift; committed as `schemas/policy.schema.json` for editors (DESIGN §3.1). Input form:
 * fields with defaults are optional.
 *
 * @example
 * ```ts
 * writeFileSync("schemas/policy.schema.json", renderManifestJsonSchema());
 * ```
 */
export function manifestJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(ManifestSchema, { io: "input", target: "draft-2020-12" }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  // parseManifest's profile rule, for editors: vcp@1 hooks need a `type`, other profiles' an `event`.
  const requireInHooks = (...fields: string[]) => ({ properties: { hooks: { items: { required: fields } } } });
  // parseManifest's exec rule: each hook has exactly one of `action` and `exec` (PROFILES §6).
  const hooks = (rest["properties"] as { hooks: { items: Record<string, unknown> } }).hooks;
  hooks.items = { ...hooks.items, oneOf: [{ required: ["action"] }, { required: ["exec"] }] };
  return {
    $schema,
    title: "vcp-hooks policy bundle manifest (policy.yaml)",
    description: "A policy bundle manifest: DESIGN §3.1 of vcp-hooks, hook fields of VCP Hook System spec §4.1 (event profiles: PROFILES §2). Generated from src/bundle/manifest.ts; do not edit.",
    ...rest,
    if: { anyOf: [{ not: { required: ["profile"] } }, { properties: { profile: { pattern: `^${VCP_PROFILE_ID}(@.*)?$` } } }] },
    then: requireInHooks("type", "priority", "timeout_ms"),
    else: requireInHooks("event"),
  };
}

/** {@link manifestJsonSchema} as the exact text of `schemas/policy.schema.json` (2-space JSON, newline). */
export function renderManifestJsonSchema(): string {
  return `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`;
}
