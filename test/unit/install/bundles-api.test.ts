// runtime.bundles (install/bundles-api.ts): every change a principal makes takes the registry-change
// limit before any work; a roll back reinstalls the kept artifact with a downgrade allowed; replicas
// is null with the local store (no bundle sync).
import { expect, test } from "vitest";
import { createBundlesApi } from "../../../src/install/bundles-api.js";
import type { BundleManager } from "../../../src/install/bundles.js";
import type { BundleSync } from "../../../src/install/bundle-sync.js";
import { VcpError } from "../../../src/errors.js";

function setup(refuse = false) {
  const calls: string[] = [];
  const bundles = {
    install: async (input: unknown, options: { allowDowngrade?: boolean }) => (calls.push(`install ${JSON.stringify(input)} downgrade=${options.allowDowngrade === true}`), { bundle: "b" }),
    remove: async (name: string) => (calls.push(`remove ${name}`), { bundle: name }),
    revisionArtifact: async (name: string, digest: string) => ({ kept: `${name}@${digest}` }),
  } as unknown as BundleManager;
  const admit = async (principal: { id: string } | undefined) => {
    calls.push(`admit ${principal?.id ?? "-"}`);
    if (refuse) throw new VcpError("RATE_LIMITED", "over");
  };
  return { calls, api: createBundlesApi({ bundles, sync: undefined, uploadWaitMs: 0, admit }) };
}

test("install, remove and rollback take the limit first; rollback reinstalls the kept artifact as a downgrade", async () => {
  const { calls, api } = setup();
  const ops = { principal: { id: "ops", role: "operator" as const } };
  await api.install({ manifest: {}, code: "" } as never, ops);
  await api.remove("b", ops);
  await api.rollback("b", "sha256:1", ops);
  expect(calls).toEqual([
    "admit ops", `install {"manifest":{},"code":""} downgrade=false`,
    "admit ops", "remove b",
    "admit ops", `install {"kept":"b@sha256:1"} downgrade=true`,
  ]);
  expect(await api.replicas("b", "sha256:1")).toBeNull();
});

test("a change the limit refuses does no work", async () => {
  const { calls, api } = setup(true);
  await expect(api.remove("b", { principal: { id: "ops", role: "operator" } })).rejects.toMatchObject({ code: "RATE_LIMITED" });
  expect(calls).toEqual(["admit ops"]);
});

test("replicas waits the store's upload wait by default, or the caller's", async () => {
  const waits: number[] = [];
  const sync = { verdicts: async (_b: string, _d: string, waitMs: number) => (waits.push(waitMs), { accepted: [], refused: [], pending: [] }) } as unknown as BundleSync;
  const api = createBundlesApi({ bundles: {} as BundleManager, sync, uploadWaitMs: 1500, admit: async () => undefined });
  await api.replicas("b", "d");
  await api.replicas("b", "d", { waitMs: 10 });
  expect(waits).toEqual([1500, 10]);
});
