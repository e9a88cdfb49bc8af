/* corpus {"id":"redos-in-hook","category":"resource-exhaustion","title":"catastrophic-backtracking regular expression inside the action (one builtin call)","hook":{"type":"pre_inject","timeout_ms":200,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  const hit = /^(a+)+$/.test("a".repeat(64) + "!");
  return { status: "continue", annotations: { hit } };
}
