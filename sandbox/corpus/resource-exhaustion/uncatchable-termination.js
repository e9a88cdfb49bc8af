/* corpus {"id":"uncatchable-termination","category":"resource-exhaustion","title":"loop that tries to catch and survive its own termination (try/catch/finally around the loop)","hook":{"type":"pre_inject","timeout_ms":200,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  for (;;) {
    try {
      for (;;) {}
    } catch (e) {
      // termination must not be catchable
    } finally {
      for (;;) {}
    }
  }
}
