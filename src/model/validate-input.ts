import type { ValidateFunction } from "ajv";
import { VcpError } from "../errors.js";
import { HOOK_TYPES, type HookType } from "./hook-type.js";
import { compileModelSchema, describeSchemaError, EVENT_SCHEMA_IDS } from "./json-schema.js";

// The zod schemas are the single source; their JSON Schema form (json-schema.ts) is compiled ONCE at
// module load so that validating a chain input on the hot path costs a function call, not a compile.
const validateConstitution = compileModelSchema("Constitution");
const validateSession = compileModelSchema("SessionInfo");
const validateEvent = Object.fromEntries(HOOK_TYPES.map((type) => [type, compileModelSchema(EVENT_SCHEMA_IDS[type])])) as Record<
  HookType,
  ValidateFunction
>;

function fail(root: string, validate: ValidateFunction, value: unknown): never {
  const { field, rule } = describeSchemaError(validate.errors, root, value);
  throw new VcpError("INVALID_INPUT", `${field}: ${rule}`, { field, rule });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Validate the caller-supplied parts of a chain input (spec §4.2, §4.5). Throws VcpError
 * INVALID_INPUT naming the field, e.g. `event.injection_format: must be one of "system_prompt", …`.
 */
export function assertChainInput(type: HookType, input: { context: unknown; constitution: unknown; event: unknown; session: unknown }): void {
  if (!isPlainObject(input.context)) throw new VcpError("INVALID_INPUT", "context: must be a JSON object", { field: "context" });
  if (!validateConstitution(input.constitution)) fail("constitution", validateConstitution, input.constitution);
  if (!validateSession(input.session)) fail("session", validateSession, input.session);
  assertEvent(type, input.event);
}

/**
 * Validate the event payload of a chain of `type` (spec §4.5), naming it `field` in the error. The
 * HTTP server calls this too, so `POST …/chains/{type}` refuses what `fire` would refuse even when the
 * chain is empty and `fire` checks nothing.
 */
export function assertEvent(type: HookType, event: unknown, field = "event"): void {
  const validate = validateEvent[type];
  if (!validate(event)) fail(field, validate, event);
}
