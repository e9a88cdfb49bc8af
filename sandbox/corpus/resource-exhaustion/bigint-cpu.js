/* corpus {"id":"bigint-cpu","category":"resource-exhaustion","title":"one huge BigInt power and decimal conversion: a builtin that ignores the isolate timeout, so the host deadline has to act","hook":{"type":"pre_inject","timeout_ms":300,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"process"}} */
export function action(input) {
  let digits = 0;
  for (let e = 1000000n; ; e += 1000000n) digits += (7n ** e).toString().length;
}
