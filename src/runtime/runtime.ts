/*
 * createRuntime: the facade behind src/index.ts. Wiring only: it builds the parts in the order they
 * start (top to bottom below), connects them and closes them in reverse; each part's rules live in
 * its own module.
 *
 * ```
 *  options ─► pid locks (store/pid-lock.ts) ─► shared store (store/, `store: redis` only)
 *          ─► settings (settings.ts): keyring, limits, input bounds, event profiles
 *          ─► bus (observe/event-bus.ts), stats (fire/stats.ts), metrics (observe/metrics.ts)
 *          ─► audit trail (fire/audit-trail.ts) ─► registry (registry/) ── events ─► audit + bus
 *          ─► backend: the sandbox process (sandbox.ts → pool/)
 *
 *                       ┌──────────── backend.loadBundle / unloadBundle / runChain ───────────┐
 *   pins (install/) ◄───┤ in flight per digest                                               │
 *     ▲     ▲           │                                                                    │
 *     │     └─ bundles (install/bundles.ts): verify ─► load ─► registry swap ─► persist ─────┤
 *     ├──── fire (fire/vcp.ts): plan ─► bounds ─► runChain ─► events (bus) ─► audit ─────────┤
 *     │       ▲                                                                              │
 *     │       └── sessions (fire/session-api.ts over store/adapters.ts: local or Redis),     │
 *     │           pipeline operations, periodic ticks                                        │
 *     └──── fireProfile (fire/profile.ts) ─► approvals (fire/approvals.ts: ask_user) ────────┘
 *
 *  last: bundles.restore(deadline), approvals, the shared revisions, the replica set, periodic ticks.
 * ```
 */
import { dirname } from "node:path";
import { VcpError } from "../errors.js";
import { createBundleStore } from "../bundle/store.js";
import { DEFAULTS } from "../config/defaults.js";
import { assertNodeVersion } from "../config/node-version.js";
import { createRedactor } from "../audit/index.js";
import { systemClock, silentLogger } from "../observe/events.js";
import { createEventBus } from "../observe/event-bus.js";
import { createMetrics } from "../observe/metrics.js";
import { sandboxGauges } from "../observe/sandbox-gauges.js";
import { createHookSwitches, createRegistry } from "../registry/index.js";
import { acquireRuntimeLocks } from "../store/pid-lock.js";
import { startReplicaSetRecorder } from "../store/replica-set.js";
import { openSharedStore, resolveReplicaId, type SharedStore } from "../store/index.js";
import { approvalsFor, hookSwitchStoreFor, implicitSessionsFor, registryAdmission, sessionStoreFor } from "../store/adapters.js";
import { createBundleManager, createRevisionPins } from "../install/bundles.js";
import { createBundleSync } from "../install/bundle-sync.js";
import { createBundlesApi } from "../install/bundles-api.js";
import { bundlesCurrent, storeGauges, storeStatus } from "../install/sync-status.js";
import { createAuditTrail, type AuditOptions } from "../fire/audit-trail.js";
import { auditApi, auditGauges, auditOptionsOf, auditStatus, recordRefusedInstall } from "../fire/audit-api.js";
import { registryEventSink } from "../fire/registry-events.js";
import { createHookStats } from "../fire/stats.js";
import { createChainFirer } from "../fire/vcp.js";
import { createProfileFirer } from "../fire/profile.js";
import { createProfilesApi } from "../fire/profiles-api.js";
import { approvalsApi } from "../pipeline/approvals.js";
import { createSessionApi, pipelineDepsOf } from "../fire/session-api.js";
import { createHooksApi } from "../fire/hooks-api.js";
import { startBackend } from "./sandbox.js";
import { resolveSettings } from "./settings.js";
import type { Runtime, RuntimeOptions } from "./types.js";

export type { Runtime, RuntimeOptions, RuntimeStatus } from "./types.js";
export type { BundleInfo, BundleInstallError, KeptRevision, BundleSource, InstallOptions } from "../install/types.js";
export type { FireInput } from "../fire/types.js";

/**
 * Create a vcp-hooks runtime: registry, sandbox process and chain execution behind one API.
 *
 * @example
 * ```ts
 * const runtime = await createRuntime();
 * await runtime.bundles.install({ manifest, code });
 * const result = await runtime.fire("pre_inject", { session: "s1", context, constitution, event });
 * await runtime.close();
 * ```
 */
export async function createRuntime(options: RuntimeOptions = {}): Promise<Runtime> {
  assertNodeVersion();
  const auditOptions = auditOptionsOf(options);
  // One runtime per data directory and per audit log, before anything there is read or written.
  const releaseLocks = acquireRuntimeLocks({ dataDir: options.dataDir, auditPath: auditOptions?.path });
  let shared: SharedStore | undefined;
  try {
    // One replica id for the store (heartbeat, leases) and the audit chain (every record), kept with
    // the chain it names: the data dir, else the log's dir (store/replica-id.ts).
    const replicaId = resolveReplicaId({
      explicit: options.replicaId ?? (options.store?.kind === "redis" ? options.store.replicaId : undefined),
      dataDir: options.dataDir ?? (auditOptions !== undefined ? dirname(auditOptions.path) : undefined),
    });
    // The shared store (issue 18): undefined with `kind: local`, and then no Redis is touched.
    if (options.store?.kind === "redis") shared = await openSharedStore({ ...options.store, replicaId }, { dataDir: options.dataDir, logger: options.logger ?? silentLogger });
    return await startRuntime(options, auditOptions, shared, replicaId, releaseLocks);
  } catch (err) {
    await shared?.close().catch(() => undefined);
    releaseLocks();
    throw err;
  }
}

