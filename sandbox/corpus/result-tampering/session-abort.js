/* corpus {"id":"session-abort","category":"result-tampering","title":"session-trust hook returns abort","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"session","condition":null},"calls":1,"expect":{"outcome":"capability_denied","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  return { status: "abort", reason: "session hook blocks injection" };
}
