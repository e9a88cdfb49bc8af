/* corpus {"id":"deep-result-async","category":"result-tampering","title":"an async action resolving to annotations nested 3,000 arrays deep (the promise-settlement path of the prelude)","hook":{"type":"post_select","timeout_ms":2000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":"nests deeper than 64 levels","annotations":null,"recycled":"none"}} */
export async function action(input) {
  await null;
  let deep = [];
  for (let i = 0; i < 3000; i++) deep = [deep];
  return { status: "continue", annotations: { deep } };
}
