/**
 * Every default of vcp-hooks in one place, in the wire names of the deployment config (DESIGN §6.4):
 * the config schema (config.ts) fills a `vcp.yaml` from here, and the library reads the same values
 * when an option is left out — `createRuntime`, the sandbox supervisor and isolate host, the audit
 * trail and sink, the registry — so `serve` and an embedding application behave alike. No I/O and no
 * dependencies: core modules and the sandbox workers import it.
 *
 * Changing a default here changes it everywhere; `npm run docs:config` regenerates the reference.
 */
import { deepFreeze } from "./deep-freeze.js";

/** Secret-bearing key names redacted from audit payloads, guest log fields and the operational log. */
const REDACT_KEYS: readonly string[] = Object.freeze([
  "authorization", "proxy-authorization", "cookie", "set-cookie", "password", "passwd", "secret",
  "client_secret", "token", "access_token", "refresh_token", "id_token", "api_key", "private_key",
  "private_key_pem", "token_sha256",
]);

/** LLM API hosts a `system`-trust bundle's `fetch` may never reach (DESIGN §4.4: no model calls from policy). */
const DENY_LLM_HOSTS: readonly string[] = Object.freeze([
  "api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com", "api.mistral.ai", "api.cohere.com", "api.groq.com",
]);

export const DEFAULTS = deepFreeze({
  listen: { host: "127.0.0.1", port: 8787 },
  data_dir: "./.vcp",
  pool: {
    processes: 1 as const,
    threads: 2,
    isolate_memory_mb: 64,
    max_queue: 1024,
    /**
     * The sandbox host's start (and each restart), retries included (pool/host-lifecycle.ts). Within the
     * k8s startupProbe of deploy/k8s/deployment.yaml (test/package/k8s.test.ts checks the two agree).
     */
    start_timeout_ms: 90_000,
    /** Budget of a bundle's top-level code at load (sandbox-host/isolate-host.ts); a restart's reloads retry past it. */
    load_timeout_ms: 1000,
  },
  audit: {
    path: "audit/audit.jsonl",
    /** Group commit: one fdatasync per write of a batch (audit/writer.ts). */
    fsync: "batch" as "batch" | "always" | "never",
    rotate_bytes: 100 * 1024 * 1024,
    /** Group-commit window (audit/writer.ts flushIntervalMs): 0 syncs each batch as soon as the previous one is done. */
    group_commit_ms: 0,
    /** audit/chain-budget.ts: bytes of one chain's records together; above it the largest fields become markers. */
    max_chain_bytes: 64 * 1024,
    /** Records queued in the writer before appends wait (backpressure). */
    max_pending: 4096,
    sink: { format: "jsonl" as "jsonl" | "otlp", batch_records: 500, interval_ms: 1000, timeout_ms: 10_000, max_backoff_ms: 60_000 },
    /** audit/retention.ts: deletes only what the sink shipped unless told otherwise; runs this often besides after each rotation. */
    retention: { require_shipped: true, interval_ms: 60_000 },
  },
  fetch: { allow_hosts: [] as readonly string[], deny_llm_hosts: DENY_LLM_HOSTS },
  limits: {
    body_bytes: 1024 * 1024,
    bundle_bytes: 5 * 1024 * 1024,
    registrations_per_minute: 30,
    result_bytes: 1024 * 1024,
    sessions_per_client: 100,
    /** model/json-bounds.ts: nesting of every input field, result field, chain state and log field. */
    json_depth: 64,
    input_bytes: 1024 * 1024,
    /** chain/annotations.ts: above a cap, a hook's annotations become a `{ _truncated }` marker. */
    annotation_bytes_per_hook: 64 * 1024,
    annotation_bytes_per_chain: 256 * 1024,
    /** server/sse.ts: event streams (approvals, decisions) one principal may have open on one server. */
    streams_per_principal: 8,
    /** server/sse.ts: bytes a stream may hold written but unsent before it drops or ends (slow reader). */
    stream_buffer_bytes: 1024 * 1024,
  },
  redact_keys: REDACT_KEYS,
  /** Where shared state lives: `local` (the data directory only) or `redis` (src/store/). */
  store: {
    kind: "local" as "local" | "redis",
    prefix: "vcp",
    connect_timeout_ms: 5000,
    command_timeout_ms: 2000,
    max_backoff_ms: 5000,
    heartbeat_ms: 1000,
    reconcile_ms: 5000,
    upload_wait_ms: 2000,
    unreachable_after_ms: 5000,
  },
});
