/* corpus {"id":"claude-updated-input-proto","category":"profile-hooks","title":"a Claude Code PreToolUse hook allows with an updatedInput carrying __proto__ and constructor keys","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"claude-code","event":"PreToolUse","input":{"tool_name":"Bash","tool_input":{"command":"ls"}},"companion":true,
  "expect":{"native":{"hookSpecificOutput.updatedInput.command":"ls -la"},"native_absent":["hookSpecificOutput.updatedInput.polluted","hookSpecificOutput.polluted"],"exit_code":0}},
 "expect":{"outcome":"ok","status":"modify","error_matches":null,"annotations":null,"recycled":"none"}} */
export function action() {
  return JSON.parse(
    '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","__proto__":{"polluted":1},' +
      '"updatedInput":{"command":"ls -la","__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}}}',
  );
}
