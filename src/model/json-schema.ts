/**
 * The JSON Schema form of the zod model, generated once at module load: the one source for every
 * JSON-Schema consumer of a model shape. The runtime's validators (validate-input.ts,
 * pipeline/validate.ts) compile these with the one ajv instance below; the HTTP server registers
 * the same objects as its route schemas (server/schemas.ts), so a body the server accepts is a body
 * the runtime accepts, whether or not any hook is installed for it (issue 11 defect 3).
 */
import { Ajv, type ValidateFunction } from "ajv";
import { z } from "zod";
import { ConstitutionSchema, RuleSchema } from "./constitution.js";
import { EVENT_SCHEMAS, RuleConflictSchema } from "./events.js";
import { HOOK_TYPES, type HookType } from "./hook-type.js";
import { SessionInfoSchema, VcpContextSchema } from "./input.js";

/** A JSON Schema (draft-07) as a plain object. */
export type JsonSchema = Readonly<Record<string, unknown>>;

/**
 * The draft-07 JSON Schema of a zod schema, without `$schema` (so it can be embedded or registered
 * under an `$id`). Deeply frozen: every consumer shares one copy.
 */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _draft, ...rest } = z.toJSONSchema(schema, { target: "draft-7", unrepresentable: "any", io: "input" }) as Record<string, unknown>;
  return deepFreeze(rest);
}

/** Component names of the event payloads (spec §4.5), by hook type. */
export const EVENT_SCHEMA_IDS: Readonly<Record<HookType, string>> = Object.freeze({
  pre_inject: "PreInjectEvent",
  post_select: "PostSelectEvent",
  on_transition: "TransitionEvent",
  on_conflict: "ConflictEvent",
  on_violation: "ViolationEvent",
  periodic: "PeriodicEvent",
});

/**
 * The model's shapes by component name. The server registers each under its name as `$id`;
 * validators compile them from here.
 */
export const MODEL_JSON_SCHEMAS: Readonly<Record<string, JsonSchema>> = Object.freeze({
  Constitution: jsonSchemaOf(ConstitutionSchema),
  Rule: jsonSchemaOf(RuleSchema),
  RuleConflict: jsonSchemaOf(RuleConflictSchema),
  VcpContext: jsonSchemaOf(VcpContextSchema),
  SessionInfo: jsonSchemaOf(SessionInfoSchema),
  ...Object.fromEntries(HOOK_TYPES.map((type) => [EVENT_SCHEMA_IDS[type], jsonSchemaOf(EVENT_SCHEMAS[type])])),
});

// One ajv instance for the model's validators, compiled once each (STYLE.md: never per call).
const ajv = new Ajv({ allErrors: false, strict: false });

/** Compile one of {@link MODEL_JSON_SCHEMAS} (by name) for validation. */
export function compileModelSchema(name: keyof typeof MODEL_JSON_SCHEMAS): ValidateFunction {
  const schema = MODEL_JSON_SCHEMAS[name];
  if (schema === undefined) throw new Error(`no model schema '${name}'`);
  return ajv.compile(schema);
}

/**
 * An ajv `instancePath` (JSON Pointer) as a field path in the `hooks[2].timeout_ms` form of
 * zod-errors.ts `issuePath`, rooted at `base`: `pointerPath("body", "/candidates/0/id")` is
 * `body.candidates[0].id`. Every JSON-Schema error of the runtime and the server is named this way.
 */
export function pointerPath(base: string, instancePath: string | undefined): string {
  if (instancePath === undefined || instancePath === "") return base;
  let out = base;
  for (const raw of instancePath.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    out += /^(0|[1-9][0-9]*)$/.test(key) ? `[${key}]` : out === "" ? key : `.${key}`;
  }
  return out;
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
