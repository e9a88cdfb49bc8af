/**
 * The JSON Schema form of the zod model — the one source for every JSON-Schema consumer of a model
 * shape — and the one ajv instance that validates with it.
 *
 * - {@link MODEL_JSON_SCHEMAS}: the model's shapes by component name, generated once at module load.
 *   The HTTP server registers the same objects as its route schemas (server/schemas.ts), so a body the
 *   server accepts is a body the runtime accepts, whether or not any hook is installed (issue 11,
 *   defect 3); the runtime's validators compile them with {@link compileModelSchema}.
 * - {@link compileFromZod}: any other zod schema (the HookResult) compiled with the same instance,
 *   once (STYLE.md: never per call); {@link compileJsonSchema}: a JSON Schema given as data.
 * - {@link describeSchemaError}: a failure as one `{ field, rule }` in the `hooks[2].timeout_ms` path
 *   form, naming the branch of a union the value was meant for (issue 11, defect 9);
 *   {@link pointerPath} for callers that only have an ajv `instancePath`.
 *
 * @module
 */
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { z } from "zod";
import { ConstitutionSchema, RuleSchema } from "./constitution.js";
import { EVENT_SCHEMAS, RuleConflictSchema } from "./events.js";
import { HOOK_TYPES, type HookType } from "./hook-type.js";
import { SessionInfoSchema, VcpContextSchema } from "./input.js";
import { AdaptInputSchema, ConflictInputSchema, OpenSessionInputSchema, TransitionInputSchema, ViolationInputSchema } from "./pipeline-input.js";
import { formatPath } from "./zod-errors.js";
import { deepFreeze } from "../config/deep-freeze.js";

/** A JSON Schema (draft-07) as a plain object. */
export type JsonSchema = Readonly<Record<string, unknown>>;

// allErrors: false — validation stops at the first failing keyword, so a hostile input costs one
// failure, and the errors array holds that failure (and, for a union, each branch's first failure).
const ajv = new Ajv({ allErrors: false, strict: false });

/** The draft-07 JSON Schema of a zod schema (input form), without `$schema`. */
function generate(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _draft, ...rest } = z.toJSONSchema(schema, {
    target: "draft-7",
    unrepresentable: "any",
    io: "input",
    // zod writes `propertyNames: { type: "string" }` for every string-keyed record: always true of
    // JSON, and a walk over every key of a (1 MiB) context on the hot path. Left out.
    override: ({ jsonSchema }) => {
      const names = jsonSchema.propertyNames;
      if (typeof names === "object" && names !== null && Object.keys(names).length === 1 && (names as { type?: unknown }).type === "string") delete jsonSchema.propertyNames;
    },
  }) as Record<string, unknown>;
  return rest;
}

/**
 * The draft-07 JSON Schema of a zod schema, without `$schema` (so it can be embedded or registered
 * under an `$id`). Deeply frozen: every consumer shares one copy.
 */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  return deepFreeze(generate(schema));
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
  // The pipeline's operation inputs (pipeline-input.ts): the HTTP bodies of open/adapt/transition/conflict/violation.
  OpenSessionInput: jsonSchemaOf(OpenSessionInputSchema),
  AdaptInput: jsonSchemaOf(AdaptInputSchema),
  TransitionInput: jsonSchemaOf(TransitionInputSchema),
  ConflictInput: jsonSchemaOf(ConflictInputSchema),
  ViolationInput: jsonSchemaOf(ViolationInputSchema),
  ...Object.fromEntries(HOOK_TYPES.map((type) => [EVENT_SCHEMA_IDS[type], jsonSchemaOf(EVENT_SCHEMAS[type])])),
});

/**
 * Compile a zod schema's JSON Schema (draft-7, input form) with the shared ajv instance. `extra` is
 * merged into the root: for rules zod's refinements hold that JSON Schema cannot be generated from.
 *
 * @example
 * ```ts
 * const validateConstitution = compileFromZod(ConstitutionSchema);
 * ```
 */
export function compileFromZod<T = unknown>(schema: z.ZodType, extra: Record<string, unknown> = {}): ValidateFunction<T> {
  const generated = generate(schema);
  return ajv.compile<T>({ ...generated, ...extra });
}

/**
 * Compile a JSON Schema given as data — another program's contract, such as VS Code's tool input
 * schemas (profiles/vscode/tool-schemas.ts) — with the shared ajv instance: once per schema, at load.
 * Validation never changes the value (no defaults, no type coercion).
 */
export function compileJsonSchema(schema: JsonSchema): ValidateFunction {
  return ajv.compile(schema);
}

/** One failed rule: `field` is rooted at the caller's name for the value (`result.modified_constitution.rules`). */
export interface SchemaProblem {
  field: string;
  rule: string;
}

