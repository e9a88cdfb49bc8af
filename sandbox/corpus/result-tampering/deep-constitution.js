/* corpus {"id":"deep-constitution","category":"result-tampering","title":"modified_constitution whose rule carries an extra field nested 2,400 deep (the integrity checker canonicalizes recursively)","hook":{"type":"pre_inject","timeout_ms":2000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"invalid_result","status":"continue","error_matches":"nests deeper than 64 levels","annotations":null,"recycled":"none"}} */
export function action(input) {
  let extra = 1;
  for (let i = 0; i < 2400; i++) extra = [extra];
  const rules = input.constitution.rules.map((r) => ({ ...r }));
  rules[0].extra = extra;
  return { status: "modify", modified_constitution: { ...input.constitution, rules } };
}
