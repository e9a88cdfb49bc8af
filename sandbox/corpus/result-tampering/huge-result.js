/* corpus {"id":"huge-result","category":"result-tampering","title":"result of 2 MiB (over the 1 MiB result cap) in one annotation string","hook":{"type":"pre_inject","timeout_ms":2000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  return { status: "continue", annotations: { blob: "A".repeat(2 * 1024 * 1024) } };
}
