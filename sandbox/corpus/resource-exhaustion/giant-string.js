/* corpus {"id":"giant-string","category":"resource-exhaustion","title":"flat 512 MiB strings (the engine's maximum string length) kept alive in module state over 4 calls","hook":{"type":"pre_inject","timeout_ms":30000,"trust":"deployment","condition":null},"calls":4,"expect":{"outcome":"error","outcome_also":["ok"],"status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate","max_fire_ms":10000}} */
// Each call spends ≈ 0.4 s of CPU on its string; the budget is the maximum so that the memory limit, not the
// machine's load, decides (max_fire_ms keeps the old cap on the time to regain control).
// The calls alternate between two worker threads (an isolate each), and isolated-vm notices the
// overshoot asynchronously: which call fails, and whether the last call runs in a fresh isolate
// (outcome ok, kept 1), depends on scheduling. Either way the isolate is recycled, the process is not,
// and the canary serves afterwards — that containment is what this case asserts.
const keep = [];
export function action(input) {
  const s = "x".repeat(2 ** 29 - 24);
  keep.push(s);
  return { status: "continue", annotations: { at: s.indexOf("y"), kept: keep.length } };
}
