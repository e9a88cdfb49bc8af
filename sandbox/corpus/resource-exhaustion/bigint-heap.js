/* corpus {"id":"bigint-heap","category":"resource-exhaustion","title":"BigInts of ~100 MiB each (valid size, larger than the heap limit)","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate"}} */
export function action(input) {
  const keep = [];
  for (let i = 1n; i < 64n; i++) keep.push((1n << 800000000n) + i);
  return { status: "continue", annotations: { n: keep.length } };
}
