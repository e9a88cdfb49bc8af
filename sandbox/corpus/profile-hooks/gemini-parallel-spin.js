/* corpus {"id":"gemini-parallel-spin","category":"profile-hooks","title":"a hook of a parallel Gemini BeforeTool group spins forever; the other hook's answer stands","hook":{"timeout_ms":300,"trust":"deployment","condition":null},"calls":1,
 "profile":{"id":"gemini-cli","event":"BeforeTool","input":{"tool_name":"run_shell_command","tool_input":{"command":"ls"}},"companion":true,
  "expect":{"native_matches":{"systemMessage":"^\"Warning: atk_gemini_parallel_spin: .*\\\\ncompanion-served\"$"},"native":{"continue":true},"exit_code":0}},
 "expect":{"outcome":"timeout","status":"continue","error_matches":"timed out|timeout","annotations":null,"recycled":"isolate"}} */
export function action() {
  for (;;) {}
}
