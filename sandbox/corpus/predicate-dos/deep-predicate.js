/* corpus {"id":"deep-predicate","category":"predicate-dos","title":"compound predicate nested 1000 levels deep (recursive validation) is refused at install with a coded error","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"nest":1000,"leaf":{"field":"context.text","operator":"eq","value":"hello"}}},"calls":1,"expect":{"install_error":"INVALID_PREDICATE","recycled":"none"}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
