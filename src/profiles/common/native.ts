/**
 * Helpers shared by the agent profiles (gemini-cli, llxprt, claude-code): RE2 matcher compilation,
 * zod issue formatting, and small readers over native JSON objects. Pure: no I/O.
 *
 * @module
 */
import { RE2JS } from "re2js";
import { z } from "zod";
import { VcpError } from "../../errors.js";
import type { Aggregated, CompiledMatcher, Decoded, EventProfile, NativeObject, PresentedAnswer } from "../types.js";
import { chargeScan, MAX_MATCHED_FIELD_LENGTH, MAX_MATCHER_COST, MatcherCostError, scanUnits, type ScanMeter } from "./scan.js";

export { MAX_MATCHED_FIELD_LENGTH } from "./scan.js";

/**
 * Deployment settings of the agent profiles (gemini-cli, llxprt, claude-code), besides `strict`: only
 * `session_ttl_s`. Strict, so a misspelt setting is refused rather than silently ignored.
 */
export const agentSettingsSchema = z.strictObject({
  session_ttl_s: z.number().int().positive().optional(),
});

/**
 * An input field an RE2 matcher searches. RE2 is linear in the text, but with a large constant for
 * some patterns (`(.*){1000}` scans a 64 KiB tool name for 13 s on the host, per hook), so the text
 * is bounded where the input is validated: before any work.
 */
export const matchedField = (): z.ZodString =>
  // SECURITY: the length bound a matcher's cost rests on, applied with the input's validation.
  z.string().max(MAX_MATCHED_FIELD_LENGTH, `must be at most ${MAX_MATCHED_FIELD_LENGTH} characters (a field matchers search)`);

/** A matcher that applies to every input (no matcher, `""`, `"*"`). */
export const MATCH_ALL: CompiledMatcher = Object.assign(() => true, { cost: 0 });

/**
 * A {@link CompiledMatcher} from a test and its static cost (common/scan.ts: the most scan units the
 * test may charge on any valid input).
 */
export function costedMatcher(test: (input: NativeObject, meter?: ScanMeter) => boolean, cost: number): CompiledMatcher {
  return Object.assign(test, { cost });
}

/**
 * A hook's `matcher` AND its `match` filter (if any) as one test, the filter evaluated only when the
 * matcher holds. Throws {@link MatcherCostError} when the two may cost more than `MAX_MATCHER_COST`
 * together: the one place that limit is checked, at build, install and plan.
 *
 * @example
 * ```ts
 * const applies = hookMatcher(profile.compileMatcher(hook.matcher, event), profile.compileFilter?.(hook.match, event));
 * applies(input, meter); // throws ScanBudgetExceeded if the bundle's meter runs out
 * ```
 */
export function hookMatcher(matcher: CompiledMatcher, filter: CompiledMatcher | undefined): CompiledMatcher {
  const cost = matcher.cost + (filter?.cost ?? 0);
  // SECURITY: refused before any input is seen: a hook may never cost more than a whole chain's meter.
  if (cost > MAX_MATCHER_COST) throw new MatcherCostError(cost);
  if (filter === undefined) return matcher;
  return costedMatcher((input, meter) => matcher(input, meter) && filter(input, meter), cost);
}

/**
 * A matcher testing one string field of at most {@link MAX_MATCHED_FIELD_LENGTH} characters with a
 * compiled pattern; an input whose field is absent or not a string does not match.
 */
export function fieldMatcher(read: (input: NativeObject) => unknown, test: { (text: string, meter?: ScanMeter): boolean; readonly programSize: number }): CompiledMatcher {
  return costedMatcher((input, meter) => {
    const value = read(input);
    return typeof value === "string" && test(value, meter);
  }, scanUnits(MAX_MATCHED_FIELD_LENGTH, test.programSize));
}

/** A matcher of plain names (letters, digits, `_`, `|`): a list of exact names, never a regex. */
export const PLAIN_NAMES = /^[A-Za-z0-9_|]+$/;

/**
 * The matcher most Claude-shaped hosts use (Claude Code, Codex, VS Code, Cursor): a pattern of plain
 * names (`plain`, default {@link PLAIN_NAMES}) is a list of exact names split at `separator` (`Write` ≠
 * `NotebookWrite`), anything else is compiled by `compileRegex` and tested against the field `read`
 * returns. `pattern` is already trimmed and not a match-everything pattern.
 *
 * @example
 * ```ts
 * const m = namesOrPattern("Edit|Write", (input) => input["tool_name"], (p) => compileSearch(p, "claude-code PreToolUse"));
 * m({ tool_name: "Write" }); // true
 * ```
 */
