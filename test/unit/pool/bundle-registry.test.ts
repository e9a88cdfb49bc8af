import { describe, expect, test } from "vitest";
import { BundleRegistry, PROBATION_CHAINS, SUSPECT_MS } from "../../../src/pool/bundle-registry.js";
import type { BundleMeta } from "../../../src/pool/protocol.js";

// The supervisor's bundle bookkeeping (loaded, quarantined, crash suspects), without a process.

const meta = (digest: string, name = `b-${digest}`): BundleMeta => ({ name, digest, trust: "deployment" });

describe("BundleRegistry: loaded, quarantined and suspect revisions", () => {
  test("a quarantined revision's hooks are named to the worker; loading it again lifts the quarantine", () => {
    const bundles = new BundleRegistry();
    bundles.loaded(meta("sha256:a"));
    bundles.loaded(meta("sha256:b"));
    expect(bundles.quarantinedAmong(["sha256:a", "sha256:b"])).toBeUndefined();
    bundles.quarantine({ digest: "sha256:a", reason: "was running when the sandbox host died" });
    expect(bundles.quarantinedAmong(["sha256:a", "sha256:b"])).toEqual(["sha256:a"]);
    expect(bundles.quarantinedDigests()).toEqual(["sha256:a"]);
    // A restarted host does not load it again; the others are reloaded in load order.
    expect(bundles.toReload().map((m) => m.digest)).toEqual(["sha256:b"]);
    expect(bundles.isLoaded("sha256:a")).toBe(true); // still loaded: its chains run, its hooks do not
    expect(bundles.loaded(meta("sha256:a"))).toBe(true); // the load lifted a quarantine
    expect(bundles.quarantinedDigests()).toEqual([]);
    expect(bundles.loaded(meta("sha256:a"))).toBe(false);
  });

  test("a suspect is cleared after PROBATION_CHAINS clean chains, not before", () => {
    const bundles = new BundleRegistry();
    bundles.loaded(meta("sha256:a"));
    bundles.suspect("sha256:a", 0);
    for (let i = 0; i < PROBATION_CHAINS - 1; i++) bundles.chainCompleted(["sha256:a", "sha256:other"]);
    expect(bundles.isSuspect("sha256:a", 1)).toBe(true);
    expect(bundles.suspectDigests(1)).toEqual(["sha256:a"]);
    bundles.chainCompleted(["sha256:a"]);
    expect(bundles.isSuspect("sha256:a", 1)).toBe(false);
    expect(bundles.suspectDigests(1)).toEqual([]);
  });

  test("a suspect is cleared after SUSPECT_MS even without chains", () => {
    const bundles = new BundleRegistry();
    bundles.suspect("sha256:a", 1000);
    expect(bundles.isSuspect("sha256:a", 1000 + SUSPECT_MS)).toBe(true);
    expect(bundles.isSuspect("sha256:a", 1001 + SUSPECT_MS)).toBe(false);
  });

  test("a quarantine ends a suspicion, and a quarantined revision never becomes a mere suspect", () => {
    const bundles = new BundleRegistry();
    bundles.suspect("sha256:a", 0);
    bundles.quarantine({ digest: "sha256:a" });
    expect(bundles.isSuspect("sha256:a", 1)).toBe(false);
    bundles.suspect("sha256:a", 2);
    expect(bundles.isSuspect("sha256:a", 3)).toBe(false);
    expect(bundles.isQuarantined("sha256:a")).toBe(true);
  });

  test("loading a suspect again lifts the suspicion; unloading forgets every mark and says whether the host holds it", () => {
    const bundles = new BundleRegistry();
    bundles.loaded(meta("sha256:a", "pii"));
    bundles.suspect("sha256:a", 0);
    bundles.loaded(meta("sha256:a", "pii"));
    expect(bundles.isSuspect("sha256:a", 1)).toBe(false);
    expect(bundles.nameOf("sha256:a")).toBe("pii");
    bundles.quarantine({ digest: "sha256:a" });
    expect(bundles.unloaded("sha256:a")?.name).toBe("pii");
    expect(bundles.isLoaded("sha256:a")).toBe(false);
    expect(bundles.isQuarantined("sha256:a")).toBe(false);
    expect(bundles.unloaded("sha256:a")).toBeUndefined(); // nothing for the host to release
  });
});
