/* corpus {"id":"spread-repeat","category":"process-killers","title":"[...'.'.repeat(2**28)] (isolated-vm issue #107: spreading a huge string aborts the process)","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"crashed","status":"continue","error_matches":null,"annotations":null,"recycled":"process"}} */
export function action(input) {
  const chars = [...".".repeat(2 ** 28)];
  return { status: "continue", annotations: { n: chars.length } };
}
