/* corpus {"id":"depth-over-cap","category":"predicate-dos","title":"compound predicate 17 levels deep (one over the documented maxDepth 16) is refused at install","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"nest":16,"leaf":{"field":"context.text","operator":"eq","value":"hello"}}},"calls":1,"expect":{"install_error":"INVALID_PREDICATE","recycled":"none"}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
