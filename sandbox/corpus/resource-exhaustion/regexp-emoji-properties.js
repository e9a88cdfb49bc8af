/* corpus {"id":"regexp-emoji-properties","category":"resource-exhaustion","title":"a 13 KB RegExp of 1,000 \\p{RGI_Emoji} (flag v): ~1.2 GB of irregexp zone memory outside the isolate limit; refused before parsing","hook":{"type":"pre_inject","timeout_ms":2000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"RegExp: more Unicode property escapes","annotations":null,"max_duration_ms":1000,"recycled":"none"}} */
// Short enough for any length cap: the cost is per property of strings (each expands to thousands
// of emoji sequences in zone memory), so the sandbox counts property escapes, not only characters.
export function action(input) {
  const re = new RegExp("\\p{RGI_Emoji}".repeat(1000), "v");
  return { status: "continue", annotations: { matched: re.test("x") } };
}
