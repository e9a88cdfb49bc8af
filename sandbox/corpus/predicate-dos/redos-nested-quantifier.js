/* corpus {"id":"redos-nested-quantifier","category":"predicate-dos","title":"matches (a+)+$ against 65k a's and a '!' (catastrophic for a backtracking engine; under the input-length cap so the engine really runs)","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"field":"context.text","operator":"matches","value":"(a+)+$"}},"input":{"context":{"text":{"repeat":["a",65000],"suffix":"!"}}},"calls":1,"expect":{"outcome":"skipped_predicate","status":"continue","error_matches":null,"annotations":null,"recycled":"none","max_fire_ms":1000}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
