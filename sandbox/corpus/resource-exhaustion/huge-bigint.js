/* corpus {"id":"huge-bigint","category":"resource-exhaustion","title":"BigInt shifted past the engine's maximum size","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"Maximum BigInt size exceeded","annotations":null,"recycled":"none"}} */
export function action(input) {
  const x = 1n << (2n ** 31n);
  return { status: "continue", annotations: { bits: String(x).length } };
}
