/* corpus {"id":"forged-duration","category":"result-tampering","title":"guest-supplied duration_ms is ignored (the runtime measures)","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"x":1},"recycled":"none","max_duration_ms":1000}} */
export function action(input) {
  return { status: "continue", duration_ms: 1e12, annotations: { x: 1 } };
}
