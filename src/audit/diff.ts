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

/**
 * Largest modification diff kept, serialized bytes: the audit writer's default per-field cap. A diff
 * can be many times larger than the result that caused it (a 0.85 MiB context of 80,000 keys gives a
 * 3.8 MiB patch, and redacting and hashing it cost the runtime's main thread about a second).
 */
export const MAX_AUDIT_DIFF_BYTES = 65_536;

/**
 * The diff, or, above `maxBytes`, one marker element `{ _truncated: true, ops, bytes }` in its place
 * (the same marker vocabulary as truncated annotations). Applied in the sandbox worker, so an oversized
 * patch never crosses to the host process or the runtime.
 *
 * @example
 * ```ts
 * capAuditDiff(diffForAudit(before, after)); // [{ op: "replace", path: "/b", value: 3 }] or [{ _truncated: true, ops: 80001, bytes: 3828927 }]
 * ```
 */
export function capAuditDiff(ops: Operation[], maxBytes: number = MAX_AUDIT_DIFF_BYTES): Operation[] | [{ _truncated: true; ops: number; bytes: number }] {
  // Every op holds at least `{"op":"add","path":""}` (22 bytes): a cheap refusal for huge patches.
  if (ops.length * 22 > maxBytes) return [{ _truncated: true, ops: ops.length, bytes: -1 }];
  const bytes = Buffer.byteLength(JSON.stringify(ops), "utf8");
  return bytes > maxBytes ? [{ _truncated: true, ops: ops.length, bytes }] : ops;
}
