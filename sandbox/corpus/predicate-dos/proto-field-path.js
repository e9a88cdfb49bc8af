/* corpus {"id":"proto-field-path","category":"predicate-dos","title":"field path through inherited properties (context.constructor.name) is refused at install","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"field":"context.constructor.name","operator":"eq","value":"Object"}},"calls":1,"expect":{"install_error":"INVALID_PREDICATE","recycled":"none"}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
