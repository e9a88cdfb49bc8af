import jsonPatch, { type Operation } from "fast-json-patch";

/**
 * The modification a hook made, as an RFC 6902 JSON Patch from `before` to `after` (spec §8.2.3:
 * "diff, not full content"), computed by fast-json-patch. Values in the patch are copies. When either
 * side is not an object or array, or their kinds differ, the patch is a single whole-document
 * `replace`. Added or replaced values still appear in the patch: pass the record through the
 * writer's redactor.
 *
 * @example
 * ```ts
 * diffForAudit({ a: 1, b: 2 }, { a: 1, b: 3 }); // [{ op: "replace", path: "/b", value: 3 }]
 * ```
 */
export function diffForAudit(before: unknown, after: unknown): Operation[] {
  const b = toJson(before);
  const a = toJson(after);
  const container = (v: unknown) => (v !== null && typeof v === "object" ? (Array.isArray(v) ? "array" : "object") : null);
  const kind = container(b);
  if (kind === null || kind !== container(a)) {
    return JSON.stringify(a) === JSON.stringify(b) ? [] : [{ op: "replace", path: "", value: a }];
  }
  return jsonPatch.compare(b as object, a as object);
}

/** JSON data only (what a hook result is anyway); `undefined` becomes null. */
function toJson(value: unknown): unknown {
  return value === undefined ? null : JSON.parse(JSON.stringify(value));
}
