/* corpus {"id":"getter-loop","category":"result-tampering","title":"result getter that never returns (serialization must run under the hook timeout, inside the isolate)","hook":{"type":"pre_inject","timeout_ms":200,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action(input) {
  return {
    get status() {
      for (;;) {}
    },
  };
}