async function startRuntime(options: RuntimeOptions, auditOptions: AuditOptions | undefined, shared: SharedStore | undefined, replicaId: string, releaseLocks: () => void): Promise<Runtime> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  // The sandbox's start and the reload of the installed bundles share pool.start_timeout_ms (what a
  // k8s startupProbe waits for). Real time, not `clock`: the retries really wait.
  const startDeadline = performance.now() + (options.sandbox?.startTimeoutMs ?? DEFAULTS.pool.start_timeout_ms);
  let closed = false;
  const assertOpen = (): void => {
    if (closed) throw new VcpError("SANDBOX_CLOSED", "the runtime is closed");
  };

  // ── settings, resolved before anything starts so a bad keyring or limit fails fast ───────────
  const { keyring, requireSignatures, maxBundleBytes, maxSessionsPerOwner, inputBounds, enabledProfiles, exec } = await resolveSettings(options);
  const registrationsPerMinute = options.registrationsPerMinute ?? DEFAULTS.limits.registrations_per_minute;

  // ── observation: events, per-hook stats, metrics (gauges read lazily from the parts below) ────
  const bus = createEventBus({ clock, logger, redact: createRedactor({ keys: [...(options.redactKeys ?? DEFAULTS.redact_keys)] }) });
  const stats = createHookStats();
  const metrics = createMetrics(() => ({
    ...sandboxGauges(backend.stats()), ...auditGauges(audit),
    openSessions: sessionStore.openSessions(), bundles: bundles.infos(),
    ...(shared === undefined ? {} : { store: storeGauges(shared, bundleSync) }),
  }), { sharedStore: shared !== undefined, auditRetention: auditOptions?.retention !== undefined });
  shared?.registerMetrics(metrics.registry);

  // ── the audit log, then the registry (its events go to the log and the bus), then the sandbox ─
  const audit = auditOptions === undefined ? undefined : await createAuditTrail({ ...auditOptions, onSync: (seconds) => metrics.observeAuditSync(seconds) }, replicaId, logger);
  const torn = audit?.writer.recovery ?? null;
  // A crash mid-write left a final line without its newline: never acknowledged, so cut off.
  if (torn !== null) logger.warn({ audit: auditOptions?.path, truncated_bytes: torn.truncated_bytes }, "audit log: cut off a torn final line left by a crash (it was never acknowledged)");
  const registry = createRegistry({
    clock, emit: registryEventSink({ bus, audit, logger }), registrationsPerMinute,
    sessionHookAllowlist: options.sessionHookAllowlist ?? [],
    // Only an installed revision's exports run (created below, before any install).
    resolveAction: (ref) => bundles.resolveAction(ref),
    // A deployment-wide hook switch holds for every revision; a dropped session hook stays dropped everywhere.
    deploymentSwitch: (name) => switches.deploymentSwitch(name),
    onSessionHooksRebound: (change) => sessionStore.hooks.rebound(change),
  });
  // Which hooks are on or off (spec §7.3.4), deployment-wide and per session: shared with a Redis store.
  const switches = createHookSwitches({ registry, store: hookSwitchStoreFor(shared), logger });
  // The sandbox module (piscina, child process) loads only when it is used (sandbox.ts).
  const backend = options.backend ?? (await startBackend(options, { logger, jsonDepth: inputBounds.maxDepth, auditDiffs: auditOptions !== undefined }));

  // ── what runs on the sandbox: revision pins, profile chains, bundles, VCP chains ──────────────
  const pins = createRevisionPins({ backend, logger });
  const profileFirer = createProfileFirer({
    enabled: enabledProfiles, registry, backend, audit: () => audit, metrics, clock, logger,
    inputBounds, maxSessionsPerOwner, assertOpen, pin: pins.pin, unpin: pins.unpin,
    exec, stats, jsonDepth: inputBounds.maxDepth, events: bus, ...implicitSessionsFor(shared),
  });
  // With a shared store, installs and removals are published for every replica, and each replica
  // reconciles to the shared revisions (bundle-sync.ts); started after restore() below.
  const bundleSync = shared === undefined ? undefined : createBundleSync({ shared, logger, onPublished: (bundle) => sessionStore.hooks.published(bundle) });
  if (bundleSync !== undefined) shared!.setReport(() => bundleSync.report());
  const bundles = createBundleManager({
    backend, registry, pins, enabledProfile: (ref) => profileFirer.assertEnabled(ref),
    store: options.dataDir === undefined ? undefined : createBundleStore(options.dataDir),
    keyring, requireSignatures, maxBundleBytes, metrics, clock, logger, assertOpen,
    exec: { enabled: exec.enabled, shell: exec.shell }, onRefused: recordRefusedInstall(audit),
    ...(bundleSync !== undefined ? { publisher: bundleSync.publisher } : {}),
    onSettled: (bundle) => sessionStore.hooks.settled(bundle),
  });
  const firer = createChainFirer({
    registry, switches, backend, pins, bus, audit, stats, metrics, logger, inputBounds, assertOpen,
    chainDeadlineMs: options.chainDeadlineMs, disableFailingHooks: options.cascade?.disableFailingHooks === true,
  });

  // ── state behind its ports (store/adapters.ts): sessions over the fire path, approvals, limits ─
  const sessionStore = sessionStoreFor(shared, {
    pipeline: pipelineDepsOf({ ...options, safetyCriticalRules: options.integrity?.safetyCriticalRules }, { firer, registry, maxSessionsPerOwner, inputBounds, clock, logger }),
    registry, switches, logger, tuning: options.sharedSessions ?? {},
    // A replica that refused the active revision of a bundle runs other hooks than its peers: it leaves ticks to them.
    periodicReady: () => bundleSync?.readiness().ready !== false,
    // Read only when a recorded session hook is not offered here: deregistered (current) or pending (behind).
    bundlesCurrent: () => bundlesCurrent(bundleSync),
  });
  const approvals = approvalsFor(shared, {
    clock, audit: () => audit, logger, ...(options.approvals !== undefined ? { limits: options.approvals } : {}),
    // An approval's input is redacted like the audit log (same keys).
    ...(options.redactKeys !== undefined ? { redactKeys: options.redactKeys } : {}),
    allowAlwaysTtlMs: enabledProfiles.get("amplifier")?.sessionTtlMs, pollMs: options.sharedSessions?.approvalPollMs,
  });
  const admission = registryAdmission(shared, registrationsPerMinute);
  const sessionApi = createSessionApi({ sessions: sessionStore.sessions, hooks: sessionStore.hooks, registry, firer, admission, assertOpen });

  const runtime: Runtime = {
    bundles: createBundlesApi({ bundles, sync: bundleSync, admit: admission.admit, uploadWaitMs: shared?.options.uploadWaitMs ?? 0 }),
    sessions: sessionApi.sessions,
    adapt: sessionApi.adapt,
    transition: sessionApi.transition,
    conflict: sessionApi.conflict,
    violation: sessionApi.violation,
    fire: sessionApi.fire,
    hooks: createHooksApi({ registry, switches, enabledProfiles, visibleKey: sessionApi.visibleKey, admission }),
    ...createProfilesApi({ firer: profileFirer, approvals }),
    approvals: approvalsApi(approvals),
    on: (event, listener) => bus.on(event, listener),
    status: () => ({
      bundles: bundles.list(), hooks: stats.status(registry.snapshot().hooks()), registry_revision: registry.snapshot().revision,
      sandbox: backend.stats(), audit: auditStatus(audit, replicaId), store: storeStatus(shared, bundleSync),
    }),
    metrics: () => metrics.text(),
    limits: Object.freeze({ json_depth: inputBounds.maxDepth, input_bytes: inputBounds.maxBytes }),
    ...auditApi(audit),
    async close() {
      if (closed) return;
      // Sessions first: queued pipeline work and periodic ticks finish before the sandbox stops.
      await sessionStore.sessions.closeAll();
      // Pending approvals expire with their defaults (and are recorded) while the audit log is open.
      await approvals.close();
      await bundleSync?.close();
      await switches.close();
      closed = true;
      try {
        await backend.close();
        await replicaSet?.close();
        await audit?.close();
        await shared?.close();
      } finally {
        releaseLocks();
      }
    },
  };

  // ── last: what the data directory holds (bundles.ts restore closes the sandbox if it fails) ──
  try {
    // The recorded switches first: the restored revisions register their hooks with them.
    await switches.start();
    await bundles.restore(startDeadline);
    // Subscribed before any approval is asked here.
    await approvals.start();
  } catch (err) {
    // A refused start leaves nothing open: the next start on this data directory must work.
    await audit?.close().catch(() => undefined);
    throw err;
  }
  // Then the shared revisions (store.kind redis): a replica serves what its peers serve from its first request.
  await bundleSync?.start(bundles);
  // With a shared store each chain records the replicas it has seen, so a set verify can tell a log is missing.
  const replicaSet = shared === undefined || audit === undefined ? undefined : startReplicaSetRecorder({
    self: replicaId, prefix: shared.options.prefix, peers: () => shared.presence.peers().map((p) => p.id),
    append: (record) => audit.writer.append(record), intervalMs: shared.options.heartbeatMs, logger,
  });
  // Periodic ticks once this replica runs what its peers run: a replica still without the shared
  // bundles would find no periodic hook for a due session and leave it to the next scan of a peer.
  sessionStore.startPeriodic();
  return runtime;
}
