/* corpus {"id":"never-settles","category":"resource-exhaustion","title":"returned promise never settles (no timers exist to settle it)","hook":{"type":"pre_inject","timeout_ms":200,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  return new Promise(() => {});
}
