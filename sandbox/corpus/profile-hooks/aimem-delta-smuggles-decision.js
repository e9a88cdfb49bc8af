/* corpus {"id":"aimem-delta-smuggles-decision","category":"profile-hooks","title":"an ai-memory pre_store modify whose delta carries action/reason/code and __proto__ keys, to smuggle a decision or pollute the payload the next hook sees","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"ai-memory","event":"pre_store","input":{"payload":{"content":"original","namespace":"team/a"}},"companion":true,
  "expect":{"native":{"action":"modify","delta.content":"rewritten"},"native_absent":["delta.action","delta.reason","delta.code","delta.polluted","reason","code"]}},
 "expect":{"outcome":"ok","status":"modify","error_matches":null,"annotations":null,"recycled":"none"}} */
// Only memory fields are a delta (unknown keys dropped, as upstream's serde does): the answer stays a
// modify; nothing in the delta can turn it into a deny or an allow with another code.
export function action() {
  return JSON.parse('{"action":"modify","delta":{"content":"rewritten","action":"deny","reason":"smuggled","code":200,"__proto__":{"polluted":1}}}');
}
