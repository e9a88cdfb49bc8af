/* corpus {"id":"toplevel-loop","category":"resource-exhaustion","title":"infinite loop in the bundle's top-level code (runs at load, before any hook)","hook":{"type":"pre_inject","timeout_ms":200,"trust":"deployment","condition":null},"calls":1,"expect":{"install_error":"INVALID_BUNDLE","recycled":"none"}} */
for (;;) {}
export function action(input) {
  return { status: "continue" };
}
