/**
 * Which field paths an event-profile hook's `condition` may name (PROFILES §2: conditions read the
 * native input). The path is resolved against the agent's native input itself — `tool_input.command`
 * on a Gemini `BeforeTool`, `payload.namespace` on an ai-memory event — and checked here, at build and
 * install, against the event's input schema (`EventProfile.inputSchema`), so a path the input can
 * never have is an `INVALID_PREDICATE` naming the path and the event instead of a hook that is
 * silently `skipped_predicate` on every event.
 *
 * The rule, walking the path segment by segment through the zod schema:
 *
 *   first segment   must be a field the schema declares: an undeclared top-level name is refused even
 *                   where the schema tolerates unknown keys, since that is how the VCP habit
 *                   `event.tool_input.command` would slip through and never match
 *   object          a declared field is followed; an undeclared one is accepted (the agent may send
 *                   more) unless the object is strict; `record` and `unknown` accept any name below
 *   array           the segment must be an index (`0`, `1`, …)
 *   union           accepted when one of its options accepts the rest of the path
 *   scalar          (string, number, boolean, enum, literal, null) has no fields: refused
 *
 * A profile without `inputSchema` (an embedder's toy profile) accepts every path.
 */
import type { z } from "zod";
import type { ConditionFields } from "../../model/predicate.js";
import type { EventProfile } from "../types.js";

const CANONICAL_INDEX = /^(?:0|[1-9][0-9]{0,8})$/;
const WRAPPERS: ReadonlySet<string> = new Set(["optional", "nullable", "default", "prefault", "readonly", "nonoptional", "catch"]);
const VCP_ROOTS: ReadonlySet<string> = new Set(["context", "constitution", "event", "session", "chain_state"]);

/** The zod v4 definition fields this walk reads. */
interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  getter?: () => z.ZodType;
  shape?: Record<string, z.ZodType>;
  catchall?: z.ZodType;
  valueType?: z.ZodType;
  element?: z.ZodType;
  options?: readonly z.ZodType[];
}

function defOf(schema: z.ZodType): Def {
  let def = (schema as unknown as { def: Def }).def;
  // Optional, nullable, default … and pipes wrap the shape that says which fields there are.
  for (let i = 0; i < 16; i++) {
    if (WRAPPERS.has(def.type) && def.innerType !== undefined) def = (def.innerType as unknown as { def: Def }).def;
    else if (def.type === "pipe" && def.in !== undefined) def = (def.in as unknown as { def: Def }).def;
    else if (def.type === "lazy" && def.getter !== undefined) def = (def.getter() as unknown as { def: Def }).def;
    else break;
  }
  return def;
}

function join(at: string, key: string): string {
  return at === "" ? key : `${at}.${key}`;
}

/** Why `keys[from…]` cannot exist below `schema` (reached at `at`), or undefined when it may. */
function refuseBelow(schema: z.ZodType, keys: readonly string[], from: number, at: string): string | undefined {
  if (from >= keys.length) return undefined;
  const def = defOf(schema);
  const key = keys[from]!;
  switch (def.type) {
    case "unknown":
    case "any":
      return undefined;
    case "object": {
      const field = def.shape !== undefined && Object.hasOwn(def.shape, key) ? def.shape[key] : undefined;
      if (field !== undefined) return refuseBelow(field, keys, from + 1, join(at, key));
      if (def.catchall !== undefined && defOf(def.catchall).type === "never") {
        return `'${at}' has no field '${key}' (its fields: ${Object.keys(def.shape ?? {}).join(", ")})`;
      }
      return undefined;
    }
    case "record":
      return def.valueType !== undefined ? refuseBelow(def.valueType, keys, from + 1, join(at, key)) : undefined;
    case "array":
      if (!CANONICAL_INDEX.test(key)) return `'${at}' is an array: the next segment must be an index (0, 1, …), not '${key}'`;
      return def.element !== undefined ? refuseBelow(def.element, keys, from + 1, join(at, key)) : undefined;
    case "union": {
      const options = def.options ?? [];
      const refusals = options.map((option) => refuseBelow(option, keys, from, at));
      return refusals.some((r) => r === undefined) ? undefined : refusals[0];
    }
    default:
      return `'${at}' is a ${def.type}: it has no field '${key}'`;
  }
}

/**
 * The {@link ConditionFields} of one (profile, event): paths resolved against the native input and
 * checked against `profile.inputSchema?.(event)`.
 *
 * @example
 * ```ts
 * const fields = profileConditionFields(geminiCliProfile, "BeforeTool");
 * fields.refuse(["tool_input", "command"]); // undefined: allowed
 * fields.refuse(["event", "tool_input", "command"]); // "gemini-cli BeforeTool input has no field 'event' …"
 * ```
 */
export function profileConditionFields(profile: Pick<EventProfile, "id" | "inputSchema">, event: string): ConditionFields {
  const schema = profile.inputSchema?.(event);
  if (schema === undefined) return ANY_FIELD;
  const root = defOf(schema);
  const declared = root.type === "object" ? Object.keys(root.shape ?? {}) : undefined;
  return Object.freeze({
    refuse(keys: readonly string[]): string | undefined {
      const first = keys[0]!;
      if (declared !== undefined && !declared.includes(first)) {
        const hint = VCP_ROOTS.has(first) ? `; a ${profile.id} condition reads the native input itself, so write '${keys.slice(1).join(".") || "…"}' rather than '${keys.join(".")}'` : "";
        return `the ${profile.id} ${event} input has no field '${first}' (its fields: ${declared.join(", ")})${hint}`;
      }
      const why = refuseBelow(schema, keys, 0, "");
      return why === undefined ? undefined : `the ${profile.id} ${event} input cannot have '${keys.join(".")}': ${why}`;
    },
  });
}

/** No schema to check against: every path may resolve. */
const ANY_FIELD: ConditionFields = Object.freeze({ refuse: () => undefined });
