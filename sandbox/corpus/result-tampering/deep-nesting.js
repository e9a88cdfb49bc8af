/* corpus {"id":"deep-nesting","category":"result-tampering","title":"modified_context nested 100k levels deep in 200 KiB (recursive host code would overflow its stack)","hook":{"type":"pre_inject","timeout_ms":2000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
// Installed before the runtime freezes intrinsics: if the prelude serializes with the global
// JSON.stringify at call time, this hands the host the deep text directly; if it captured the
// original, the guest's own serialization overflows. Either way the host must not crash.
const DEPTH = 100000;
const text = '{"status":"modify","modified_context":{"deep":' + "[".repeat(DEPTH) + "]".repeat(DEPTH) + "}}";
const original = JSON.stringify;
try {
  JSON.stringify = function (v, ...rest) {
    return v && v.__deep ? text : original.call(JSON, v, ...rest);
  };
} catch (e) {}
export function action(input) {
  let deep = [];
  for (let i = 1; i < DEPTH; i++) deep = [deep];
  return { __deep: true, status: "modify", modified_context: { deep } };
}
