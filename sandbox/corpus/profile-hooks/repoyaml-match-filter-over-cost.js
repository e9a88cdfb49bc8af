/* corpus {"id":"repoyaml-match-filter-over-cost","category":"profile-hooks","title":"a repo-yaml hook's match filter of three backtracking-bait globs may scan more than maxMatcherCost units over the largest changed_files (the ~400 ms host filter of the profile review): refused at install","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"repo-yaml","event":"PostAbilityCall","match":{"ability_scope":"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b","only_if_changed_paths":["*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b","{a,aa,aaa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*{a,aa}*c"]},
  "input":{"ability_id":{"repeat":["a",1000],"suffix":"b"},"duration_ms":5,"changed_files":{"range":[{"repeat":["a",200]},200]}},"companion":true,
  "expect":{"native_absent":["error"],"exit_code":0}},
 "expect":{"install_error":"INVALID_MATCHER","recycled":"none"}} */
// Never runs: 97 + 100 + 56 RE2 instructions over up to 1,024 + (65,536 + 4,096) characters is ~11M
// scan units, above maxMatcherCost (8,388,608); the manifest check refuses it before any input is seen.
export function action() {
  return { logs: [{ level: "info", message: "should not be installed" }] };
}
