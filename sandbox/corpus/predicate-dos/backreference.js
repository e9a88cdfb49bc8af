/* corpus {"id":"backreference","category":"predicate-dos","title":"backreference pattern (no linear-time engine supports it) is refused at install","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"field":"context.text","operator":"matches","value":"^(a+)+\\1$"}},"calls":1,"expect":{"install_error":"INVALID_PREDICATE","recycled":"none"}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