export function namesOrPattern(
  pattern: string,
  read: (input: NativeObject) => unknown,
  compileRegex: (pattern: string) => { (text: string, meter?: ScanMeter): boolean; readonly programSize: number },
  plain: RegExp = PLAIN_NAMES,
  separator: string | RegExp = "|",
): CompiledMatcher {
  if (plain.test(pattern)) {
    const names = new Set(pattern.split(separator).map((n) => n.trim()).filter((n) => n !== ""));
    return costedMatcher((input) => {
      const value = read(input);
      return typeof value === "string" && names.has(value);
    }, 0);
  }
  return fieldMatcher(read, compileRegex(pattern));
}

/** True for the patterns every agent treats as "match everything". */
export function matchesEverything(pattern: string | undefined): boolean {
  return pattern === undefined || pattern.trim() === "" || pattern.trim() === "*";
}

/**
 * Compile an RE2 pattern for an unanchored search. A pattern RE2 cannot compile is a build error
 * naming the pattern (never the silent exact-string fallback Gemini CLI uses for bad JS regexes).
 *
 * @example
 * ```ts
 * const search = compileSearch("Edit|Write", "gemini-cli BeforeTool");
 * search("EditTool"); // true: unanchored
 * ```
 */
export function compileSearch(pattern: string, where: string): { (text: string, meter?: ScanMeter): boolean; readonly programSize: number } {
  let re: RE2JS;
  try {
    re = RE2JS.compile(pattern);
  } catch (err) {
    throw new VcpError("INVALID_HOOK", `matcher ${JSON.stringify(pattern)} of ${where} is not an RE2 pattern: ${(err as Error).message}`, {
      field: "matcher",
      rule: "re2",
      pattern,
    });
  }
  const programSize = re.programSize();
  // A pattern of letters, digits, `_` and `-` only (a tool name: "run_shell_command") has no RE2
  // metacharacter, so its unanchored search is a substring test: same answer, a fraction of the CPU
  // (matchers run on the main thread for every event, before anything crosses). ASCII only, so a
  // UTF-16 substring test and RE2's code-point search agree.
  const literal = LITERAL_PATTERN.test(pattern);
  // SECURITY: RE2 runs in linear time, so a guest-controlled tool name cannot make matching blow up;
  // the scan is charged to the chain's meter before it is done (the literal test is charged the same).
  const search = (text: string, meter?: ScanMeter): boolean => {
    chargeScan(meter, text.length, programSize);
    return literal ? text.includes(pattern) : re.matcher(text).find();
  };
  return Object.assign(search, { programSize });
}

/** Patterns that are their own literal text in RE2 syntax (see compileSearch). */
const LITERAL_PATTERN = /^[A-Za-z0-9_-]+$/;

/** `path.to.field: message` for the first zod issue (the one a user fixes first). */
export function formatIssue(error: z.ZodError, prefix = ""): string {
  const issue = error.issues[0];
  if (issue === undefined) return `${prefix || "value"}: invalid`;
  const path = [prefix, ...issue.path.map(String)].filter((p) => p !== "").join(".");
  return `${path || "(root)"}: ${issue.message}`;
}

/** Run a compiled zod schema and turn its verdict into a {@link Decoded}. */
export function decodeWith(schema: z.ZodType, value: unknown, prefix = ""): Decoded<NativeObject> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) return { ok: false, error: formatIssue(parsed.error, prefix) };
  return { ok: true, value: parsed.data as NativeObject };
}

/** What a plain JSON value is, for messages ("got array"). */
export function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

export function isObject(value: unknown): value is NativeObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The `hookSpecificOutput` object of an output, or undefined. */
export function specificOf(output: NativeObject): NativeObject | undefined {
  const hso = output["hookSpecificOutput"];
  return isObject(hso) ? hso : undefined;
}

export function stringField(object: NativeObject | undefined, key: string): string | undefined {
  const value = object?.[key];
  return typeof value === "string" ? value : undefined;
}

/**
 * Parse the text a command hook printed: JSON object (a JSON string holding JSON is unwrapped once,
 * as LLxprt does for double-encoded output), or `undefined` when the text is not a JSON object.
 */
