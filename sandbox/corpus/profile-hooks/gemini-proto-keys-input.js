/* corpus {"id":"gemini-proto-keys-input","category":"profile-hooks","title":"the native input (from a library caller or the --embedded adapter, which parse with plain JSON.parse) carries __proto__ keys; the hook modifies tool_input in a sequential chain","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"gemini-cli","event":"BeforeTool","sequential":true,"input":{"__proto__":{"polluted":"input-top"},"tool_name":"run_shell_command","tool_input":{"__proto__":{"polluted":"input-ti","command":"rm -rf /"},"path":"x"}},"companion":true,
  "expect":{"native_matches":{"systemMessage":"^\"seen: undefined/undefined/undefined\\\\ncompanion-served\"$"},"native_absent":["polluted","hookSpecificOutput.tool_input.polluted"],"exit_code":0}},
 "expect":{"outcome":"ok","status":"modify","error_matches":null,"annotations":null,"recycled":"none"}} */
// What the hook sees of the smuggled keys: never an inherited `polluted` or `command`.
export function action(input) {
  const ti = input.tool_input;
  return {
    systemMessage: `seen: ${typeof ({}).polluted}/${typeof input.polluted}/${typeof ti.command}`,
    hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: { path: "y" } },
  };
}
