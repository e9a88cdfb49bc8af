/* corpus {"id":"wide-result","category":"result-tampering","title":"modified_context with 300k keys (several MiB once serialized)","hook":{"type":"pre_inject","timeout_ms":3000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  const ctx = {};
  for (let i = 0; i < 300000; i++) ctx["key_" + i] = i;
  return { status: "modify", modified_context: ctx };
}
