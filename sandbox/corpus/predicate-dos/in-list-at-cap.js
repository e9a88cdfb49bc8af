/* corpus {"id":"in-list-at-cap","category":"predicate-dos","title":"in operator with a 1024-element list against a 65k-character field completes quickly","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"field":"context.text","operator":"in","value":{"range":["needle-",1024]}}},"calls":1,"expect":{"outcome":"skipped_predicate","status":"continue","error_matches":null,"annotations":null,"recycled":"none","max_fire_ms":1000},"input":{"context":{"text":{"repeat":["n",65000]}}}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
