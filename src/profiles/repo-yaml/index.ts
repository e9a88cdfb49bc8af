/**
 * The `repo-yaml` profile (PROFILES §3.6, §8.8): repository-local YAML hooks
 * (`spec/related/repo-local-yaml-hooks.md`, a design with no upstream code).
 *
 * One hook per `.system/hooks/<id>.yaml`; its handler is a sandboxed action
 * `(input: HookContext) => HookResult`. Hooks run in config (file-name) order, sequentially; their
 * results are merged (lists concatenated, first `new_intent` wins). On PreAbilityCall a `blocking: true`
 * hook blocks with `error: "blocked_by_policy"` (exit code 2), and blocks too when it fails. Other
 * failures are non-fatal.
 */
import { z } from "zod";
import { compileGlob, type CompiledGlob } from "../common/glob.js";
import type {
  Aggregated, CommandResult, CompiledMatcher, Decoded, EventProfile, EventSpec, HookOutputEntry, NativeObject, ParsedCommand, PresentedAnswer, SubjectFacts, Verdict,
} from "../types.js";
import { promptSubject } from "../common/subject.js";
import { readCommandResult } from "../common/command-result.js";
import { answerFieldsOf, fieldMatcher, MATCH_ALL } from "../common/native.js";
import { MAX_CHANGED_PATHS, MAX_CHANGED_PATHS_CHARS, MAX_MATCHED_FIELD_LENGTH } from "../common/scan.js";
import { REPO_YAML_EVENTS_LIST } from "./build.js";
import { compileRepoYamlFilter } from "./filter.js";
import { foldRepoYaml } from "./fold.js";
import { BLOCKED_BY_POLICY, decodeRepoYamlOutput } from "./output.js";

export { buildFromRepoYaml, registrationJson, REPO_YAML_EVENTS_LIST } from "./build.js";
export type { RepoYamlBuild, RepoYamlFile, RepoYamlHookDefinition, RepoYamlScriptHook } from "./build.js";
export { compileRepoYamlFilter, RepoYamlMatch } from "./filter.js";
export { foldRepoYaml } from "./fold.js";
export { BLOCKED_BY_POLICY, decodeRepoYamlOutput, type RepoYamlHookResult } from "./output.js";
export { repoYamlSettingsSchema } from "./settings.js";
import { repoYamlSettingsSchema } from "./settings.js";

/** What a repo-yaml action receives (spec/related/repo-local-yaml-hooks.md §4.1). */
export interface RepoYamlHookContext {
  event_type: string;
  session_id: string;
  timestamp: string;
  repository_root?: string;
  stage?: "understand" | "plan" | "act" | "review";
  /** UserPromptSubmit */
  user_message?: string;
  files_touched?: string[];
  /** PreAbilityCall / PostAbilityCall */
  ability_id?: string;
  operation_key?: string;
  planned_input_summary?: string;
  status?: "success" | "failure" | "skipped";
  duration_ms?: number;
  input_summary?: string;
  output_summary?: string;
  tool_call_path?: string;
  /** SessionStop */
  changed_files?: string[];
  [key: string]: unknown;
}

const ABILITY = new Set(["PreAbilityCall", "PostAbilityCall"]);

/** {@link RepoYamlHookContext} as a schema (conditions' paths are checked against it); other keys pass through. */
const CONTEXT = z.looseObject({
  event_type: z.string(),
  session_id: z.string(),
  timestamp: z.string(),
  repository_root: z.string().optional(),
  stage: z.enum(["understand", "plan", "act", "review"]).optional(),
  user_message: z.string().optional(),
  files_touched: z.array(z.string()).optional(),
  ability_id: z.string().optional(),
  operation_key: z.string().optional(),
  planned_input_summary: z.string().optional(),
  status: z.enum(["success", "failure", "skipped"]).optional(),
  duration_ms: z.number().optional(),
  input_summary: z.string().optional(),
  output_summary: z.string().optional(),
  tool_call_path: z.string().optional(),
  changed_files: z.array(z.string()).optional(),
});

export const REPO_YAML_EVENTS: Readonly<Record<string, EventSpec>> = Object.freeze(
  Object.fromEntries(
    REPO_YAML_EVENTS_LIST.map((name) => {
      const spec: EventSpec = {
        ...(ABILITY.has(name) ? { matcher: "ability_id" } : {}),
        pre: name === "PreAbilityCall" || name === "UserPromptSubmit" || name === "SessionStart",
        can_block: name === "PreAbilityCall",
        modifiable: name === "PreAbilityCall" ? ["error"] : [],
      };
      return [name, spec];
    }),
  ),
);

