/* corpus {"id":"lookahead","category":"predicate-dos","title":"lookahead assertion pattern is refused at install","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"field":"context.text","operator":"matches","value":"^(?=(a+)+b)"}},"calls":1,"expect":{"install_error":"INVALID_PREDICATE","recycled":"none"}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
