/* corpus {"id":"fetch-deployment","category":"exfiltration","title":"deployment trust: vcp.fetch is absent (not merely refused) and no other network primitive exists","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"vcp_fetch":"undefined","has_fetch_key":false,"network":[]},"recycled":"none"}} */
export function action(input) {
  const network = ["fetch", "XMLHttpRequest", "WebSocket", "EventSource", "Request", "navigator", "Deno", "Bun"].filter(
    (n) => typeof globalThis[n] !== "undefined",
  );
  return {
    status: "continue",
    annotations: { vcp_fetch: typeof vcp.fetch, has_fetch_key: "fetch" in vcp, network },
  };
}