function isObject(v: unknown): v is NativeObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * @example
 * ```ts
 * import { repoYamlProfile } from "./profiles/repo-yaml/index.js";
 * const ctx = { strict: false, settings: {} };
 * const agg = repoYamlProfile.reduceWithHooks!([{ hook: "guard", blocking: true, output: { error: "blocked_by_policy" } }], "PreAbilityCall", ctx, {});
 * repoYamlProfile.present(agg, "PreAbilityCall", ctx); // { native: { error: "blocked_by_policy" }, exit_code: 2 }
 * ```
 */
export const repoYamlProfile: EventProfile = {
  id: "repo-yaml",
  version: "1",
  upstream: { repo: "spec/related/repo-local-yaml-hooks.md", commit: "none (a design document without upstream code)" },
  events: REPO_YAML_EVENTS,
  // PROFILES §8.5: priority like every profile (default 50, so hooks without one keep file-name order).
  ordering: "priority_desc",
  execution: "sequential",
  timeouts: { default_ms: 30_000, max_ms: 30_000, config_unit: "ms" },
  failure: { default: "open", term_grace_ms: 5_000 },
  settingsSchema: repoYamlSettingsSchema,
  strictFixes: [],

  sessionIdOf(input: NativeObject): string | undefined {
    // An empty id is no session (as common/native.ts sessionIdFrom): the chain runs sessionless.
    return typeof input.session_id === "string" && input.session_id !== "" ? input.session_id : undefined;
  },

  inputSchema: (event: string) => (Object.hasOwn(REPO_YAML_EVENTS, event) ? CONTEXT : undefined),

  subjectOf(input: NativeObject, event: string): SubjectFacts {
    if (event === "UserPromptSubmit") return promptSubject(input.user_message);
    if (!ABILITY.has(event) || typeof input.ability_id !== "string") return { kind: "event" };
    // The ability is the "tool"; its planned input (or the input it ran with) is the command.
    const command = typeof input.planned_input_summary === "string" ? input.planned_input_summary : typeof input.input_summary === "string" ? input.input_summary : undefined;
    const path = typeof input.tool_call_path === "string" ? input.tool_call_path : undefined;
    return { kind: "tool", tool: input.ability_id, ...(command !== undefined ? { command } : {}), ...(path !== undefined ? { path } : {}) };
  },

  reasonOf(output: NativeObject): string | undefined {
    // A block explains itself in an error log line (a failed blocking hook's too), else in a message to the user.
    const logs = Array.isArray(output.logs) ? (output.logs as Array<{ level?: unknown; message?: unknown }>) : [];
    const error = logs.find((l) => l.level === "error" && typeof l.message === "string");
    if (error !== undefined) return error.message as string;
    const messages = output.messages_to_user;
    return Array.isArray(messages) && typeof messages[0] === "string" ? messages[0] : undefined;
  },

  validateInput(input: unknown, event: string): Decoded<NativeObject> {
    if (!Object.hasOwn(REPO_YAML_EVENTS, event)) return { ok: false, error: `event: ${JSON.stringify(event)} is not a repo-yaml event (${REPO_YAML_EVENTS_LIST.join(", ")})` };
    if (!isObject(input)) return { ok: false, error: "input: must be the hook context object" };
    if (input.event_type !== undefined && input.event_type !== event) {
      return { ok: false, error: `event_type: the input names ${JSON.stringify(input.event_type)} but was sent to ${JSON.stringify(event)}` };
    }
    if (input.session_id !== undefined && typeof input.session_id !== "string") return { ok: false, error: "session_id: must be a string" };
    if (ABILITY.has(event) && typeof input.ability_id !== "string") return { ok: false, error: `ability_id: required (a string) on ${event}` };
    // SECURITY: the input bounds matcher and filter costs rest on (common/scan.ts), applied before any glob runs.
    if (typeof input.ability_id === "string" && input.ability_id.length > MAX_MATCHED_FIELD_LENGTH) {
      return { ok: false, error: `ability_id: must be at most ${MAX_MATCHED_FIELD_LENGTH} characters (a field matchers search)` };
    }
    if (input.duration_ms !== undefined && (typeof input.duration_ms !== "number" || input.duration_ms < 0)) {
      return { ok: false, error: "duration_ms: must be a non-negative number" };
    }
    for (const key of ["changed_files", "files_touched"]) {
      const v = input[key];
      if (v === undefined) continue;
      if (!Array.isArray(v) || !v.every((p) => typeof p === "string")) return { ok: false, error: `${key}: must be an array of strings` };
      if (v.length > MAX_CHANGED_PATHS) return { ok: false, error: `${key}: at most ${MAX_CHANGED_PATHS} paths (got ${v.length}; paths match filters scan)` };
      const chars = v.reduce((sum: number, p: string) => sum + p.length, 0);
      if (chars > MAX_CHANGED_PATHS_CHARS) return { ok: false, error: `${key}: at most ${MAX_CHANGED_PATHS_CHARS} characters in all (got ${chars}; paths match filters scan)` };
    }
    return { ok: true, value: { ...input, event_type: event } };
  },

  /** A `matcher` is a glob on `ability_id` (the same test as `match.ability_scope`); ability events only. */
  compileMatcher(pattern: string | undefined, event: string): CompiledMatcher {
    if (pattern === undefined || pattern === "" || pattern === "*") return MATCH_ALL;
    if (!ABILITY.has(event)) throw new Error(`matcher ${JSON.stringify(pattern)} on ${event}: only PreAbilityCall and PostAbilityCall have an ability_id to match`);
    let test: CompiledGlob;
    try {
      test = compileGlob(pattern);
    } catch (e) {
      throw new Error(`matcher ${JSON.stringify(pattern)}: not a valid glob: ${(e as Error).message}`);
    }
    return fieldMatcher((input) => input.ability_id, test);
  },

  compileFilter: compileRepoYamlFilter,
  blockingHooks: true,

  decode(raw: unknown): Decoded<NativeObject> {
    return decodeRepoYamlOutput(raw);
  },

  /**
   * A `handler.kind: script` hook run by the command lane (PROFILES §6, §8.8; spec §2.3 "a JSON object
   * on stdout"): exit 0 ⇒ stdout's JSON object (empty ⇒ nothing); anything else — another exit code,
   * a signal, a timeout, stdout that is not a JSON object — is the hook's failure: a non-fatal warning
   * log, or, for a `blocking` hook, `blocked_by_policy` (the executor's fail-closed rule).
   */
  parseCommandResult(result: CommandResult, hook: string): ParsedCommand {
    const NOT_JSON = "stdout is not a JSON object";
    const failed = (why: string): NativeObject => repoYamlProfile.failureOutput(hook, why, false, "", { strict: false, settings: {} });
    // No exit code means anything here: every non-zero exit is the shared rule's failure.
    return readCommandResult(result, { failed, plainStdout: () => ({ output: failed(NOT_JSON), failure: NOT_JSON }) });
  },

  failureOutput(hook: string, why: string, failClosed: boolean): NativeObject {
    if (failClosed) return { logs: [{ level: "error", message: `${hook} failed: ${why}` }], error: BLOCKED_BY_POLICY };
    return { logs: [{ level: "warn", message: `${hook} failed: ${why}` }] };
  },

  answerFields(output: NativeObject): readonly string[] {
    return answerFieldsOf(output);
  },

  verdictOf(output: NativeObject, event: string): Verdict {
    return event === "PreAbilityCall" && output.error === BLOCKED_BY_POLICY ? "block" : "observe";
  },

  reduce(outputs: readonly NativeObject[], event: string): Aggregated {
    // Without the definitions' `blocking` flags nothing can block: the executor must use reduceWithHooks.
    return foldRepoYaml(outputs.map((output, i) => ({ hook: `hook-${i}`, output })), event);
  },

  reduceWithHooks(entries: readonly HookOutputEntry[], event: string): Aggregated {
    return foldRepoYaml(entries, event);
  },

  present(aggregated: Aggregated): PresentedAnswer {
    return { native: aggregated, exit_code: aggregated.error === BLOCKED_BY_POLICY ? 2 : 0 };
  },

  refusalAnswer(reason: string): PresentedAnswer {
    // A failed blocking hook's answer (PROFILES §8.8), on every event: the orchestrator stops on the error.
    return { native: { logs: [{ level: "error", message: reason }], error: BLOCKED_BY_POLICY }, exit_code: 2, stderr: reason };
  },
};
