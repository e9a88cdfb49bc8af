/* corpus {"id":"chain-state-leak","category":"cross-call","title":"chain_state written in call 1 is not visible in call 2 (it lives for one chain only)","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":2,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"call":2,"chain_state":{}},"recycled":"none"}} */
let call = 0;
export function action(input) {
  call++;
  if (call === 1) {
    input.chain_state.secret = "from-call-1";
    input.chain_state.nested = { a: 1 };
    return { status: "continue" };
  }
  return { status: "continue", annotations: { call, chain_state: input.chain_state } };
}
