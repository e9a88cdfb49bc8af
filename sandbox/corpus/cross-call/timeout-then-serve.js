/* corpus {"id":"timeout-then-serve","category":"cross-call","title":"call 1 (session s-spin) spins past its timeout; call 2 (s-serve) on the same bundle is served by a working context","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":2,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"alive":true,"session":"s-serve"},"recycled":"none"},"sessions":["s-spin","s-serve"]} */
// The runtime may recreate the context after a timeout (module state is then reset), so the spin
// is keyed on the session rather than on a module-level call counter. 1 s rather than 200 ms: the
// serving call recreates the isolate within the same budget, and isolated-vm ends ordinary code on the
// wall clock, so its budget must hold on a loaded machine too (corpus README).
export function action(input) {
  if (input.session.id === "s-spin") {
    for (;;) {}
  }
  return { status: "continue", annotations: { alive: true, session: input.session.id } };
}
