/* corpus {"id":"spread-repeat","category":"process-killers","title":"[...'.'.repeat(2**28)] (isolated-vm issue #107 reported a process abort; measured: the memory limit catches it)","hook":{"type":"pre_inject","timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate"}} */
export function action(input) {
  const chars = [...".".repeat(2 ** 28)];
  return { status: "continue", annotations: { n: chars.length } };
}
