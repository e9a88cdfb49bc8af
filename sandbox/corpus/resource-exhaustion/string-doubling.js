/* corpus {"id":"string-doubling","category":"resource-exhaustion","title":"string concatenation doubling until the maximum string length","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"Invalid string length","annotations":null,"recycled":"none"}} */
export function action(input) {
  let s = "ab";
  for (;;) s = s + s;
}
