/* corpus {"id":"throwing-getter","category":"result-tampering","title":"result getter that throws during serialization","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  return {
    status: "continue",
    get annotations() {
      throw new Error("getter says no");
    },
  };
}
