/* corpus {"id":"bigint-heap","category":"resource-exhaustion","title":"BigInts of ~100 MiB each (valid size, larger than the heap limit)","hook":{"type":"pre_inject","timeout_ms":30000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate","max_fire_ms":10000}} */
// Budget: the maximum, so that the memory limit, not the machine's load, decides (corpus README, "Verdicts that do not
// depend on the machine's load"); max_fire_ms keeps the old cap on the time to regain control.
export function action(input) {
  const keep = [];
  for (let i = 1n; i < 64n; i++) keep.push((1n << 800000000n) + i);
  return { status: "continue", annotations: { n: keep.length } };
}
