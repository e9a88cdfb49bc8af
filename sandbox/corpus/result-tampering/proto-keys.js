/* corpus {"id":"proto-keys","category":"result-tampering","title":"__proto__ and constructor.prototype keys in modified_context and annotations do not pollute the host","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"modify","error_matches":null,"annotations":null,"recycled":"none","context":{"text":"hello","dimensions":{"data_sensitivity":3},"safe":1}}} */
// JSON.parse makes "__proto__" an own key; a host that copies the parsed result with Object.assign,
// spread into a plain object or a naive deep merge would set the prototype instead. The harness
// also checks that no attack leaves a `polluted` property visible anywhere in the next chain.
export function action(input) {
  return JSON.parse(
    '{"status":"modify","modified_context":{"__proto__":{"polluted":"yes","status":"abort"},' +
      '"constructor":{"prototype":{"polluted":"yes"}},"text":"hello","dimensions":{"data_sensitivity":3},"safe":1},' +
      '"annotations":{"__proto__":{"polluted":"yes"}}}',
  );
}
