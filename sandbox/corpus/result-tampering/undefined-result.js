/* corpus {"id":"undefined-result","category":"result-tampering","title":"action returns undefined","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  return undefined;
}
