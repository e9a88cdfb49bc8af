/* corpus {"id":"proto-field-path-proto","category":"predicate-dos","title":"field path context.__proto__.hasOwnProperty is refused at install","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"field":"context.__proto__.hasOwnProperty","operator":"neq","value":null}},"calls":1,"expect":{"install_error":"INVALID_PREDICATE","recycled":"none"}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
