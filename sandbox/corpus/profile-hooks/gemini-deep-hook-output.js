/* corpus {"id":"gemini-deep-hook-output","category":"profile-hooks","title":"a Gemini BeforeTool hook returns hookSpecificOutput.tool_input nested 100 levels deep, past limits.json_depth (64)","hook":{"timeout_ms":5000,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"gemini-cli","event":"BeforeTool","sequential":true,"input":{"tool_name":"write_file","tool_input":{"path":"a.txt"}},"companion":true,
  "expect":{"native_matches":{"systemMessage":"^\"Warning: atk_gemini_deep_hook_output: .*companion-served\"$"},"native_absent":["hookSpecificOutput"],"exit_code":0,"max_native_bytes":2048}},
 "expect":{"outcome":"invalid_result","status":"continue","error_matches":"deep|depth|nest","annotations":null,"recycled":"none"}} */
// Sequential: an accepted tool_input would be merged into what the companion sees; the depth bound
// refuses it before any merge.
export function action() {
  let v = { command: "x" };
  for (let i = 0; i < 100; i++) v = { n: v };
  return { decision: "allow", hookSpecificOutput: { hookEventName: "BeforeTool", tool_input: v } };
}
