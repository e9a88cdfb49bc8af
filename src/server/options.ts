/**
 * From a validated `vcp.yaml` (DESIGN §6.4) to runtime options and the server's live settings, and
 * what a SIGHUP reload may change.
 *
 * Reloadable live (applied to the next request, no restart):
 *   auth (tokens), limits.body_bytes, limits.streams_per_principal and limits.stream_buffer_bytes (new
 *   streams), log_level; and, in the narrowing direction only,
 *   limits.bundle_bytes (the HTTP body cap is live; the runtime's code cap stays at its start value,
 *   so raising it needs a restart) and session_hook_allowlist (the server checks the live list
 *   before the runtime checks its start-time list: removals are live, additions need a restart).
 * Need a restart (a reload that changes them keeps the running values and logs which ones):
 *   listen, data_dir, pool, keyring, require_signatures, audit, fetch, chain_deadline_ms, approvals, cascade,
 *   conflict_strategy, safety_critical_rules, limits.registrations_per_minute, limits.result_bytes,
 *   limits.sessions_per_client, limits.json_depth, limits.input_bytes, limits.annotation_bytes_per_hook/_per_chain,
 *   redact_keys, console — they are owned by the runtime or the sandbox process, built once at start.
 */
import { isDeepStrictEqual } from "node:util";
import { configVersionOf, sinkCursorPath, VcpError, type AuditOptions as RuntimeAuditOptions, type ResolvedConfig, type StoreOptions } from "../index.js";
import type { LiveSettings } from "./app.js";

export const LIVE_FIELDS = ["auth", "limits.body_bytes", "limits.bundle_bytes", "limits.streams_per_principal", "limits.stream_buffer_bytes", "session_hook_allowlist", "log_level"] as const;

/** Fields that are read once at start. */
export const RESTART_FIELDS = [
  "listen",
  "data_dir",
  "runtime_key_file",
  "pool",
  "keyring",
  "require_signatures",
  "audit",
  "fetch",
  "chain_deadline_ms",
  "exec",
  "profiles",
  "approvals",
  "cascade",
  "conflict_strategy",
  "safety_critical_rules",
  "limits.registrations_per_minute",
  "limits.result_bytes",
  "limits.sessions_per_client",
  "limits.json_depth",
  "limits.input_bytes",
  "limits.annotation_bytes_per_hook",
  "limits.annotation_bytes_per_chain",
  "redact_keys",
  "console",
  "store",
] as const;

export function liveSettingsFor(config: ResolvedConfig): LiveSettings {
  return {
    auth: config.auth,
    limits: { body_bytes: config.limits.body_bytes, bundle_bytes: config.limits.bundle_bytes, streams_per_principal: config.limits.streams_per_principal, stream_buffer_bytes: config.limits.stream_buffer_bytes },
    sessionHookAllowlist: config.session_hook_allowlist,
  };
}

/** The log level a config asks for (`log_level`), if it sets one. */
export function logLevelOf(config: ResolvedConfig): string | undefined {
  return config.log_level;
}

/**
 * createRuntime's `store` for a config: `kind: local` touches no Redis. With `url_env` the URL is read
 * from that environment variable (INVALID_CONFIG naming it when it is unset or not a redis URL).
 */
export function storeOptionsFor(config: ResolvedConfig, env: NodeJS.ProcessEnv = process.env): StoreOptions {
  const store = config.store;
  if (store.kind === "local") return { kind: "local" };
  let url = store.url;
  if (url === undefined) {
    const name = store.url_env!;
    url = env[name] || undefined; // empty is unset, as for auth[].token_env
    if (url === undefined || !/^rediss?:\/\/\S+$/.test(url)) {
      throw new VcpError("INVALID_CONFIG", `store.url_env: the environment variable ${name} ${url === undefined ? "is not set" : "does not hold a redis:// or rediss:// URL"}`, { field: "store.url_env", variable: name });
    }
  }
  return {
    kind: "redis",
    url,
    prefix: store.prefix,
    configVersion: configVersionOf(config),
    connectTimeoutMs: store.connect_timeout_ms,
    commandTimeoutMs: store.command_timeout_ms,
    maxBackoffMs: store.max_backoff_ms,
    heartbeatMs: store.heartbeat_ms,
    reconcileMs: store.reconcile_ms,
    uploadWaitMs: store.upload_wait_ms,
    unreachableAfterMs: store.unreachable_after_ms,
  };
}

/** The options of createRuntime for a config (`env`: where `store.url_env` is read). */
export function runtimeOptionsFor(config: ResolvedConfig, env: NodeJS.ProcessEnv = process.env) {
  return { store: storeOptionsFor(config, env), ...runtimeSettingsFor(config) };
}

