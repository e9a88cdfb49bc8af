/* corpus {"id":"deep-chain-state","category":"result-tampering","title":"chain_state nested 2,300 deep, left for later hooks' predicates and inputs","hook":{"type":"pre_inject","timeout_ms":2000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":"chain_state nests deeper than 64 levels","annotations":null,"recycled":"none"}} */
export function action(input) {
  let deep = {};
  for (let i = 0; i < 2300; i++) deep = { d: deep };
  input.chain_state.deep = deep;
  return { status: "continue" };
}
