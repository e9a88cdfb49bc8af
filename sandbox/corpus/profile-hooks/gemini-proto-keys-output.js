/* corpus {"id":"gemini-proto-keys-output","category":"profile-hooks","title":"a Gemini BeforeTool hook returns __proto__ and constructor.prototype keys at every level of its output (sequential chain: merged into the next input)","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"gemini-cli","event":"BeforeTool","sequential":true,"input":{"tool_name":"run_shell_command","tool_input":{"command":"ls"}},"companion":true,
  "expect":{"native":{"hookSpecificOutput.tool_input.command":"ls -la"},"native_matches":{"systemMessage":"^\"companion-served\"$"},"native_absent":["polluted","hookSpecificOutput.polluted","hookSpecificOutput.tool_input.polluted"],"exit_code":0}},
 "expect":{"outcome":"ok","status":"modify","error_matches":null,"annotations":null,"recycled":"none"}} */
// JSON.parse makes "__proto__" an own key; a host-side Object.assign or obj[k] = v of it would swap
// a prototype. The harness checks every object of the native answer and the host's Object.prototype.
export function action() {
  return JSON.parse(
    '{"decision":"allow","__proto__":{"polluted":"top"},"constructor":{"prototype":{"polluted":"ctor"}},' +
      '"hookSpecificOutput":{"hookEventName":"BeforeTool","__proto__":{"polluted":"hso"},' +
      '"tool_input":{"__proto__":{"polluted":"ti"},"command":"ls -la","constructor":{"prototype":{"polluted":"ti-ctor"}}}}}',
  );
}
