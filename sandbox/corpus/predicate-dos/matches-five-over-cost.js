/* corpus {"id":"matches-five-over-cost","category":"predicate-dos","title":"five matches leaves on one field (5 \u00d7 65536 scan units, one over maxCost) are refused at install","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"session","condition":{"combine":"or","children":[{"field":"context.text","operator":"matches","value":"^secret-0"},{"field":"context.text","operator":"matches","value":"^secret-1"},{"field":"context.text","operator":"matches","value":"^secret-2"},{"field":"context.text","operator":"matches","value":"^secret-3"},{"field":"context.text","operator":"matches","value":"^secret-4"}]}},"calls":1,"expect":{"install_error":"INVALID_PREDICATE","recycled":"none"}} */
export function action(input) {
  return { status: "continue", annotations: { ran: true } };
}
