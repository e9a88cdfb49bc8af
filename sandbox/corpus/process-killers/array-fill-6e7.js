/* corpus {"id":"array-fill-6e7","category":"process-killers","title":"new Array(6e7).fill() (isolated-vm issue #186 reported a fatal OOM; measured: the memory limit catches it)","hook":{"type":"pre_inject","timeout_ms":30000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"isolate memory limit exceeded","annotations":null,"recycled":"isolate"}} */
// Array#fill ignores termination, so the only thing that can stop it is the memory limit, after 6–9 s of CPU.
// Its budget is the maximum (30 s, 34 s of CPU with the watchdog's grace) so the memory limit always wins. The
// watchdog judges a hook that ignores termination on the CPU its thread used (src/pool/watchdog.ts): on a
// loaded machine it takes longer but still ends in that `error` (it ended in `timeout` at load 16–22 while the
// watchdog went by the wall clock, and isolated-vm's own 5 s give-up suspended the thread: `crashed`).
export function action(input) {
  const a = new Array(6e7).fill();
  return { status: "continue", annotations: { n: a.length } };
}
