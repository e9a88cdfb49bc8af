/* corpus {"id":"icu-locale-list-length","category":"resource-exhaustion","title":"a locales 'list' {length: 2**32-1} handed to toLocaleUpperCase: V8 walks it index by index in C++ for minutes, ignoring termination; refused before","hook":{"type":"pre_inject","timeout_ms":2000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"String\\.prototype\\.toLocaleUpperCase: more than 8 locales","annotations":null,"max_duration_ms":1000,"recycled":"none"}} */
// CanonicalizeLocaleList reads `length` once and probes every index with HasProperty in a C++
// loop that never checks for termination; a proxy or a plain object with a huge length is enough.
export function action(input) {
  const locales = { length: 2 ** 32 - 1 };
  return { status: "continue", annotations: { up: "x".toLocaleUpperCase(locales) } };
}
