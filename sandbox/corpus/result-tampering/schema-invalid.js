/* corpus {"id":"schema-invalid","category":"result-tampering","title":"unknown status value plus an unexpected top-level key","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  return { status: "explode", fail_closed: false, priority: 100 };
}
