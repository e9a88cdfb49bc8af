import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ChainResult } from "../model/chain.js";
import { SKIPPED_OUTCOMES } from "../model/result.js";
import { TallyCounter, TallyHistogram } from "./tally.js";
import type { AuditSinkStats } from "../audit/sink.js";
import type { AuditRetentionStats } from "../audit/retention.js";
import type { ProcessUsage } from "./proc-usage.js";
import type { StoreFailure } from "../store/errors.js";
import { VCP_PROFILE_ID } from "../profiles/index.js";
import { NO_HOOK_SELECTED } from "../chain/decision.js";

/**
 * The `event` label of an event newer than its profile (`unknownEventPattern`): such names are chosen by
 * the agent, so each would be a new series; they all count under this one value.
 */
export const UNKNOWN_EVENT_LABEL = "unknown";

/** fdatasync latency buckets in seconds: 100 µs (page cache on tmpfs) … 2.5 s (a saturated disk). */
const FSYNC_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** Latency buckets in seconds: 50 µs … 5 s, dense where chains usually land (0.1–2 ms). */
const LATENCY_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

/**
 * Prometheus metrics of one runtime (prom-client, a registry per runtime so several runtimes in one
 * process do not collide). Chain and hook metrics are recorded from each ChainResult on the main
 * thread; gauges that describe the sandbox and audit log are read when scraped.
 */
/** What the metrics read from the runtime when scraped (cheap reads; no I/O). */
export interface MetricsSnapshot {
  restarts: number;
  queued: number;
  inFlight: number;
  auditLagMs: number;
  auditPending: number;
  /** Audit records durably written since the log was opened (0 without an audit log). */
  auditWritten: number;
  /** Bytes of those records. */
  auditBytes: number;
  /** Audit writes or syncs that failed (each withholds chain results until the log is reopened). */
  auditWriteFailures: number;
  /** `audit.retention` as of its last run; null without it (its families are then absent). */
  auditRetention?: AuditRetentionStats | null;
  /** The sandbox host process (Linux /proc), when one is running. */
  host: { pid: number; usage: ProcessUsage } | undefined;
  quarantined: number;
  slowBundles: number;
  demotedBundles: number;
  watchdogKills: number;
  openSessions: number;
  /** Installed bundles, for vcp_bundle_info. */
  bundles: ReadonlyArray<{ bundle: string; version: string; digest: string; trust: string; signed_by: string | null }>;
  /** The shared store (store.kind redis); undefined with a local store, whose families are then absent. */
  store?: {
    connected: boolean;
    reconnects: number;
    revision: number | null;
    desiredRevision: number | null;
    refused: number;
    liveReplicas: number;
    /** Redis commands that failed since start, by reason (store/errors.ts): timeout, reply, unreachable. */
    commandErrors: Readonly<Record<StoreFailure, number>>;
  };
}

/** Why a shared-store command failed (store/errors.ts StoreFailure), every value pre-set to 0 in the exposition. */
const STORE_FAILURES: readonly StoreFailure[] = ["timeout", "reply", "unreachable"];

/**
 * A counter that mirrors a monotonic total kept elsewhere (the supervisor's restart count, the audit
 * writer's records): on each scrape it adds what the source grew by since the last one.
 */
function mirroredCounter(registry: Registry, name: string, help: string, read: () => number): void {
  let seen = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      if (now > seen) this.inc(now - seen);
      seen = Math.max(seen, now);
    },
  });
}

function gauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** One read per scrape, shared by every metric of that scrape (a scrape collects all within ~50 ms). */
function oncePerScrape<T>(read: () => T): () => T {
  let cached: { at: number; value: T } | undefined;
  return () => {
    const now = performance.now();
    if (cached === undefined || now - cached.at > 50) cached = { at: now, value: read() };
    return cached.value;
  };
}

