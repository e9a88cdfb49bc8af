// What an upload answers about the other replicas (PUT /v1/bundles `replicas`), from their heartbeat
// records: run the digest → accepted; a refusal of that digest → refused with its code; else pending.
import { describe, expect, test } from "vitest";
import { classifyPeers } from "../../../src/install/bundle-sync.js";
import type { PeerView } from "../../../src/store/index.js";

function peer(id: string, overrides: Partial<PeerView> = {}): PeerView {
  return {
    id, instance: "i", host: "h", pid: 1, version: "0.1.0", config_version: "c", started_at: "t", heartbeat_ms: 500, url: null,
    revision: 3, bundles: {}, refused: [], seen_ms_ago: 10, live: true, self: false, ...overrides,
  };
}
const D2 = "sha256:" + "2".repeat(64);
const D1 = "sha256:" + "1".repeat(64);

describe("classifyPeers", () => {
  test("running it, refusing it, neither yet; gone replicas and refusals of other digests do not count", () => {
    const verdicts = classifyPeers([
      peer("A", { self: true, bundles: { guard: { version: "2.0.0", digest: D2 } } }),
      peer("B", { bundles: { guard: { version: "1.0.0", digest: D1 } }, refused: [{ bundle: "guard", digest: D2, version: "2.0.0", revision: 4, code: "SIGNATURE_INVALID", message: "no key of the keyring verifies it", at: "t" }] }),
      peer("C", { bundles: { guard: { version: "1.0.0", digest: D1 } }, refused: [{ bundle: "guard", digest: D1, version: "1.0.0", revision: 2, code: "PROFILE_DISABLED", message: "old", at: "t" }] }),
      peer("D", { live: false, bundles: {} }),
    ], "guard", D2);
    expect(verdicts).toEqual({ accepted: ["A"], refused: [{ replica: "B", code: "SIGNATURE_INVALID", message: "no key of the keyring verifies it" }], pending: ["C"] });
  });
});
