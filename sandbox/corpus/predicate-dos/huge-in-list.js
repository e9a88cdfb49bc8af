/* corpus {"id":"huge-in-list","category":"predicate-dos","title":"in operator with a 20k-element list against a 100k-character field completes quickly","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"field":"context.text","operator":"in","value":{"range":["needle-",20000]}}},"input":{"context":{"text":{"repeat":["n",100000]}}},"calls":1,"expect":{"outcome":"skipped_predicate","status":"continue","error_matches":null,"annotations":null,"recycled":"none","max_fire_ms":1000}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
