/* corpus {"id":"fetch-system-llm","category":"exfiltration","title":"system trust: vcp.fetch to the LLM endpoints (api.openai.com, api.anthropic.com and spelling variants) is refused before any I/O","hook":{"type":"pre_inject","timeout_ms":3000,"trust":"system","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"vcp_fetch":"function","attempts":6,"fetched":[],"quick":true},"recycled":"none"}} */
// Refusal must happen before DNS or connect: all six refusals together must finish well under
// any network round trip (and the sandbox machines have no route to these hosts anyway).
export async function action(input) {
  const urls = [
    "https://api.openai.com/v1/chat/completions",
    "https://api.anthropic.com/v1/messages",
    "https://API.OpenAI.com./v1/chat/completions",
    "https://api.anthropic.com:443/v1/messages",
    "https://user:pw@api.openai.com/v1/responses",
    "https://api.anthropic.com%2F@api.anthropic.com/v1/messages",
  ];
  const fetched = [];
  const errors = [];
  const t0 = vcp.now();
  for (const url of urls) {
    try {
      await vcp.fetch(url, { method: "POST", body: JSON.stringify({ prompt: "exfil" }) });
      fetched.push(url);
    } catch (e) {
      errors.push(String(e && e.message).slice(0, 200));
    }
  }
  const elapsed = vcp.now() - t0;
  return { status: "continue", annotations: { vcp_fetch: typeof vcp.fetch, attempts: urls.length, fetched, errors, quick: elapsed < 250 } };
}
