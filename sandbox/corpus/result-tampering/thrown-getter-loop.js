/* corpus {"id":"thrown-getter-loop","category":"result-tampering","title":"throws a non-Error object whose message and stack getters never return (error copying must stay under the timeout)","hook":{"type":"pre_inject","timeout_ms":300,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"timeout","status":"continue","error_matches":null,"annotations":null,"recycled":"isolate"}} */
export function action(input) {
  const spin = () => {
    for (;;) {}
  };
  throw Object.create(Error.prototype, {
    message: { get: spin },
    stack: { get: spin },
    name: { get: spin },
  });
}
