import type { z } from "zod";
import { compilePredicate, type ConditionFields, type PredicateOptions } from "../chain/predicate.js";
import { VcpError } from "../errors.js";
import type { Scope } from "../model/hook-type.js";
import { HookDefinitionSchema, type ResolvedHook } from "../model/hook.js";
import { HOOK_NAME } from "../model/names.js";
import { assertPredicateNesting } from "../model/predicate.js";
import { formatPath } from "../model/zod-errors.js";
import { describeReceived, toFrozenJson } from "./json.js";
import type { ActionResolver } from "./types.js";

/** An event-profile hook's definition: every rule of a VCP hook's but `type` (its profile and event say what it is). */
const ProfileHookFieldsSchema = HookDefinitionSchema.omit({ type: true });

type ParsedHook = Omit<z.output<typeof HookDefinitionSchema>, "type"> & { type?: z.output<typeof HookDefinitionSchema>["type"] };

/** What {@link compileHook} needs besides the definition. */
export interface CompileHookContext {
  scope: Scope;
  sessionId?: string;
  seq: number;
  resolveAction?: ActionResolver;
  predicateOptions?: PredicateOptions;
  /**
   * The paths the hook's condition may name: an event-profile hook's resolve against its event's
   * native input (profiles/common/condition-fields.ts). Default: VCP's HookInput roots (spec §4.4).
   */
  conditionFields?: ConditionFields;
  /**
   * An event-profile hook (PROFILES §2): the definition names no VCP hook type — its profile and event,
   * which the caller adds, say what it is — and is checked by every other rule. Default: a VCP hook,
   * whose `type` is required.
   */
  profileHook?: boolean;
  /** Runs after the shape is known, before the costlier checks (the allowlist, spec §8.2.1). */
  admit?: (parsed: ParsedHook) => void;
  /**
   * Where the definition sits in the document it came from, e.g. `["hooks", 2]` for a manifest's
   * third hook: error fields are prefixed with it (`hooks[2].fail_closed`), so a bundle manifest can
   * run this same validation and still name the hook. Default: none (`fail_closed`).
   */
  at?: readonly PropertyKey[];
}

/**
 * Validates one hook definition against spec §6.2 and the registry's own rules, and returns the
 * deep-frozen hook the registry stores. Uniqueness (§6.2.1) needs the registry's state and is
 * checked by the caller.
 *
 * Order: shape (zod) → `admit` (allowlist) → trust rules → condition (§6.2.7) → action (§6.2.6).
 * Errors: INVALID_HOOK `{field, rule, received}`, INVALID_PREDICATE from `compilePredicate`
 * unchanged, ACTION_NOT_CALLABLE `{field: "action", rule, bundle, export}`.
 *
 * @example
 * ```ts
 * const hook = compileHook(def, { scope: "deployment", seq: 1 });
 * hook.trust; // "session" unless the definition asked for more
 * ```
 */
