/* corpus {"id":"spread-repeat","category":"process-killers","title":"[...'.'.repeat(2**28)] (isolated-vm issue #107 reported a process abort; measured: the memory limit catches it)","hook":{"type":"pre_inject","timeout_ms":30000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate","max_fire_ms":10000}} */
// Budget: the maximum, so that the memory limit, not the machine's load, decides (corpus README, "Verdicts that do not
// depend on the machine's load"); max_fire_ms keeps the old cap on the time to regain control.
export function action(input) {
  const chars = [...".".repeat(2 ** 28)];
  return { status: "continue", annotations: { n: chars.length } };
}
