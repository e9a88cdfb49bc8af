import { compileFromZod, describeSchemaError } from "./json-schema.js";
import { HookResultSchema, type HookResult } from "./result.js";
import { DEFAULT_JSON_DEPTH, RESULT_ENVELOPE_DEPTH, jsonTextExceeds } from "./json-bounds.js";

/**
 * HookResult (spec §4.3) as ajv checks it on the hot path: the JSON Schema of the zod
 * `HookResultSchema` (src/model/result.ts), compiled once. The one rule zod holds as a refinement,
 * which JSON Schema generation cannot see, is added as `if`/`then` (a unit test checks the two agree).
 */
const validateHookResult = compileFromZod<HookResult>(HookResultSchema, {
  // spec §4.3: reason is REQUIRED when status is 'abort'. (`required` in the `if`: without it a
  // result lacking `status` would match and be told it lacks a reason.)
  if: { required: ["status"], properties: { status: { const: "abort" } } },
  then: { required: ["reason"], properties: { reason: { type: "string", minLength: 1 } } },
});

export type ParsedResult = { ok: true; result: HookResult } | { ok: false; message: string };

/**
 * Parse JSON text that a guest produced. `JSON.parse` only ever creates own data properties, but a
 * `__proto__` key would still become a prototype setter for any later `Object.assign` by an
 * embedding application, so such keys are dropped.
 */
export function parseGuestJson(text: string): unknown {
  // SECURITY: drop "__proto__" keys from guest JSON so no later merge can set a prototype.
  return text.includes('"__proto__"') ? JSON.parse(text, dropProtoKeys) : JSON.parse(text);
}

function dropProtoKeys(key: string, value: unknown): unknown {
  return key === "__proto__" ? undefined : value;
}

/**
 * Parse and validate a hook result serialized inside the sandbox (DESIGN §4.3). Each field may nest
 * `maxDepth` levels (the result object itself adds one); deeper text is refused before it is parsed.
 */
export function parseHookResult(resultJson: string, maxDepth: number = DEFAULT_JSON_DEPTH): ParsedResult {
  const limit = maxDepth + RESULT_ENVELOPE_DEPTH;
  // SECURITY: the bound is checked on the text, so a hostile nesting costs one scan and no recursion.
  if (jsonTextExceeds(resultJson, limit)) {
    return { ok: false, message: `result nests deeper than ${maxDepth} levels below its fields (limits.json_depth)` };
  }
  let value: unknown;
  try {
    value = parseGuestJson(resultJson);
  } catch {
    return { ok: false, message: "result is not valid JSON" };
  }
  if (validateHookResult(value)) return { ok: true, result: value };
  // `result.modified_constitution.rules: is required`, not the first branch of its null-or-object union.
  const { field, rule } = describeSchemaError(validateHookResult.errors, "result", value);
  return { ok: false, message: `${field}: ${rule} (spec §4.3)` };
}