/**
 * The failure of an ajv validation as `{ field, rule }`. `root` names the validated value
 * (`result`, `adapt.constitution`); `value` is the value itself, used to tell array indexes from
 * object keys in the path.
 *
 * A union (zod `.nullable()`, `.or()`: JSON Schema `anyOf`) fails with the first error of each
 * branch. Reporting the first branch's would call a constitution that lacks `rules` "must be
 * null" (issue 11). So branches the value is not even of the type of are set aside, and the error
 * of the branch that remains is reported (`…modified_constitution.rules: is required`); when none
 * remains, the rule lists every type the union accepts (`must be an object or null`).
 *
 * @example
 * ```ts
 * if (!validate(value)) throw invalidInput(describeSchemaError(validate.errors, "constitution", value));
 * ```
 */
export function describeSchemaError(errors: readonly ErrorObject[] | null | undefined, root: string, value: unknown): SchemaProblem {
  const error = mostSpecific(errors ?? []);
  if (error === undefined) return { field: root, rule: "is invalid" };
  const path = pointerToPath(error.instancePath, value);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "required":
      return { field: joinPath(root, [...path, String(params["missingProperty"])]), rule: "is required" };
    case "additionalProperties":
      return { field: joinPath(root, [...path, String(params["additionalProperty"])]), rule: "is not a known field" };
    case "type":
      return { field: joinPath(root, path), rule: `must be ${typeList(params["type"])}` };
    case "const":
      return { field: joinPath(root, path), rule: `must be ${JSON.stringify(params["allowedValue"])}` };
    case "pattern":
      // The rule as model/names.ts words it: `must match [a-z0-9_-]{1,64}`.
      return { field: joinPath(root, path), rule: `must match ${String(params["pattern"]).replace(/^\^/, "").replace(/\$$/, "")}` };
    case "minItems":
      return { field: joinPath(root, path), rule: `must hold at least ${String(params["limit"])} item${params["limit"] === 1 ? "" : "s"}` };
    case "enum":
      return { field: joinPath(root, path), rule: `must be one of ${(params["allowedValues"] as unknown[]).map((v) => JSON.stringify(v)).join(", ")}` };
    default:
      return { field: joinPath(root, path), rule: error.message ?? `fails ${error.keyword}` };
  }
}

/** The error that says what is wrong: through unions, the branch the value was meant for. */
function mostSpecific(errors: readonly ErrorObject[]): ErrorObject | undefined {
  // Without allErrors, ajv stops at the first failing keyword: it is the last error, and errors
  // before it belong to it (the branches of a union, the `then` of an `if`).
  const last = errors.at(-1);
  if (last === undefined) return undefined;
  if (last.keyword === "if") return mostSpecific(errors.slice(0, -1));
  if (last.keyword !== "anyOf" && last.keyword !== "oneOf") return errors[0];

  const prefix = `${last.schemaPath}/`;
  const branches = new Map<string, ErrorObject[]>();
  for (const e of errors.slice(0, -1)) {
    if (!e.schemaPath.startsWith(prefix)) continue;
    const branch = e.schemaPath.slice(prefix.length).split("/", 1)[0] ?? "";
    branches.set(branch, [...(branches.get(branch) ?? []), e]);
  }
  // A branch whose only complaint is the type of the value itself was not the one the value meant.
  const typeOnly = (errs: ErrorObject[]) => errs.length === 1 && errs[0]!.keyword === "type" && errs[0]!.instancePath === last.instancePath;
  // No branch errors: a oneOf that more than one branch matched; its own message says so.
  if (branches.size === 0) return last;
  const meant = [...branches.values()].filter((errs) => !typeOnly(errs));
  if (meant.length > 0) return mostSpecific(meant[0]!);
  const types = [...branches.values()].flatMap((errs) => [(errs[0]!.params as { type: unknown }).type].flat());
  return { ...last, keyword: "type", params: { type: types }, message: `must be ${typeList(types)}` };
}

const ARTICLE: Record<string, string> = { object: "an object", array: "an array", string: "a string", number: "a number", integer: "an integer", boolean: "a boolean", null: "null" };

function typeList(type: unknown): string {
  const names = [type].flat().map((t) => ARTICLE[String(t)] ?? String(t));
  return names.length <= 1 ? (names[0] ?? "valid") : `${names.slice(0, -1).join(", ")} or ${names.at(-1)}`;
}

/** A JSON Pointer (`/rules/0/id`) as path segments, array indexes as numbers (looked up in `value`). */
function pointerToPath(pointer: string, value: unknown): PropertyKey[] {
  if (pointer === "") return [];
  const path: PropertyKey[] = [];
  let current = value;
  for (const raw of pointer.slice(1).split("/")) {
    const segment = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (Array.isArray(current)) {
      path.push(Number(segment));
      current = current[Number(segment)];
    } else {
      path.push(segment);
      current = typeof current === "object" && current !== null && Object.hasOwn(current, segment) ? (current as Record<string, unknown>)[segment] : undefined;
    }
  }
  return path;
}

/** `root` (which may itself be a dotted name such as `adapt.constitution`) followed by `path`. */
function joinPath(root: string, path: readonly PropertyKey[]): string {
  const tail = formatPath(path);
  if (tail === "" || root === "") return tail === "" ? root : tail;
  return tail.startsWith("[") ? `${root}${tail}` : `${root}.${tail}`;
}

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
