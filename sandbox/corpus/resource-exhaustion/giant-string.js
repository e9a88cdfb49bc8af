/* corpus {"id":"giant-string","category":"resource-exhaustion","title":"flat 512 MiB strings (the engine's maximum string length) kept alive in module state over 4 calls","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":4,"expect":{"outcome":"error","status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate"}} */
const keep = [];
export function action(input) {
  const s = "x".repeat(2 ** 29 - 24);
  keep.push(s);
  return { status: "continue", annotations: { at: s.indexOf("y"), kept: keep.length } };
}
