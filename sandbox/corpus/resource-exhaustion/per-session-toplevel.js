/* corpus {"id":"per-session-toplevel","category":"resource-exhaustion","title":"isolation per_session: heavy top-level code runs again for every new session; it must spend the 10 ms hook timeout, not run free","hook":{"type":"pre_inject","timeout_ms":10,"trust":"deployment","condition":null},"isolation":"per_session","calls":2,"sessions":["s-first","s-second"],"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"isolate"}} */
// Top-level work bounded by iteration count (tens to hundreds of ms, under the 1 s install budget):
// each new session's context reran it before the action, outside timeout_ms, and the hook was ok.
let acc = 0;
for (let i = 0; i < 6e7; i++) acc += i & 1;
export function action(input) {
  return { status: "continue", annotations: { acc } };
}
