/* corpus {"id":"env-probe","category":"exfiltration","title":"process.env, Deno.env, Bun.env and environment-looking text anywhere reachable","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"process":"undefined","deno":"undefined","bun":"undefined","env_like":[]},"recycled":"none"}} */
export function action(input) {
  const g = globalThis;
  const text = JSON.stringify(input) + Object.getOwnPropertyNames(g).join(",") + String(new Error("e").stack);
  const envLike = ["PATH=", "HOME=", "/usr/bin", "NODE_OPTIONS", "npm_", "/root", "/home/"].filter((s) => text.includes(s));
  return {
    status: "continue",
    annotations: { process: typeof g.process, deno: typeof g.Deno, bun: typeof g.Bun, env_like: envLike },
  };
}
