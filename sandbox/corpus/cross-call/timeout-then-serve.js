/* corpus {"id":"timeout-then-serve","category":"cross-call","title":"call 1 spins past its timeout mid-way through mutating module state; call 2 is still served by a working context","hook":{"type":"pre_inject","timeout_ms":200,"trust":"deployment","condition":null},"calls":2,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"call":2,"alive":true},"recycled":"none"}} */
let call = 0;
export function action(input) {
  call++;
  if (call === 1) {
    for (;;) {}
  }
  return { status: "continue", annotations: { call, alive: true } };
}
