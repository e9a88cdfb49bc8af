/*
 * The shared store as `status().store` and the metrics show it: the connection and the replicas
 * (store/), with this replica's bundle sync (bundle-sync.ts) — the revision it runs, the newest it
 * has read, what it refused and whether it is ready. With the local store: `{ kind: "local" }`, no gauges.
 */
import type { MetricsSnapshot } from "../observe/metrics.js";
import type { SharedStore, StoreStatus } from "../store/index.js";
import type { BundleSync } from "./bundle-sync.js";

/** `runtime.status().store`. */
export function storeStatus(shared: SharedStore | undefined, sync: BundleSync | undefined): StoreStatus {
  if (shared === undefined || sync === undefined) return { kind: "local" };
  const report = sync.report();
  const readiness = sync.readiness();
  return {
    ...shared.status(),
    bundles: { revision: report.revision, desired_revision: sync.desiredRevision(), refused: report.refused, ready: readiness.ready, not_ready_reason: readiness.reason },
  };
}

/** The store's gauges of a metrics scrape; undefined with the local store (its families are then absent). */
export function storeGauges(shared: SharedStore | undefined, sync: BundleSync | undefined): MetricsSnapshot["store"] {
  if (shared === undefined) return undefined;
  const view = shared.status();
  const report = sync?.report();
  return {
    connected: view.connection.connected,
    reconnects: view.connection.reconnects,
    revision: report?.revision ?? null,
    desiredRevision: sync?.desiredRevision() ?? null,
    refused: report?.refused.length ?? 0,
    liveReplicas: view.replicas.filter((r) => r.live).length,
    commandErrors: view.connection.command_errors,
  };
}

/**
 * True when this replica runs the deployment's active revision of every bundle, as far as it has read
 * (ready, and reconciled to the newest shared revision); always true with the local store.
 */
export function bundlesCurrent(sync: BundleSync | undefined): boolean {
  return sync === undefined || (sync.readiness().ready && sync.desiredRevision() === sync.report().revision);
}
