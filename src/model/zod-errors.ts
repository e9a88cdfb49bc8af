import type { z } from "zod";
import { IDENTIFIER } from "./names.js";


/**
 * A field path as operators write it: `condition.children[0].operator`, `metadata["a b"]`.
 *
 * @example
 * ```ts
 * formatPath(["condition", "children", 0, "operator"]); // "condition.children[0].operator"
 * ```
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else if (typeof key === "string" && IDENTIFIER.regex.test(key)) out += out === "" ? key : `.${key}`;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/** `hooks[2].timeout_ms` style path of a zod issue. */
export function issuePath(path: readonly PropertyKey[], base = ""): string {
  let out = base;
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`;
    else out += out === "" ? String(key) : `.${String(key)}`;
  }
  return out === "" ? "(root)" : out;
}

/** Every issue of a failed zod parse as `{ field, rule }`, field paths rooted at `base`. */
export function describeIssues(error: z.ZodError, base = ""): Array<{ field: string; rule: string }> {
  return error.issues.map((issue) => {
    let rule = issue.message;
    if (issue.code === "unrecognized_keys") rule = `unknown field(s): ${issue.keys.join(", ")}`;
    return { field: issuePath(issue.path, base), rule };
  });
}
