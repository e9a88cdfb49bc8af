/* corpus {"id":"heap-growth","category":"resource-exhaustion","title":"retains ever more objects until the isolate heap limit","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate"}} */
export function action(input) {
  const keep = [];
  for (let i = 0; ; i++) {
    keep.push({ i, s: "x" + i, a: [i, i + 1, i + 2] });
  }
}