export function parseJsonObject(text: string): NativeObject | undefined {
  try {
    let parsed: unknown = JSON.parse(text);
    if (typeof parsed === "string") parsed = JSON.parse(parsed);
    return isObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export type { CommandResult, ParsedCommand } from "../types.js";

/**
 * A profile's `sessionIdOf` (PROFILES §8.3): the first of `keys` the input carries, when it is a
 * non-empty string (VS Code: `sessionId`, else the Claude spelling `session_id`).
 *
 * @example
 * ```ts
 * sessionIdAt("conversation_id")({ conversation_id: "c1" }); // "c1"
 * ```
 */
export function sessionIdAt(...keys: readonly string[]): (input: NativeObject) => string | undefined {
  return (input) => {
    for (const key of keys) {
      const id = input[key];
      if (id !== undefined && id !== null) return typeof id === "string" && id !== "" ? id : undefined;
    }
    return undefined;
  };
}

/** `session_id` of a native input when it is a non-empty string (PROFILES §8.3). */
export const sessionIdFrom = sessionIdAt("session_id");

/**
 * The members that read an agent's native JSON by per-event schemas, one rule for every agent
 * profile: `validateInput` and `inputSchema` take the same schema (`inputOf`), so a hook's
 * `condition` is checked at build against exactly what is validated (common/condition-fields.ts);
 * `decode` reads an action's result as the agent reads a command hook's stdout (`decodeNative`; plain
 * text by `plainText`, default: it says nothing). An event the profile does not know is refused with
 * `unknownEvent(event)`.
 *
 * @example
 * ```ts
 * const profile: EventProfile = { …, ...nativeSchemas({ inputOf: (e) => TABLE[e]?.input, outputOf: (e) => TABLE[e]?.output, unknownEvent }) };
 * ```
 */
export function nativeSchemas(schemas: {
  inputOf(event: string): z.ZodType | undefined;
  outputOf(event: string): z.ZodType | undefined;
  unknownEvent(event: string): string;
  plainText?(text: string, event: string): NativeObject;
}): Required<Pick<EventProfile, "validateInput" | "inputSchema">> & Pick<EventProfile, "decode"> {
  const { inputOf, outputOf, unknownEvent, plainText } = schemas;
  return {
    validateInput: (input, event) => validateNative(input, inputOf(event), () => unknownEvent(event)),
    inputSchema: inputOf,
    decode(raw, event) {
      const schema = outputOf(event);
      if (schema === undefined) return { ok: false, error: unknownEvent(event) };
      return decodeNative(raw, schema, plainText === undefined ? () => ({}) : (text) => plainText(text, event));
    },
  };
}

/** The answer most agents read: the folded native JSON with exit code 0, allow and deny alike (the JSON decides). */
export function presentJson(aggregated: Aggregated): PresentedAnswer {
  return { native: aggregated, exit_code: 0 };
}

/** Input fields every agent sends (the event name must be the event fired). */
export function baseInputShape(event: string) {
  return {
    session_id: z.string().min(1),
    hook_event_name: z.literal(event, { error: `must be "${event}"` }),
    transcript_path: z.string().optional(),
    cwd: z.string().optional(),
  };
}

/**
 * Validate a native input against the event's compiled schema; an unknown event or a non-object is
 * refused with a message naming it.
 */
export function validateNative(
  input: unknown,
  schema: z.ZodType | undefined,
  unknownEvent: () => string,
): Decoded<NativeObject> {
  if (schema === undefined) return { ok: false, error: unknownEvent() };
  if (!isObject(input)) return { ok: false, error: `input: expected a JSON object, got ${kindOf(input)}` };
  return decodeWith(schema, input);
}

const SPECIFIC = "hookSpecificOutput.";

/**
 * The fields of `output` that say something (see `EventProfile.answerFields`): each top-level field
 * except those that are absent, `null`, an empty list, or equal to the profile's `neutral` value
 * (`decision: "allow"`, `continue: true`), and each field of `hookSpecificOutput` except
 * `hookEventName` (which only names the event).
 *
 * @example
 * ```ts
 * answerFieldsOf({ decision: "allow", systemMessage: "m", hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: {} } }, { decision: "allow" });
 * // ["systemMessage", "hookSpecificOutput.tool_input"]
 * ```
 */
export function answerFieldsOf(output: NativeObject, neutral: Readonly<NativeObject> = {}): string[] {
  const said: string[] = [];
  for (const [key, value] of Object.entries(output)) {
    if (key === "hookSpecificOutput" && isObject(value)) {
      for (const [name, v] of Object.entries(value)) if (name !== "hookEventName" && v !== undefined && v !== null) said.push(SPECIFIC + name);
      continue;
    }
    if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) continue;
    // Neutral values are small literals; the output came out of a bounded guest text.
    if (Object.hasOwn(neutral, key) && JSON.stringify(value) === JSON.stringify(neutral[key])) continue;
    said.push(key);
  }
  return said;
}


/**
 * Decode what an action returned as the agent would read a command hook's stdout: nothing (or `null`,
 * or blank text) is the empty output; text holding a JSON object is that object; other text becomes
 * `plainText(text)`; an object is checked against the compiled `schema`; anything else is refused.
 */
export function decodeNative(raw: unknown, schema: z.ZodType, plainText: (text: string) => NativeObject): Decoded<NativeObject> {
  if (raw === undefined || raw === null) return { ok: true, value: {} };
  if (typeof raw === "string") {
    const text = raw.trim();
    if (text === "") return { ok: true, value: {} };
    const json = parseJsonObject(text);
    return json === undefined ? { ok: true, value: plainText(text) } : decodeWith(schema, json);
  }
  if (!isObject(raw)) return { ok: false, error: `output: expected a JSON object, got ${kindOf(raw)}` };
  return decodeWith(schema, raw);
}
