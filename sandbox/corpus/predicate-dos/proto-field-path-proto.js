/* corpus {"id":"proto-field-path-proto","category":"predicate-dos","title":"field path context.__proto__.hasOwnProperty with operator neq null never resolves on the host","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"field":"context.__proto__.hasOwnProperty","operator":"neq","value":null}},"calls":1,"expect":{"outcome":"skipped_predicate","status":"continue","error_matches":null,"annotations":null,"recycled":"none","max_fire_ms":1000}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
