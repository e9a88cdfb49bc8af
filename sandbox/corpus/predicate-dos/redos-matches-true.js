/* corpus {"id":"redos-matches-true","category":"predicate-dos","title":"control: a safe matches predicate that is true on a 65k-character field (just under the 65536 input cap) lets the hook run","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"field":"context.text","operator":"matches","value":"^a+!$"}},"input":{"context":{"text":{"repeat":["a",65000],"suffix":"!"}}},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"ran":true},"recycled":"none","max_fire_ms":1000}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
