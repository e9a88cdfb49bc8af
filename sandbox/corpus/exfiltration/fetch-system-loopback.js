/* corpus {"id":"fetch-system-loopback","category":"exfiltration","title":"system trust, empty allowlist: vcp.fetch to a loopback listener (and its spelling variants) is refused before any connection","hook":{"type":"pre_inject","timeout_ms":3000,"trust":"system","condition":null},"network_probe":true,"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"vcp_fetch":"function","attempts":7,"fetched":[]},"recycled":"none"}} */
// input.context.probe_url is set by the harness to a listener it owns on 127.0.0.1 and counts
// connections to; the case fails if any request arrives. No other address is ever targeted.
export async function action(input) {
  const href = String(input.context.probe_url);
  const port = /:(\d+)\//.exec(href)[1];
  const urls = [
    href,
    `http://localhost:${port}/x`,
    `http://127.1:${port}/x`,
    `http://0x7f000001:${port}/x`,
    `http://[::ffff:127.0.0.1]:${port}/x`,
    `http://user@127.0.0.1:${port}/x`,
    `HTTP://127.0.0.1.:${port}/x`,
  ];
  const fetched = [];
  const errors = [];
  for (const url of urls) {
    try {
      await vcp.fetch(url, { method: "POST", body: "exfil" });
      fetched.push(url);
    } catch (e) {
      errors.push(String(e && e.message).slice(0, 200));
    }
  }
  return { status: "continue", annotations: { vcp_fetch: typeof vcp.fetch, attempts: urls.length, fetched, errors } };
}
