/* corpus {"id":"repoyaml-slow-glob-matcher","category":"profile-hooks","title":"a repo-yaml hook's matcher glob *a*a…*b (40 stars) against a 1,000-character ability_id (the longest field a matcher scans is 1,024): a backtracking glob engine would spin the host for hours","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"repo-yaml","event":"PreAbilityCall","matcher":"*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b","input":{"ability_id":{"repeat":["a",1000]}},"companion":true,
  "expect":{"native_absent":["error"],"exit_code":0}},
 "expect":{"outcome":"skipped_matcher","status":"continue","error_matches":null,"annotations":null,"max_fire_ms":5000,"recycled":"none"}} */
// The matcher runs on the host (the sandbox host's worker, outside any isolate and its timeout), on
// text the agent sends. Globs compile to RE2 (src/profiles/common/glob.ts): linear in the input.
// With picomatch's backtracking RegExp this one match took longer than the suite.
export function action() {
  return { logs: [{ level: "info", message: "should not run: the matcher does not match" }] };
}
