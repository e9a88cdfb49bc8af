/* corpus {"id":"gemini-oversized-system-message","category":"profile-hooks","title":"a Gemini BeforeTool hook returns a 4 MB systemMessage, over the result cap (limits before the fold)","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"gemini-cli","event":"BeforeTool","input":{"tool_name":"run_shell_command","tool_input":{"command":"ls"}},"companion":true,
  "expect":{"native_matches":{"systemMessage":"^\"Warning: atk_gemini_oversized_system_message: [^\"]{0,600}\\\\ncompanion-served\"$"},"native":{"continue":true},"exit_code":0,"max_native_bytes":2048}},
 "expect":{"outcome":"invalid_result","status":"continue","error_matches":"bytes|large|limit","annotations":null,"recycled":"none"}} */
// The output is refused as a whole before any profile code parses or merges it; the companion's
// message and the failure warning are all the agent reads.
export function action() {
  return { decision: "allow", systemMessage: "A".repeat(4 * 1024 * 1024) };
}