/** createRuntime's options for a config but the store, which needs the environment (runtimeOptionsFor). */
export function runtimeSettingsFor(config: ResolvedConfig) {
  return {
    dataDir: config.data_dir,
    keyring: { keys: config.keyring.keys.map((k) => ({ ...k })) },
    requireSignatures: config.require_signatures,
    maxBundleBytes: config.limits.bundle_bytes,
    sessionHookAllowlist: [...config.session_hook_allowlist],
    registrationsPerMinute: config.limits.registrations_per_minute,
    maxSessionsPerOwner: config.limits.sessions_per_client,
    chainDeadlineMs: { ...config.chain_deadline_ms },
    ...(config.profiles !== undefined ? { profiles: Object.fromEntries(Object.entries(config.profiles).map(([ref, settings]) => [ref, { ...settings }])) } : {}),
    approvals: {
      maxPendingPerSession: config.approvals.max_pending_per_session,
      maxPending: config.approvals.max_pending,
      maxPendingPerClient: config.approvals.max_pending_per_client,
      maxTimeoutS: config.approvals.max_timeout_s,
      retainDecided: config.approvals.retain_decided,
    },
    cascade: { disableFailingHooks: config.cascade.disable_failing_hooks },
    // The command lane (PROFILES §6): off unless the deployment turns it on.
    exec: {
      enabled: config.exec.enabled,
      shell: config.exec.shell,
      env_allow: [...config.exec.env_allow],
      ...(config.exec.wrapper !== undefined ? { wrapper: [...config.exec.wrapper] } : {}),
      max_output_bytes: config.exec.max_output_bytes,
    },
    conflictStrategy: config.conflict_strategy,
    redactKeys: [...config.redact_keys],
    inputLimits: { maxDepth: config.limits.json_depth, maxBytes: config.limits.input_bytes },
    audit: {
      path: config.audit.path, fsync: config.audit.fsync, rotateBytes: config.audit.rotate_bytes, groupCommitMs: config.audit.group_commit_ms, maxChainBytes: config.audit.max_chain_bytes, redactKeys: [...config.redact_keys],
      ...(config.audit.retention !== undefined ? { retention: retentionOptionsFor(config) } : {}),
    },
    sandbox: {
      threads: config.pool.threads,
      maxQueue: config.pool.max_queue,
      startTimeoutMs: config.pool.start_timeout_ms,
      limits: {
        isolateMemoryMb: config.pool.isolate_memory_mb,
        loadTimeoutMs: config.pool.load_timeout_ms,
        resultBytes: config.limits.result_bytes,
        codeBytes: config.limits.bundle_bytes,
        annotationBytesPerHook: config.limits.annotation_bytes_per_hook,
        annotationBytesPerChain: config.limits.annotation_bytes_per_chain,
      },
      fetch: { allowHosts: [...config.fetch.allow_hosts], denyLlmHosts: [...config.fetch.deny_llm_hosts] },
    },
  };
}

/**
 * Live fields changed in a direction that only a restart completes (relative to the config the
 * runtime was started with): a raised bundle cap, new allowlist entries.
 */
export function partiallyLiveChanges(started: ResolvedConfig, next: ResolvedConfig): string[] {
  const out: string[] = [];
  if (next.limits.bundle_bytes > started.limits.bundle_bytes) out.push("limits.bundle_bytes (raised)");
  const startList = new Set(started.session_hook_allowlist);
  const added = next.session_hook_allowlist.filter((entry) => !startList.has(entry));
  if (added.length > 0) out.push(`session_hook_allowlist (added: ${added.join(", ")})`);
  return out;
}

/** Restart-only fields whose value differs between two configs. */
export function restartOnlyChanges(previous: ResolvedConfig, next: ResolvedConfig): string[] {
  const read = (config: ResolvedConfig, field: string): unknown =>
    field.split(".").reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], config);
  return RESTART_FIELDS.filter((field) => !isDeepStrictEqual(read(previous, field), read(next, field)));
}

/** `audit.retention` as the runtime takes it: what was shipped is read from the cursor of `audit.sink` (serve.ts starts it there). */
function retentionOptionsFor(config: ResolvedConfig): NonNullable<RuntimeAuditOptions["retention"]> {
  const r = config.audit.retention!;
  return {
    ...(r.max_segments !== undefined ? { maxSegments: r.max_segments } : {}),
    ...(r.max_bytes !== undefined ? { maxBytes: r.max_bytes } : {}),
    ...(r.max_age_s !== undefined ? { maxAgeMs: r.max_age_s * 1000 } : {}),
    requireShipped: r.require_shipped,
    intervalMs: r.interval_ms,
    ...(config.audit.sink !== undefined ? { sinkCursorFile: sinkCursorPath(config.audit.path) } : {}),
  };
}
