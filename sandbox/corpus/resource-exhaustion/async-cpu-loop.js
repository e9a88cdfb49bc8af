/* corpus {"id":"async-cpu-loop","category":"resource-exhaustion","title":"infinite loop after the first await (runs in a microtask, outside the synchronous call)","hook":{"type":"pre_inject","timeout_ms":200,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"isolate"}} */
export async function action(input) {
  await null;
  for (;;) {}
}
