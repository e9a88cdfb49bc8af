/* corpus {"id":"non-json-values","category":"result-tampering","title":"functions, symbols, undefined, NaN, Infinity, Date, Map and a symbol key take their JSON.stringify forms","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"arr":[null,null,null],"nan":null,"inf":null,"date":"1970-01-01T00:00:00.000Z","map":{},"kept":1},"recycled":"none"}} */
export function action(input) {
  return {
    status: "continue",
    annotations: {
      fn: () => 1, sym: Symbol("s"), undef: undefined, [Symbol("k")]: "hidden",
      arr: [() => 1, Symbol("x"), undefined], nan: NaN, inf: -Infinity,
      date: new Date(0), map: new Map([["a", 1]]), kept: 1,
    },
  };
}
