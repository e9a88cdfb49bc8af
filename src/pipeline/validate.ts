/**
 * Boundary validation of pipeline inputs. The pipeline is where callers' session data enters, so
 * every constitution, context and event is checked here once, before any chain fires: a bad input
 * changes nothing. (`Runtime.fire` skips validation for an empty chain, so relying on it would let
 * an invalid constitution into a session whose chains happen to be empty.)
 */
import type { ValidateFunction } from "ajv";
import { assertInputBounds, type JsonBounds } from "../model/json-bounds.js";
import { compileModelSchema, describeSchemaError } from "../model/json-schema.js";
import { invalidInput } from "./errors.js";
import { deepFreeze } from "../config/deep-freeze.js";

/**
 * The operations' inputs (model/pipeline-input.ts), compiled once at module load (STYLE.md: never
 * per call) from the same generated schemas the HTTP routes validate bodies with.
 */
const PIPELINE_INPUT_VALIDATORS = {
  OpenSessionInput: compileModelSchema("OpenSessionInput"),
  AdaptInput: compileModelSchema("AdaptInput"),
  TransitionInput: compileModelSchema("TransitionInput"),
  ConflictInput: compileModelSchema("ConflictInput"),
  ViolationInput: compileModelSchema("ViolationInput"),
} as const;

function describe(root: string, validate: ValidateFunction, value: unknown): never {
  const { field, rule } = describeSchemaError(validate.errors, root, value);
  // Fields of an operation's input are named as the caller wrote them (`context`), the input itself `input`.
  throw invalidInput(field === "" ? "input" : field, rule);
}

/**
 * The shape of an operation's input (open, adapt, transition, conflict, violation), or INVALID_INPUT
 * naming the first field that breaks it (`constitution.rules[0].id: is required`).
 */
export function assertPipelineInput(name: keyof typeof PIPELINE_INPUT_VALIDATORS, input: unknown): void {
  const validate = PIPELINE_INPUT_VALIDATORS[name];
  if (!validate(input)) describe("", validate, input);
}

/**
 * Depth and size bounds (model/json-bounds.ts) on the named fields of a pipeline input, each named as
 * the caller wrote it (`adapt.context`). Runs first, before any other check walks or copies the input.
 */
export function assertBoundedFields(input: unknown, fields: readonly string[], bounds: JsonBounds, prefix = ""): void {
  if (!isPlainObject(input)) return; // the shape check that follows names the problem
  const named: Record<string, unknown> = {};
  for (const field of fields) named[`${prefix}${field}`] = input[field];
  assertInputBounds(named, bounds);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A deep, frozen JSON copy of a caller's value. Session state holds only such copies: the caller
 * cannot change a session behind the pipeline's back, and what hooks see is exactly what JSON carries
 * (the same view the sandbox gets). Cycles and bigints are refused as invalid input.
 */
export function frozenJsonCopy<T>(field: string, value: T): T {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (err) {
    throw invalidInput(field, `must be JSON (${err instanceof Error ? err.message : String(err)})`);
  }
  if (text === undefined) throw invalidInput(field, "must be JSON");
  return deepFreeze(JSON.parse(text) as T);
}
