/* corpus {"id":"bigint-result","category":"result-tampering","title":"a BigInt inside annotations (not representable in JSON)","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  return { status: "continue", annotations: { n: 10n ** 30n } };
}
