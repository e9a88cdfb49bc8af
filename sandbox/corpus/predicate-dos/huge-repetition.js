/* corpus {"id":"huge-repetition","category":"predicate-dos","title":"nested counted repetition ((a{1000}){1000}){1000} (program-size blow-up) is refused at install","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"field":"context.text","operator":"matches","value":"((a{1000}){1000}){1000}"}},"calls":1,"expect":{"install_error":"INVALID_PREDICATE","recycled":"none"}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
