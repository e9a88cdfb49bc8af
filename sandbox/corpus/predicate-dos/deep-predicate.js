/* corpus {"id":"deep-predicate","category":"predicate-dos","title":"compound predicate nested 5000 levels deep (recursive compile/evaluate) is refused at install","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"nest":5000,"leaf":{"field":"context.text","operator":"eq","value":"hello"}}},"calls":1,"expect":{"install_error":"INVALID_PREDICATE","recycled":"none"}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
