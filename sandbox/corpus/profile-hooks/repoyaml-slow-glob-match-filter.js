/* corpus {"id":"repoyaml-slow-glob-match-filter","category":"profile-hooks","title":"a repo-yaml hook's match filters (ability_scope, only_if_changed_paths) are backtracking-bait globs; the agent sends 200 long changed paths (within the scan-cost limit; repoyaml-match-filter-over-cost is the refused heavier filter)","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"repo-yaml","event":"PostAbilityCall","match":{"ability_scope":"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b","only_if_changed_paths":["{a,aa,aaa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*c"]},
  "input":{"ability_id":{"repeat":["a",1000],"suffix":"b"},"duration_ms":5,"changed_files":{"range":[{"repeat":["a",200]},200]}},"companion":true,
  "expect":{"native_absent":["error"],"exit_code":0}},
 "expect":{"outcome":"skipped_matcher","status":"continue","error_matches":null,"annotations":null,"max_fire_ms":5000,"recycled":"none"}} */
// ability_scope matches; no changed path ends in c: the filter says no, in linear time.
export function action() {
  return { logs: [{ level: "info", message: "should not run: no changed path matches" }] };
}
