/* corpus {"id":"cpu-loop","category":"resource-exhaustion","title":"synchronous infinite loop is cut off at timeout_ms","hook":{"type":"pre_inject","timeout_ms":200,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  for (;;) {}
}
