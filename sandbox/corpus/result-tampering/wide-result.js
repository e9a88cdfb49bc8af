/* corpus {"id":"wide-result","category":"result-tampering","title":"modified_context with 300k keys (several MiB once serialized)","hook":{"type":"pre_inject","timeout_ms":30000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":null,"annotations":null,"recycled":"none","max_fire_ms":8000}} */
// Building and serializing the result takes ≈ 0.3–0.6 s of CPU. The attack is the size, not the time, so the
// budget is the maximum: isolated-vm ends ordinary guest code on the wall clock, and with 3 s a loaded 2-core
// machine (load 16–22) ran past it first (outcome `timeout`). max_fire_ms keeps the old cap on the time to
// regain control (the harness counts the time the host waited for a CPU out of it).
export function action(input) {
  const ctx = {};
  for (let i = 0; i < 300000; i++) ctx["key_" + i] = i;
  return { status: "modify", modified_context: ctx };
}
