/* corpus {"id":"per-session-toplevel","category":"resource-exhaustion","title":"isolation per_session: heavy top-level code runs again for every new session; it must spend the 1 ms hook timeout, not run free","hook":{"type":"pre_inject","timeout_ms":1,"trust":"deployment","condition":null},"isolation":"per_session","calls":2,"sessions":["s-first","s-second"],"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"isolate"}} */
// Top-level work bounded by iteration count (≈ 10 ms of CPU): each new session's context reran it before the
// action, outside timeout_ms, and the hook was ok. Sized between the hook's 1 ms, which it must exceed on a
// fast idle machine, and the 1 s install budget (wall clock: isolated-vm ends ordinary code on the wall
// clock), which with 6e7 iterations and a 10 ms hook a loaded 2-core machine ran past at install.
let acc = 0;
for (let i = 0; i < 2e7; i++) acc += i & 1;
export function action(input) {
  return { status: "continue", annotations: { acc } };
}
