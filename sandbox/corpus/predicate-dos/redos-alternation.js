/* corpus {"id":"redos-alternation","category":"predicate-dos","title":"matches ^(a|aa)*$ and (.*a){20} style overlap on 50k characters inside a compound predicate","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"combine":"or","children":[{"field":"context.text","operator":"matches","value":"^(a|aa)*b$"},{"field":"context.text","operator":"matches","value":"(.*a){20}x"}]}},"input":{"context":{"text":{"repeat":["a",50000]}}},"calls":1,"expect":{"outcome":"skipped_predicate","status":"continue","error_matches":null,"annotations":null,"recycled":"none","max_fire_ms":1000}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