export function compileHook(def: unknown, ctx: CompileHookContext): ResolvedHook {
  const at = ctx.at ?? [];
  const parsed = parseHookDefinition(def, at, ctx.profileHook === true);
  ctx.admit?.(parsed);

  // DESIGN §3.4: a session-scope hook runs with session trust whatever it asks for; spec §8.3: the
  // default is the most restrictive level, elevation is explicit.
  const trust = ctx.scope === "session" ? "session" : (parsed.trust ?? "session");
  const failClosed = parsed.fail_closed ?? false;
  if (failClosed && trust === "session") {
    // SECURITY: session trust may not abort (spec §8.3); fail-closed would let a failure abort.
    const rule =
      ctx.scope === "session"
        ? "a session-scope hook runs with session trust, which may not abort (spec §8.3), so it cannot be fail_closed"
        : "a hook with session trust may not abort (spec §8.3), so it cannot be fail_closed; declare trust \"deployment\"";
    const field = formatPath([...at, "fail_closed"]);
    throw new VcpError("INVALID_HOOK", `hooks: ${field}: ${rule}`, { field, rule, received: true, hook: parsed.name });
  }

  const condition = parsed.condition ?? null;
  if (condition !== null) compilePredicate(condition, ctx.predicateOptions, formatPath([...at, "condition"]), ctx.conditionFields);

  const verdict = ctx.resolveAction ? ctx.resolveAction(parsed.action) : true;
  if (verdict !== true) {
    const { bundle, export: exportName } = parsed.action;
    throw new VcpError("ACTION_NOT_CALLABLE", `hooks: action: ${verdict} (spec §6.2.6)`, {
      field: "action",
      rule: verdict,
      bundle,
      export: exportName,
      hook: parsed.name,
    });
  }

  const resolved: Record<string, unknown> = {
    name: parsed.name,
    ...(parsed.type !== undefined ? { type: parsed.type } : {}),
    priority: parsed.priority,
    timeout_ms: parsed.timeout_ms,
    action: toFrozenJson(parsed.action, [...at, "action"]),
    condition: toFrozenJson(condition, [...at, "condition"]),
    enabled: parsed.enabled ?? true,
    metadata: toFrozenJson(parsed.metadata ?? {}, [...at, "metadata"]),
    fail_closed: failClosed,
    trust,
    scope: ctx.scope,
    seq: ctx.seq,
  };
  if (parsed.description !== undefined) resolved["description"] = parsed.description;
  if (ctx.scope === "session") resolved["session_id"] = ctx.sessionId;
  return Object.freeze(resolved) as unknown as ResolvedHook;
}

/**
 * The zod step of {@link compileHook}. The message names every broken field
 * (`hooks: priority: must be ...; timeout_ms: ...`); `details` describe the first one and list all.
 *
 * @example
 * ```ts
 * parseHookDefinition({ name: "X" }); // throws INVALID_HOOK, details.field "name"
 * ```
 */
export function parseHookDefinition(def: unknown, at: readonly PropertyKey[] = [], profileHook = false): ParsedHook {
  // SECURITY: bound recursion before zod's recursive predicate schema sees the value.
  if (typeof def === "object" && def !== null) assertPredicateNesting((def as { condition?: unknown }).condition, formatPath([...at, "condition"]));
  const result = (profileHook ? ProfileHookFieldsSchema : HookDefinitionSchema).safeParse(def);
  if (result.success) return result.data;

  const problems: { field: string; rule: string; received: unknown }[] = [];
  for (const issue of result.error.issues) {
    const path = issue.path as PropertyKey[];
    const value = valueAt(def, path);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        problems.push({
          field: formatPath([...at, ...path, key]),
          rule: path.length === 0 ? "is not a field of a hook definition (spec §4.1)" : "is not a known field",
          received: describeReceived(valueAt(value, [key])),
        });
      }
    } else if (path.length === 0) {
      problems.push({ field: at.length === 0 ? "definition" : formatPath(at), rule: "must be an object", received: describeReceived(def) });
    } else {
      const rule = issue.code === "invalid_type" && value === undefined ? "is required" : issue.message;
      problems.push({ field: formatPath([...at, ...path]), rule, received: describeReceived(value) });
    }
  }
  const first = problems[0] ?? { field: at.length === 0 ? "definition" : formatPath(at), rule: "is invalid", received: describeReceived(def) };
  const message = `hooks: ${problems.map((p) => `${p.field}: ${p.rule}`).join("; ")}`;
  const details: Record<string, unknown> = { ...first, issues: problems.map(({ field, rule }) => ({ field, rule })) };
  const name = valueAt(def, ["name"]);
  if (typeof name === "string" && HOOK_NAME.regex.test(name)) details["hook"] = name;
  throw new VcpError("INVALID_HOOK", message, details);
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let cur = root;
  for (const key of path) {
    if (cur === null || typeof cur !== "object" || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[key];
  }
  return cur;
}
