/* corpus {"id":"deep-annotations","category":"result-tampering","title":"annotations nested 2,500 objects deep from a session-trust hook (observe-only hooks may still annotate)","hook":{"type":"pre_inject","timeout_ms":2000,"trust":"session","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":"nests deeper than 64 levels","annotations":null,"recycled":"none"}} */
export function action() {
  let note = "bottom";
  for (let i = 0; i < 2500; i++) note = { why: note };
  return { status: "continue", annotations: { note } };
}
