// status().store and the store gauges (install/sync-status.ts): local is `{ kind: "local" }` with no
// gauges; with Redis the store's own status plus this replica's bundle sync (revision, refusals, readiness).
import { expect, test } from "vitest";
import { bundlesCurrent, storeGauges, storeStatus } from "../../../src/install/sync-status.js";
import type { SharedStore } from "../../../src/store/index.js";
import type { BundleSync } from "../../../src/install/bundle-sync.js";

test("the local store: kind local, no gauges", () => {
  expect(storeStatus(undefined, undefined)).toEqual({ kind: "local" });
  expect(storeGauges(undefined, undefined)).toBeUndefined();
});

test("Redis: the store's status with the bundle sync's revision, refusals and readiness", () => {
  const connection = { connected: true, reconnects: 2, command_errors: { timeout: 1, reply: 0, unreachable: 0 } };
  const shared = { status: () => ({ kind: "redis", prefix: "p", connection, replicas: [{ id: "a", live: true }, { id: "b", live: false }] }) } as unknown as SharedStore;
  const refused = [{ bundle: "x", digest: "sha256:1", code: "SIGNATURE_INVALID", message: "m" }];
  const sync = { report: () => ({ revision: 7, refused }), desiredRevision: () => 8, readiness: () => ({ ready: false, reason: "refuses x" }) } as unknown as BundleSync;
  expect(storeStatus(shared, sync)).toMatchObject({ kind: "redis", prefix: "p", bundles: { revision: 7, desired_revision: 8, refused, ready: false, not_ready_reason: "refuses x" } });
  expect(storeGauges(shared, sync)).toEqual({ connected: true, reconnects: 2, revision: 7, desiredRevision: 8, refused: 1, liveReplicas: 1, commandErrors: connection.command_errors });
});

test("bundles are current with the local store, or when ready and reconciled to the newest shared revision", () => {
  const sync = (ready: boolean, desired: number | null, revision: number | null) =>
    ({ readiness: () => ({ ready, reason: ready ? null : "x" }), desiredRevision: () => desired, report: () => ({ revision, refused: [] }) }) as unknown as BundleSync;
  expect(bundlesCurrent(undefined)).toBe(true);
  expect(bundlesCurrent(sync(true, 3, 3))).toBe(true);
  expect(bundlesCurrent(sync(true, 4, 3))).toBe(false);
  expect(bundlesCurrent(sync(false, 3, 3))).toBe(false);
});
