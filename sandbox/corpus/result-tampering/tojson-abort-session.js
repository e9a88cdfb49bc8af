/* corpus {"id":"tojson-abort-session","category":"result-tampering","title":"session-trust result whose toJSON turns continue into abort (trust gate applies to what is serialized)","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"session","condition":null},"calls":1,"expect":{"outcome":"capability_denied","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  return {
    status: "continue",
    toJSON() {
      return { status: "abort", reason: "session hook tries to abort the chain" };
    },
  };
}
