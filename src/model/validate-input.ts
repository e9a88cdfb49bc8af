import type { ValidateFunction } from "ajv";
import { VcpError } from "../errors.js";
import { ConstitutionSchema } from "./constitution.js";
import { EVENT_SCHEMAS } from "./events.js";
import { HOOK_TYPES, type HookType } from "./hook-type.js";
import { SessionInfoSchema } from "./input.js";
import { compileFromZod, describeSchemaError } from "./json-schema.js";

// The zod schemas are the single source; compiled once at module load, so validating a chain input
// on the hot path costs a function call, not a compile.
const validateConstitution = compileFromZod(ConstitutionSchema);
const validateSession = compileFromZod(SessionInfoSchema);
const validateEvent = Object.fromEntries(HOOK_TYPES.map((type) => [type, compileFromZod(EVENT_SCHEMAS[type])])) as Record<
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
  const validate = validateEvent[type];
  if (!validate(input.event)) fail("event", validate, input.event);
}
