/* corpus {"id":"heap-growth","category":"resource-exhaustion","title":"retains ever more objects until the isolate heap limit","hook":{"type":"pre_inject","timeout_ms":30000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate","max_fire_ms":10000}} */
// The heap fills in ≈ 0.4 s of CPU; the budget is the maximum so that the memory limit, not the machine's load,
// decides (with 5 s a loaded 2-core machine ran past it first). max_fire_ms keeps the old cap.
export function action(input) {
  const keep = [];
  for (let i = 0; ; i++) {
    keep.push({ i, s: "x" + i, a: [i, i + 1, i + 2] });
  }
}
