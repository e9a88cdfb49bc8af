/* corpus {"id":"async-getter-loop","category":"result-tampering","title":"async action resolving to an object whose toJSON never returns","hook":{"type":"pre_inject","timeout_ms":200,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"isolate"}} */
export async function action(input) {
  await null;
  return {
    status: "continue",
    toJSON() {
      for (;;) {}
    },
  };
}
