import { z } from "zod";
import type { CompiledMatcher, NativeObject } from "../types.js";
import { describeIssues } from "../../model/zod-errors.js";
import { compileGlob, type CompiledGlob } from "../common/glob.js";
import { costedMatcher } from "../common/native.js";
import { MAX_CHANGED_PATHS, MAX_CHANGED_PATHS_CHARS, MAX_MATCHED_FIELD_LENGTH, scanUnits, type ScanMeter } from "../common/scan.js";

/** A hook file's `match` (PROFILES §8.8): every filter given must hold. */
export const RepoYamlMatch = z.strictObject({
  ability_scope: z.string().min(1).optional(),
  min_duration_ms: z.number().int().nonnegative().optional(),
  only_if_changed_paths: z.array(z.string().min(1)).min(1).optional(),
});
export type RepoYamlMatch = z.infer<typeof RepoYamlMatch>;

const ABILITY_EVENTS = new Set(["PreAbilityCall", "PostAbilityCall"]);

function glob(pattern: string, field: string): CompiledGlob {
  try {
    return compileGlob(pattern);
  } catch (e) {
    throw new Error(`match.${field}: ${JSON.stringify(pattern)} is not a valid glob: ${(e as Error).message}`);
  }
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((s): s is string => typeof s === "string") : [];
}

/**
 * Compile a hook's `match` for `event` at build time; throws an Error naming the field that is wrong.
 *
 * - `ability_scope`: glob against the input's `ability_id` (`fs.*`, `billing_*`); `"*"` matches every
 *   call. Only on PreAbilityCall/PostAbilityCall, the events that have an ability.
 * - `min_duration_ms`: the input's `duration_ms` must be at least this; an input without `duration_ms`
 *   passes only a minimum of 0. Only on PostAbilityCall (the one event with a duration).
 * - `only_if_changed_paths`: globs; at least one path of the input's `changed_files` (or, on
 *   UserPromptSubmit, `files_touched`) must match one of them. No changed paths ⇒ the hook does not run.
 *
 * Its `cost` (common/scan.ts) is the most scan units it may charge on an input `validateInput`
 * accepts: `ability_scope` scans one `ability_id` (≤ MAX_MATCHED_FIELD_LENGTH characters), each
 * `only_if_changed_paths` glob every changed path (≤ MAX_CHANGED_PATHS of them, ≤
 * MAX_CHANGED_PATHS_CHARS characters in all), each weighted by its RE2 program size.
 *
 * @example
 * ```ts
 * const f = compileRepoYamlFilter({ ability_scope: "fs.*" }, "PreAbilityCall");
 * f({ ability_id: "fs.write" }); // true
 * f({ ability_id: "net.get" });  // false
 * ```
 */
export function compileRepoYamlFilter(match: unknown, event: string): CompiledMatcher {
  const parsed = RepoYamlMatch.safeParse(match);
  if (!parsed.success) {
    throw new Error(describeIssues(parsed.error, "match").map((i) => `${i.field}: ${i.rule}`).join("; "));
  }
  const m = parsed.data;
  const tests: Array<(input: NativeObject, meter?: ScanMeter) => boolean> = [];
  let cost = 0;
  if (m.ability_scope !== undefined && m.ability_scope !== "*") {
    if (!ABILITY_EVENTS.has(event)) throw new Error(`match.ability_scope: ${event} has no ability_id (only PreAbilityCall and PostAbilityCall do)`);
    const test = glob(m.ability_scope, "ability_scope");
    tests.push((input, meter) => typeof input.ability_id === "string" && test(input.ability_id, meter));
    cost += scanUnits(MAX_MATCHED_FIELD_LENGTH, test.programSize);
  }
  if (m.min_duration_ms !== undefined && m.min_duration_ms > 0) {
    if (event !== "PostAbilityCall") throw new Error(`match.min_duration_ms: ${event} has no duration_ms (only PostAbilityCall does)`);
    const min = m.min_duration_ms;
    tests.push((input) => typeof input.duration_ms === "number" && input.duration_ms >= min);
  }
  if (m.only_if_changed_paths !== undefined) {
    const globs = m.only_if_changed_paths.map((p) => glob(p, "only_if_changed_paths"));
    tests.push((input, meter) => {
      const paths = input.changed_files !== undefined ? strings(input.changed_files) : strings(input.files_touched);
      return paths.some((p) => globs.some((g) => g(p, meter)));
    });
    // Σ over paths of (length + 1) × program size, for each glob: every glob may scan every path.
    for (const g of globs) cost += (MAX_CHANGED_PATHS_CHARS + MAX_CHANGED_PATHS) * g.programSize;
  }
  return costedMatcher((input, meter) => tests.every((t) => t(input, meter)), cost);
}