export function createMetrics(readSnapshot: () => MetricsSnapshot, options: { sharedStore?: boolean; auditRetention?: boolean } = {}) {
  const registry = new Registry();
  const readGauges = oncePerScrape(readSnapshot);
  if (options.auditRetention === true) {
    // Only with audit.retention: read from its last run (no I/O at scrape time).
    const retention = (): AuditRetentionStats | null | undefined => readGauges().auditRetention;
    gauge(registry, "vcp_audit_retention_blocked", "1 while audit retention keeps rotated segments past its limits because the sink has not shipped them (never deleted unshipped), else 0.", () => (retention()?.blocked ? 1 : 0));
    gauge(registry, "vcp_audit_retention_held_bytes", "Bytes of rotated audit segments past the retention limits, kept because the sink has not shipped them.", () => retention()?.held_bytes ?? 0);
    gauge(registry, "vcp_audit_retention_held_segments", "Rotated audit segments past the retention limits, kept because the sink has not shipped them.", () => retention()?.held_segments ?? 0);
    gauge(registry, "vcp_audit_log_bytes", "Bytes the audit log takes on disk: rotated segments plus the live file (as of the last retention run).", () => retention()?.bytes ?? 0);
    gauge(registry, "vcp_audit_log_segments", "Rotated audit segments on disk (as of the last retention run).", () => retention()?.segments ?? 0);
    gauge(registry, "vcp_audit_oldest_segment_age_seconds", "Seconds since the newest record of the oldest rotated audit segment (what audit.retention.max_age_s compares); 0 without segments.", () => retention()?.oldest_segment_age_seconds ?? 0);
    mirroredCounter(registry, "vcp_audit_retention_deleted_segments_total", "Rotated audit segments deleted by retention (each after the sink shipped it, unless require_shipped is false).", () => retention()?.deleted_segments ?? 0);
    mirroredCounter(registry, "vcp_audit_retention_deleted_bytes_total", "Bytes of rotated audit segments deleted by retention.", () => retention()?.deleted_bytes ?? 0);
    mirroredCounter(registry, "vcp_audit_retention_errors_total", "Audit retention runs that failed (nothing more was deleted by them).", () => retention()?.errors ?? 0);
  }
  if (options.sharedStore === true) {
    // Only with store.kind redis: a local deployment's exposition is unchanged.
    gauge(registry, "vcp_store_connected", "1 while this replica is connected to the shared store (Redis), else 0.", () => (readGauges().store?.connected ? 1 : 0));
    mirroredCounter(registry, "vcp_store_reconnects_total", "Times the connection to the shared store came back after being lost.", () => readGauges().store?.reconnects ?? 0);
    gauge(registry, "vcp_store_bundle_revision", "The shared bundle revision this replica has reconciled to (0 before the first).", () => readGauges().store?.revision ?? 0);
    gauge(registry, "vcp_store_bundle_revisions_behind", "Shared bundle revisions read from the store but not yet reconciled by this replica.", () => {
      const store = readGauges().store;
      return store?.desiredRevision == null || store.revision == null ? 0 : Math.max(0, store.desiredRevision - store.revision);
    });
    gauge(registry, "vcp_store_refused_revisions", "Shared bundle revisions this replica refused (it keeps the previous revision of those bundles).", () => readGauges().store?.refused ?? 0);
    gauge(registry, "vcp_store_live_replicas", "Live replicas under this store prefix, this one included, as of the last heartbeat.", () => readGauges().store?.liveReplicas ?? 0);
    // Every reason from the first scrape on (0 until it happens), so an alert's rate() has a series.
    let seen: Record<StoreFailure, number> = { timeout: 0, reply: 0, unreachable: 0 };
    new Counter({
      name: "vcp_store_command_errors_total",
      help: "Redis commands that failed, by reason: timeout (no answer within store.command_timeout_ms), reply (Redis answered an error: OOM, READONLY, NOPERM…), unreachable (no connection). Each was answered STORE_UNAVAILABLE.",
      labelNames: ["reason"],
      registers: [registry],
      collect() {
        const now = readGauges().store?.commandErrors;
        if (now === undefined) return;
        for (const reason of STORE_FAILURES) this.inc({ reason }, Math.max(0, now[reason] - seen[reason]));
        seen = { ...now };
      },
    });
  }
  // The series a chain updates (every chain, every hook) are tallies (observe/tally.ts): prom-client
  // hashes the label object on each labelled update, ~22 times per 5-hook chain on the main thread.
  const chains = new TallyCounter("vcp_chains_total", "Hook chains run, by hook type and chain status.", ["type", "status"], registry);
  const chainSeconds = new TallyHistogram("vcp_chain_duration_seconds", "Hook chain latency as measured inside the sandbox, by hook type.", ["type"], LATENCY_BUCKETS, registry);
  const hooks = new TallyCounter("vcp_hooks_total", "Hook executions by hook type and outcome.", ["type", "outcome"], registry);
  const hookSeconds = new TallyHistogram("vcp_hook_duration_seconds", "Hook action latency by hook type (skipped hooks excluded).", ["type"], LATENCY_BUCKETS, registry);
  const timeouts = new TallyCounter("vcp_hook_timeouts_total", "Hooks that exceeded timeout_ms (spec §5.4.4).", ["type"], registry);
  const errors = new TallyCounter("vcp_hook_errors_total", "Hooks that failed: exception, invalid result or crash (spec §7.1.5).", ["type", "outcome"], registry);
  // Event-profile chains (PROFILES §2) have their own series: the VCP series keep their label sets.
  const profileChains = new TallyCounter("vcp_profile_chains_total", "Event-profile chains run, by profile, event and the answer's exit code.", ["profile", "event", "exit_code"], registry);
  // Every chain is counted above, those no hook ran in too (an operator's "how many BeforeTool events
  // did we answer" must not depend on whether a hook applied); this says how many of them ran no hook.
  const noHookChains = new TallyCounter(
    "vcp_chains_no_hook_total",
    `Chains answered without running a hook (none installed or selected for the event; an event newer than its profile counts as event="${UNKNOWN_EVENT_LABEL}"), by profile (vcp for native VCP chains) and event. Each is also counted in vcp_chains_total or vcp_profile_chains_total.`,
    ["profile", "event"],
    registry,
  );
  const profileChainSeconds = new TallyHistogram(
    "vcp_profile_chain_duration_seconds",
    "Event-profile chain latency as measured inside the sandbox, by profile and event.",
    ["profile", "event"],
    LATENCY_BUCKETS,
    registry,
  );
  // PROFILES §8.10 (ai-memory's timeout_violations_total): hooks that timed out or were stopped by the
  // chain deadline, and hooks skipped because their event class's deadline was already spent.
  const timeoutViolations = new TallyCounter(
    "vcp_timeout_violations_total",
    "Event-profile timeout violations (a hook timed out, or its chain deadline was spent), by profile and event.",
    ["profile", "event"],
    registry,
  );
  const profileHooks = new TallyCounter("vcp_profile_hooks_total", "Event-profile hook executions by profile, event and outcome.", ["profile", "event", "outcome"], registry);
  // A bundle's traffic, whatever hook system it came from (native VCP chains are profile "vcp").
  const bundleChains = new TallyCounter(
    "vcp_bundle_chains_total",
    "Chains in which at least one hook of the bundle ran (skipped hooks do not count), by bundle and event profile (vcp for native VCP chains).",
    ["bundle", "profile"],
    registry,
  );
  /** Once per bundle of a chain: hooks are few (a chain rarely has more than ~10), so no Set is built. */
  const countBundleChains = (profile: string, hookResults: ChainResult["hook_results"]): void => {
    for (let i = 0; i < hookResults.length; i++) {
      const hook = hookResults[i]!;
      if (SKIPPED_OUTCOMES.has(hook.outcome)) continue;
      let counted = false;
      for (let j = 0; j < i && !counted; j++) counted = hookResults[j]!.bundle === hook.bundle && !SKIPPED_OUTCOMES.has(hookResults[j]!.outcome);
      if (!counted) bundleChains.cell(hook.bundle, profile).value++;
    }
  };
  const cascades = new TallyCounter("vcp_cascade_failures_total", "Chains where more than half of the hooks failed (spec §7.3).", ["type"], registry);
  new Gauge({
    name: "vcp_sandbox_restarts",
    help: "Times the sandbox host process was restarted after dying (also as the counter vcp_sandbox_restarts_total).",
    registers: [registry],
    collect() {
      this.set(readGauges().restarts);
    },
  });
  mirroredCounter(registry, "vcp_sandbox_restarts_total", "Sandbox host processes restarted after dying.", () => readGauges().restarts);
  mirroredCounter(registry, "vcp_sandbox_watchdog_kills_total", "Sandbox hosts the watchdog killed (a hook past its budget, a wedged host).", () => readGauges().watchdogKills);
  gauge(registry, "vcp_sandbox_quarantined_bundles", "Bundle revisions quarantined after certainly killing the sandbox host.", () => readGauges().quarantined);
  gauge(registry, "vcp_sandbox_slow_bundles", "Bundle revisions admitted one chain at a time because their hooks keep timing out.", () => readGauges().slowBundles);
  gauge(registry, "vcp_sandbox_demoted_bundles", "Bundle revisions capped at their fair share of the worker threads.", () => readGauges().demotedBundles);
  gauge(registry, "vcp_sessions_open", "Open sessions.", () => readGauges().openSessions);
  mirroredCounter(registry, "vcp_audit_records_total", "Audit records durably written.", () => readGauges().auditWritten);
  mirroredCounter(registry, "vcp_audit_bytes_total", "Bytes of audit records durably written.", () => readGauges().auditBytes);
  mirroredCounter(registry, "vcp_audit_write_failures_total", "Audit log writes or syncs that failed (chain results are withheld with AUDIT_WRITE_FAILED until the log is reopened).", () => readGauges().auditWriteFailures);
  const auditSync = new Histogram({
    name: "vcp_audit_fsync_duration_seconds",
    help: "Time each audit log group-commit batch took to become durable: its O_DSYNC write on Linux, its write and fdatasync elsewhere (one per batch).",
    buckets: FSYNC_BUCKETS,
    registers: [registry],
  });
  new Gauge({
    name: "vcp_sandbox_host_resident_memory_bytes",
    help: "Resident memory of the sandbox host process (Linux /proc/<pid>/status VmRSS; 0 while no host runs).",
    registers: [registry],
    collect() {
      this.set(readGauges().host?.usage.rssBytes ?? 0);
    },
  });
  // The host's CPU time restarts at 0 with each new host process: count per pid, so a restart never
  // makes the counter go down (a counter that decreases reads as a reset to Prometheus' rate()).
  let cpuPid: number | undefined;
  let cpuSeen = 0;
  new Counter({
    name: "vcp_sandbox_host_cpu_seconds_total",
    help: "User and system CPU time of the sandbox host processes (Linux /proc/<pid>/stat), summed over restarts.",
    registers: [registry],
    collect() {
      const host = readGauges().host;
      if (host === undefined) return;
      if (host.pid !== cpuPid) {
        cpuPid = host.pid;
        cpuSeen = 0;
      }
      if (host.usage.cpuSeconds > cpuSeen) this.inc(host.usage.cpuSeconds - cpuSeen);
      cpuSeen = Math.max(cpuSeen, host.usage.cpuSeconds);
    },
  });
  new Gauge({
    name: "vcp_bundle_info",
    help: "Installed bundles (value 1), with version, digest, trust and signing key.",
    labelNames: ["bundle", "version", "digest", "trust", "signed_by"],
    registers: [registry],
    collect() {
      // Rebuilt per scrape: a removed bundle's series disappears instead of lingering.
      this.reset();
      for (const b of readGauges().bundles) this.set({ bundle: b.bundle, version: b.version, digest: b.digest, trust: b.trust, signed_by: b.signed_by ?? "" }, 1);
    },
  });
  const bundleHooks = new TallyCounter("vcp_bundle_hook_executions_total", "Hook executions by bundle, hook and outcome (labels bounded by the installed bundles' hooks).", ["bundle", "hook", "outcome"], registry);
  const bundleHookSeconds = new TallyHistogram("vcp_bundle_hook_duration_seconds", "Hook action latency by bundle and hook (skipped hooks excluded).", ["bundle", "hook"], LATENCY_BUCKETS, registry);
  const bundleChanges = new Counter({
    name: "vcp_bundle_changes_total",
    help: "Bundle installs and removals by result (installed, failed, removed, not_persisted: in the shared store, not yet in this replica's data directory).",
    labelNames: ["result"],
    registers: [registry],
  });
  // Issue 24: a client's implicit profile sessions never refuse an event; past limits.sessions_per_client
  // the least recently used idle one is evicted (scope: this replica's table, or the shared store's).
  const implicitEvictions = new Counter({
    name: "vcp_implicit_sessions_evicted_total",
    help: "Implicit event-profile sessions evicted to admit a client's new one past limits.sessions_per_client, by scope (replica, all_replicas).",
    labelNames: ["scope"],
    registers: [registry],
  });
  // Labels bounded: profiles × events an installed fail-closed hook guards × error codes.
  const refusedFailClosed = new Counter({
    name: "vcp_profile_refused_fail_closed_total",
    help: "Refused event-profile requests answered with the profile's blocking answer because a fail_closed hook guards the event, by profile, event and the refusal's error code.",
    labelNames: ["profile", "event", "code"],
    registers: [registry],
  });
  // Labels bounded: the catalogue's profiles (the event names are client-chosen, so they are not a label).
  const unknownProfileEvents = new Counter({
    name: "vcp_profile_unknown_events_total",
    help: "Events newer than their profile (an agent upgraded past the profile's pinned version), answered with the neutral answer and audited as unknown_event, by profile.",
    labelNames: ["profile"],
    registers: [registry],
  });
  new Gauge({
    name: "vcp_sandbox_queue_depth",
    help: "Chains waiting for a sandbox worker.",
    registers: [registry],
    collect() {
      this.set(readGauges().queued);
    },
  });
  new Gauge({
    name: "vcp_sandbox_in_flight",
    help: "Chains running in the sandbox.",
    registers: [registry],
    collect() {
      this.set(readGauges().inFlight);
    },
  });
  new Gauge({
    name: "vcp_audit_lag_seconds",
    help: "Age of the oldest audit record not yet durably written.",
    registers: [registry],
    collect() {
      this.set(readGauges().auditLagMs / 1000);
    },
  });
  new Gauge({
    name: "vcp_audit_pending_records",
    help: "Audit records waiting for the group commit.",
    registers: [registry],
    collect() {
      this.set(readGauges().auditPending);
    },
  });

  return {
    registry,
    /**
     * A VCP chain (fire/vcp.ts), every one: with hooks, none selected, or none installed for its type.
     * A chain no hook ran in is counted, not timed (nothing ran in the sandbox).
     */
    recordChain(result: ChainResult): void {
      // VCP chains: their result always names the hook type.
      const type = result.type!;
      chains.cell(type, result.status).value++;
      if (ranNoHook(result)) noHookChains.cell(VCP_PROFILE_ID, type).value++;
      else chainSeconds.cell(type).observe(result.duration_ms / 1000);
      if (result.cascade_failure) cascades.cell(type).value++;
      countBundleChains(VCP_PROFILE_ID, result.hook_results);
      const typeSeconds = hookSeconds.cell(type);
      for (const hook of result.hook_results) {
        const outcome = hook.outcome;
        hooks.cell(type, outcome).value++;
        bundleHooks.cell(hook.bundle, hook.hook, outcome).value++;
        if (SKIPPED_OUTCOMES.has(outcome)) continue;
        const seconds = hook.duration_ms / 1000;
        typeSeconds.observe(seconds);
        bundleHookSeconds.cell(hook.bundle, hook.hook).observe(seconds);
        if (outcome === "timeout") timeouts.cell(type).value++;
        else if (outcome === "error" || outcome === "invalid_result" || outcome === "crashed") errors.cell(type, outcome).value++;
      }
    },
    /**
     * An event-profile chain (fire/profile.ts) of one of the profile's events, every one: with hooks, none
     * selected, none installed, or the profile's own answer. A chain no hook ran in is counted, not timed.
     */
    recordProfileChain(result: ChainResult): void {
      const answer = result.profile;
      if (answer === undefined) return;
      const { profile, event } = answer;
      profileChains.cell(profile, event, String(answer.exit_code)).value++;
      if (ranNoHook(result)) noHookChains.cell(profile, event).value++;
      else profileChainSeconds.cell(profile, event).observe(result.duration_ms / 1000);
      if (answer.timeout_violations !== undefined && answer.timeout_violations > 0) timeoutViolations.cell(profile, event).value += answer.timeout_violations;
      countBundleChains(profile, result.hook_results);
      for (const hook of result.hook_results) {
        profileHooks.cell(profile, event, hook.outcome).value++;
        bundleHooks.cell(hook.bundle, hook.hook, hook.outcome).value++;
        if (!SKIPPED_OUTCOMES.has(hook.outcome)) bundleHookSeconds.cell(hook.bundle, hook.hook).observe(hook.duration_ms / 1000);
      }
    },
    recordImplicitEvictions(scope: "replica" | "all_replicas", count: number): void {
      implicitEvictions.inc({ scope }, count);
    },
    recordRefusedFailClosed(profile: string, event: string, code: string): void {
      refusedFailClosed.inc({ profile, event, code });
    },
    /** An event newer than its profile, answered with the neutral answer: a chain under event="unknown". */
    recordUnknownProfileEvent(profile: string, exitCode: number): void {
      unknownProfileEvents.inc({ profile });
      profileChains.cell(profile, UNKNOWN_EVENT_LABEL, String(exitCode)).value++;
      noHookChains.cell(profile, UNKNOWN_EVENT_LABEL).value++;
    },
    recordBundleChange(result: "installed" | "failed" | "removed" | "not_persisted"): void {
      bundleChanges.inc({ result });
    },
    /** One audit fdatasync took this long (AuditOptions.onSync). */
    observeAuditSync(seconds: number): void {
      auditSync.observe(seconds);
    },
    text(): Promise<string> {
      return registry.metrics();
    },
    contentType: registry.contentType,
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** True for a chain no hook ran in because none was installed or selected for its event (its decision record says so). */
function ranNoHook(result: ChainResult): boolean {
  return result.decision?.reason === NO_HOOK_SELECTED;
}

/**
 * Metrics of the decision-log sink (src/audit/sink.ts), read from its stats at scrape time. The sink's
 * spool is the audit log itself, so it never drops a record: `vcp_audit_sink_dropped_records_total`
 * stays 0 by design and exists so an alert written for other shippers has a series to watch.
 *
 * @example
 * const sinkMetrics = createAuditSinkMetrics(() => sink.stats());
 * const text = await sinkMetrics.text();
 */
export function createAuditSinkMetrics(read: () => AuditSinkStats) {
  const registry = new Registry();
  const stats = oncePerScrape(read);
  gauge(registry, "vcp_audit_sink_lag_records", "Audit records written but not yet acknowledged by the sink's receiver (read ahead so far).", () => stats().lag_records);
  gauge(registry, "vcp_audit_sink_lag_seconds", "Age of the oldest audit record read and not yet acknowledged by the receiver (0 when caught up).", () => stats().lag_seconds);
  gauge(registry, "vcp_audit_sink_cursor_seq", "seq of the last audit record the receiver acknowledged.", () => stats().cursor_seq);
  gauge(registry, "vcp_audit_sink_stalled", "1 while the read-ahead window is full and reading waits for the receiver.", () => (stats().stalled ? 1 : 0));
  mirroredCounter(registry, "vcp_audit_sink_shipped_records_total", "Audit records the receiver acknowledged.", () => stats().shipped_records);
  mirroredCounter(registry, "vcp_audit_sink_failures_total", "Batches the receiver did not acknowledge (error status, no answer in time, refused connection); each is retried.", () => stats().failures);
  mirroredCounter(registry, "vcp_audit_sink_dropped_records_total", "Audit records the sink gave up on: always 0, the records stay in the audit log until acknowledged.", () => 0);
  return {
    registry,
    text(): Promise<string> {
      return registry.metrics();
    },
  };
}
