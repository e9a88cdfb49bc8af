/* corpus {"id":"dynamic-import","category":"escape-probes","title":"dynamic import() of node: built-ins, a file path and a data: URL never loads a module","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"ok","status":"continue","error_matches":null,"annotations":{"loaded":[],"attempts":5},"recycled":"none"}} */
// The specifiers are computed so esbuild leaves import() in the bundle instead of resolving it.
export async function action(input) {
  const specs = ["node:" + "fs", "child_" + "process", "/etc/" + "passwd", "data:text/javascript,export default typeof process", "./" + "x.js"];
  const loaded = [];
  for (const s of specs) {
    try {
      const m = await Promise.race([import(s), new Promise((r) => Promise.resolve().then(() => r(null)))]);
      // A module namespace (or any object) coming back means a loader ran.
      const again = m === null ? await import(s).then((x) => x, () => null) : m;
      if (again) loaded.push(s);
    } catch (e) {}
  }
  try {
    const viaFunction = await Function("s", "return import(s)")("node:" + "os").then((x) => x, () => null);
    if (viaFunction) loaded.push("function:node:os");
  } catch (e) {}
  return { status: "continue", annotations: { loaded, attempts: specs.length } };
}
