import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { z } from "zod";
import { VcpError } from "../errors.js";
import { ConstitutionSchema } from "./constitution.js";
import { EVENT_SCHEMAS } from "./events.js";
import { HOOK_TYPES, type HookType } from "./hook-type.js";
import { SessionInfoSchema } from "./input.js";

// The zod schemas are the single source; their JSON Schema form is compiled by ajv ONCE at module
// load so that validating a chain input on the hot path costs a function call, not a compile.
const ajv = new Ajv({ allErrors: false, strict: false });
function compileFromZod(schema: z.ZodType): ValidateFunction {
  return ajv.compile(z.toJSONSchema(schema, { target: "draft-7", unrepresentable: "any", io: "input" }));
}

const validateConstitution = compileFromZod(ConstitutionSchema);
const validateSession = compileFromZod(SessionInfoSchema);
const validateEvent = Object.fromEntries(HOOK_TYPES.map((type) => [type, compileFromZod(EVENT_SCHEMAS[type])])) as Record<
  HookType,
  ValidateFunction
>;

function fail(field: string, errors: ErrorObject[] | null | undefined): never {
  const first = errors?.[0];
  const where = first?.instancePath ? `${field}${first.instancePath.replaceAll("/", ".")}` : field;
  throw new VcpError("INVALID_INPUT", `${where}: ${first?.message ?? "is invalid"}`, { field: where, rule: first?.message });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Validate the caller-supplied parts of a chain input (spec §4.2, §4.5). Throws VcpError
 * INVALID_INPUT naming the field, e.g. `event.injection_format: must be equal to one of the allowed values`.
 */
export function assertChainInput(type: HookType, input: { context: unknown; constitution: unknown; event: unknown; session: unknown }): void {
  if (!isPlainObject(input.context)) throw new VcpError("INVALID_INPUT", "context: must be a JSON object", { field: "context" });
  if (!validateConstitution(input.constitution)) fail("constitution", validateConstitution.errors);
  if (!validateSession(input.session)) fail("session", validateSession.errors);
  const validate = validateEvent[type];
  if (!validate(input.event)) fail("event", validate.errors);
}
