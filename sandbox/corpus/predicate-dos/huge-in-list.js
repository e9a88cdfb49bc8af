/* corpus {"id":"huge-in-list","category":"predicate-dos","title":"in operator with a 20k-element list is refused at install (cap 1024)","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":{"field":"context.text","operator":"in","value":{"range":["needle-",20000]}}},"calls":1,"expect":{"install_error":"INVALID_PREDICATE","recycled":"none"}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
