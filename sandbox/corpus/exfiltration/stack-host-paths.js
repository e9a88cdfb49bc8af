/* corpus {"id":"stack-host-paths","category":"exfiltration","title":"a thrown guest error is reported without host paths (no /work, node_modules, file:// or .ts frames)","hook":{"type":"pre_inject","timeout_ms":1000,"trust":"deployment","condition":null},"calls":1,"expect":{"outcome":"error","status":"continue","error_matches":"guest-marker-7731","error_not_matches":"/work/|node_modules|file://|\\.ts:\\d|/src/","annotations":null,"recycled":"none"}} */
function deeper() {
  vcp.sha256("x");
  throw new TypeError("guest-marker-7731");
}
export function action(input) {
  return deeper();
}
