/* corpus {"id":"proto-field-path","category":"predicate-dos","title":"field path through inherited properties (context.constructor.name) never resolves on the host","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"field":"context.constructor.name","operator":"eq","value":"Object"}},"calls":1,"expect":{"outcome":"skipped_predicate","status":"continue","error_matches":null,"annotations":null,"recycled":"none","max_fire_ms":1000}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
