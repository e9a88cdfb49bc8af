/* corpus {"id":"input-shape","category":"exfiltration","title":"the hook input holds exactly the five spec fields and nothing of the host (no config, keys, paths)","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"keys":["chain_state","constitution","context","event","session"],"proto_is_object":true,"chain_state":{}},"recycled":"none"}} */
export function action(input) {
  return {
    status: "continue",
    annotations: {
      keys: Reflect.ownKeys(input).map(String).sort(),
      proto_is_object: Object.getPrototypeOf(input) === Object.prototype,
      chain_state: input.chain_state,
    },
  };
}
