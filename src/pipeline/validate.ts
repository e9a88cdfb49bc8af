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
import { SESSION_ID } from "../model/names.js";
import { deepFreeze } from "../model/deep-freeze.js";

// Compiled once at module load (STYLE.md: never compile a schema per call), from the same generated
// schemas the HTTP server validates bodies with (model/json-schema.ts).
const validateConstitution = compileModelSchema("Constitution");
const validateRule = compileModelSchema("Rule");
const validateRuleConflict = compileModelSchema("RuleConflict");


function describe(root: string, validate: ValidateFunction, value: unknown): never {
  const { field, rule } = describeSchemaError(validate.errors, root, value);
  throw invalidInput(field, rule);
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

export function assertObject(field: string, value: unknown): asserts value is Record<string, unknown> {
  if (!isPlainObject(value)) throw invalidInput(field, "must be a JSON object");
}

export function assertConstitution(field: string, value: unknown): void {
  if (!validateConstitution(value)) describe(field, validateConstitution, value);
}

export function assertConstitutions(field: string, value: unknown, min: number): void {
  if (!Array.isArray(value)) throw invalidInput(field, "must be an array of constitutions");
  if (value.length < min) throw invalidInput(field, `must hold at least ${min} constitution${min === 1 ? "" : "s"}`);
  value.forEach((c, i) => assertConstitution(`${field}[${i}]`, c));
}

export function assertRules(field: string, value: unknown): void {
  if (!Array.isArray(value)) throw invalidInput(field, "must be an array of rules");
  value.forEach((r, i) => {
    if (!validateRule(r)) describe(`${field}[${i}]`, validateRule, r);
  });
}

export function assertRuleConflicts(field: string, value: unknown): void {
  if (!Array.isArray(value)) throw invalidInput(field, "must be an array of rule conflicts");
  value.forEach((c, i) => {
    if (!validateRuleConflict(c)) describe(`${field}[${i}]`, validateRuleConflict, c);
  });
}

export function assertOneOf<T extends string>(field: string, value: unknown, allowed: readonly T[]): asserts value is T {
  if (typeof value !== "string" || !(allowed as readonly string[]).includes(value)) {
    throw invalidInput(field, `must be one of ${allowed.join(", ")}`);
  }
}

export function assertScores(field: string, value: unknown): void {
  assertObject(field, value);
  for (const [key, score] of Object.entries(value)) {
    if (typeof score !== "number" || !Number.isFinite(score)) throw invalidInput(`${field}.${key}`, "must be a finite number");
  }
}

export function assertString(field: string, value: unknown, options: { nonEmpty?: boolean } = {}): asserts value is string {
  if (typeof value !== "string") throw invalidInput(field, "must be a string");
  if (options.nonEmpty === true && value.length === 0) throw invalidInput(field, "must be a non-empty string");
}

export function assertSessionId(field: string, value: unknown): asserts value is string {
  if (typeof value !== "string") throw invalidInput(field, "must be a string");
  // The same rule as the HTTP route's `{id}` (model/names.ts): a session id made here is addressable there.
  if (!SESSION_ID.regex.test(value)) throw invalidInput(field, SESSION_ID.rule);
}

export function assertRetryCount(field: string, value: unknown): asserts value is number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) throw invalidInput(field, "must be an integer >= 0");
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
