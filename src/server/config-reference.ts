/**
 * docs/config.md, generated from the config schema (`ConfigSchema` of src/config/config.ts) so the
 * reference cannot drift from what `serve` accepts: every field with its type, bounds, default and
 * whether a SIGHUP reload applies it (LIVE_FIELDS / RESTART_FIELDS of ./options.ts). The prose for
 * each field lives here, keyed by its path; test/unit/config/reference.test.ts fails when a schema
 * field has no prose, no reload class, or docs/config.md is out of date (`npm run docs:config`).
 */
import { z } from "zod";
import { ConfigSchema } from "../index.js";
import { LIVE_FIELDS, RESTART_FIELDS } from "./options.js";

/** What each field does, by path (`auth[].id` for fields of list items). */
export const FIELD_DOCS: Readonly<Record<string, string>> = {
  listen: "Where the HTTP server listens.",
  "listen.host": "Interface to bind. Keep `127.0.0.1` behind a reverse proxy; `0.0.0.0` in a container.",
  "listen.port": "TCP port; `0` picks a free one (printed at start).",
  data_dir: "Data directory: installed bundles, the audit log, the lock of the running server. Relative to the config file's directory.",
  runtime_key_file: "PKCS#8 PEM Ed25519 private key that signs constitution modification links (DESIGN §4.5). Give one file shared by every replica (e.g. a Kubernetes Secret) so every link verifies with one public key; it is only read. Default: `data_dir/runtime-key.pem`, generated at the first start. Relative to the config file's directory.",
  auth: "Bearer-token principals. The server stores only each token's SHA-256; `vcp-hooks token` makes a token and its entry.",
  "auth[].id": "Name of the principal (audit records, logs); unique.",
  "auth[].role": "`operator` (bundles, audit, status, metrics, every session and approval), `client` (its own sessions and events; reads its own approvals but never decides one: its agent asked), `approver` (sees and decides approvals — of the clients in `approves`, else every client's — and nothing else: the token of the human who answers an agent's asks) or `metrics` (`GET /metrics` and nothing else: a Prometheus scraper's token).",
  "auth[].approves": "`approver` only: the client principal ids whose approvals it sees and decides; another client's approval is 404 `APPROVAL_NOT_FOUND` for it. Absent: every client's.",
  "auth[].token_sha256": "Lowercase hex SHA-256 of the token, never the token itself (give this or `token_env`).",
  "auth[].token_env": "Name of an environment variable holding the token (e.g. from a Kubernetes Secret): read at start and at each reload, at least 32 characters, kept only as its SHA-256. Give this or `token_sha256`.",
  keyring: "Public keys that may sign bundles, each with the highest trust level it may grant.",
  "keyring.keys": "The keys; a bundle signed by none of them is refused when `require_signatures` is on.",
  "keyring.keys[].key_id": "The id a signature names (`vcp-hooks sign --key-id`).",
  "keyring.keys[].public_key": "The Ed25519 public key as PEM text (give this or `public_key_file`).",
  "keyring.keys[].public_key_file": "A file holding the PEM public key, relative to the config file's directory.",
  "keyring.keys[].max_trust": "Highest `trust` a bundle signed by this key may declare: `system`, `deployment` or `session`.",
  require_signatures: "Refuse unsigned bundles and bundles whose signatures do not verify against the keyring.",
  session_hook_allowlist: "`bundle/hook` pairs clients may register as session hooks; everything else is refused.",
  safety_critical_rules: "Rule ids that no hook may drop or edit (spec §8.2.4), in addition to rules marked `safety_critical`.",
  conflict_strategy: "Default resolution of `on_conflict` when no hook resolves it: `most_restrictive`, `highest_priority` or `reject`.",
  pool: "The sandbox process and its worker threads.",
  "pool.processes": "Sandbox processes; only 1 is supported.",
  "pool.threads": "Worker threads in the sandbox process (each runs one chain at a time).",
  "pool.isolate_memory_mb": "Default heap limit of one isolate (a bundle's `limits.memory_mb` may lower it).",
  "pool.max_queue": "Chains that may wait for a worker; above it a chain is refused with `SANDBOX_OVERLOADED`.",
  "pool.start_timeout_ms":
    "Time the sandbox process has to start, at `serve` start and after a crash: a start that fails early (the process dies or cannot be forked) is retried with backoff (0.5 s, doubling, at most 5 s) and a slow one is waited for, until this time is up; then `SANDBOX_START_FAILED`. At `serve` start the reload of installed bundles retries within the same time. Keep it under the supervisor's patience (the k8s `startupProbe` in `deploy/k8s/` allows 150 s).",
  "pool.load_timeout_ms":
    "Budget of a bundle's top-level code (and the sandbox prelude) when it is loaded; an upload past it is refused with `INVALID_BUNDLE`. Reloads after a restart are not refused for it: at `serve` start they are retried with backoff within `pool.start_timeout_ms`, after a sandbox crash the bundle loads on first use. A hook's first call on a worker runs top-level code within the smaller of this and its own timeout.",
  profiles:
    "Event profiles this deployment runs (PROFILES §8.2): a map of `<name>@<version>` (or the bare name) to its settings. A bundle of a profile not listed is refused at install with `PROFILE_DISABLED`. Absent: every profile in the catalogue is enabled, non-strict. `GET /v1/profiles` lists what is enabled. Each entry: `strict` (fix the upstream surprises the profile documents, PROFILES §1.6; default false), `session_ttl_s` (idle time after which an implicit session `(profile, session_id)` expires, PROFILES §8.3; default 86400), and the profile's own settings, checked by the profile's settings schema at load (an unknown or bad one is `INVALID_CONFIG` naming `profiles.<name>.<field>`): `ai-memory` `required_events` (events that must have an enabled hook; with none the event is denied with code 503), `amplifier` `injection_size_limit` (characters per context injection, default 10240; a larger injection is refused with `INJECTION_TOO_LARGE` in the answer's `errors`) and `injection_budget_per_turn` (tokens = characters / 4 per chain, default 1000; crossing it is a warning only). `gemini-cli`, `llxprt`, `claude-code` and `repo-yaml` have no settings of their own. `vcp@1` is always enabled.",
  approvals: "Approvals of Amplifier `ask_user` answers (PROFILES §3.4): each is pending until an `approver` of the session's owner or an operator decides it (`POST /v1/approvals/{id}`; the owner's client token may read it but not decide it) or its timeout applies the hook's `approval_default`. Every limit applies before an approval is created.",
  "approvals.max_pending_per_session": "Pending approvals one session may have; one more ask is refused with `APPROVAL_LIMIT` (429).",
  "approvals.max_pending": "Pending approvals in the whole runtime; one more ask is refused with `APPROVAL_LIMIT` (429).",
  "approvals.max_pending_per_client": "Pending approvals of one client token over all its sessions; one more ask is refused with `APPROVAL_LIMIT` (429), so one client cannot take the whole runtime's `max_pending` from the others. With `store.kind: redis` it counts the client's pending approvals on all replicas together.",
  "approvals.max_timeout_s": "Cap on a hook's `approval_timeout` (seconds); a longer one waits this long, then applies its default.",
  "approvals.retain_decided": "Decided and expired approvals kept readable (`GET /v1/approvals`, oldest forgotten first); the audit log keeps every one.",
  chain_deadline_ms: "Optional whole-chain deadline per hook type (e.g. `{ pre_inject: 200 }`).",
  cascade: "Cascade-failure handling (spec §7).",
  "cascade.disable_failing_hooks": "Disable the hooks that failed in a cascade failure, in that chain's session only (other sessions keep running them; otherwise only report it).",
  audit: "The hash-chained audit log.",
  "audit.path": "Audit file, relative to `data_dir`.",
  "audit.fsync": "`batch` (one fdatasync per group of records; a chain returns after its records are durable), `always` (one per record) or `never`.",
  "audit.rotate_bytes": "Size at which the file is renamed to `.000001`, `.000002`, … and the chain continues in a new file.",
  "audit.group_commit_ms": "Group-commit window: batches of records are written and synced at least this far apart (ms), so under load more records share one sync (at most 1000 / window syncs per second); a log idle that long writes at once. Each sync costs CPU (system time), so e.g. `1` trades ≤ 1 ms of latency under load for fewer syncs. `0`: each batch as soon as the previous one is durable. Durability is unchanged: a chain still returns after its records are synced.",
  "audit.max_chain_bytes": "Bytes one chain's audit records (one per hook, one for the chain) may take together. Above it the largest hook diffs, annotations and details are replaced, largest first, by `{ \"_truncated\": true, \"code\": \"AUDIT_TRUNCATED\", \"cap\": \"audit_chain\", \"bytes\", \"limit\" }` (a details marker keeps the first 256 characters of the reason and error), and the chain record's `details.audit_truncated` says how many fields and bytes were cut. Records are never dropped, the marker is hashed like any value (`audit verify` passes), and the answer to the caller is unchanged.",
  "audit.sink": "Optional decision-log export: ships the audit log to an HTTP receiver in order, in batches, reading the durable file so chains never wait; a cursor (`sink.cursor` next to the log, the last acknowledged record's `seq` and `hash`) makes a restart resume, and a log moved aside and started again is shipped from its first record (logged); failures, redirects included (never followed: the records and headers stay with `url`), are retried with backoff and lose nothing (at-least-once). Status: `GET /v1/status` → `server.audit_sink`.",
  "audit.sink.url": "Receiver URL (http or https), e.g. an OpenTelemetry Collector's `http://otel:4318/v1/logs`.",
  "audit.sink.format": "`jsonl` (application/x-ndjson, each record as stored: a receiver can re-verify its hash) or `otlp` (OTLP/JSON logs).",
  "audit.sink.batch_records": "Records per request (at most; a partial batch waits one `interval_ms`).",
  "audit.sink.interval_ms": "How often the log is polled for new records.",
  "audit.sink.timeout_ms": "A request without an answer within this is a failure (retried; the cursor does not move).",
  "audit.sink.max_backoff_ms": "Longest wait between retries (exponential from 500 ms).",
  "audit.sink.headers": "Extra request headers, e.g. the receiver's `Authorization` (never logged).",
  "audit.retention":
    "Optional deletion of old rotated segments (`<path>.000001`, …), so the log's disk stays bounded (without it nothing is ever deleted). Limits, in any combination (at least one): a segment goes when any limit wants it gone, oldest first; the live file is never deleted. A segment is deleted only once `audit.sink` has shipped every record in it (the receiver acknowledged it, and the sink's cursor is this log's): past a limit but unshipped, it is kept and `GET /v1/status` `audit.retention` says so (`blocked`, `held_segments`, `held_bytes`, `blocked_reason`), as do `vcp_audit_retention_blocked` and `vcp_audit_retention_held_bytes`. Before deleting, a `retention` record naming each deleted segment's last `seq` and `hash` is written to the chain, so `vcp-hooks audit verify` checks the kept log from its first record and still fails on a segment deleted by hand.",
  "audit.retention.max_segments": "Keep at most this many rotated segments (the live file is not counted); `0` keeps none once shipped.",
  "audit.retention.max_bytes": "Keep the log — rotated segments plus the live file — at most this many bytes by deleting the oldest segments. The live file (up to `rotate_bytes`) is never deleted, and unshipped segments are kept, so size a volume for `max_bytes` + `rotate_bytes` + what the sink may fall behind.",
  "audit.retention.max_age_s": "Delete a rotated segment once its newest record is older than this many seconds (e.g. `2592000` for 30 days).",
  "audit.retention.require_shipped":
    "Delete only what `audit.sink` has shipped (default `true`; then `audit.sink` is required, and a config without one is refused with `INVALID_CONFIG` naming this field). `false`: delete by the limits alone, with or without a sink — a deleted segment's records then exist nowhere else. An audit log is evidence: losing records is never a default, so a deployment without a receiver says so here explicitly.",
  "audit.retention.interval_ms": "How often retention runs, besides at start and after each rotation (age limits and a sink catching up need no rotation).",
  fetch: "`vcp.fetch` for `system`-trust bundles.",
  "fetch.allow_hosts": "Hosts `system` bundles may fetch from; empty means none.",
  "fetch.deny_llm_hosts": "LLM endpoints no hook may ever reach (spec §5.5), checked before any I/O.",
  limits: "Size and rate limits, applied before any work on the input.",
  "limits.body_bytes": "Largest request body on every route except bundle uploads; refused with 413 before it is read.",
  "limits.bundle_bytes": "Largest bundle upload (and bundle code size).",
  "limits.registrations_per_minute": "Registry changes (bundle installs, session hooks) per principal per minute; with `store.kind: redis`, on all replicas together (a session hook replayed on the replica that runs its session's chains is not counted again).",
  "limits.sessions_per_client": "Open sessions one client principal may hold (one more is refused with 429 `SESSION_LIMIT`), and separately its implicit event-profile sessions, which never refuse an event: a new one past the cap evicts the client's least recently used idle one (`vcp_implicit_sessions_evicted_total`). With `store.kind: redis` each counts on all replicas together. Operators and the embedding application are not counted.",
  store:
    "Where state shared by replicas lives (issue 18). `kind: local` (the default): the data directory only; no Redis is touched. `kind: redis`: every replica with the same `prefix` shares installed bundles (an upload to any replica is verified by each against its own keyring and swapped in; `GET /v1/status` `store.replicas` shows each replica's revision) registry rate limits, sessions (any replica serves any session; its operations are serialized across replicas by a lock; `limits.sessions_per_client` counts every replica), periodic hooks (each tick fires once, on one replica) and approvals (raised on one replica, answered on any) through one Redis. A Redis failure answers 503 `STORE_UNAVAILABLE` naming the operation, and nothing is half-written; chains that need no shared state (profile events) keep running.",
  "store.kind": "`local` or `redis`.",
  "store.url": "`redis://[user:password@]host:port[/db]` or `rediss://…` (TLS); required with `kind: redis`. Logs and status show host and port only.",
  "store.url_env": "Instead of `url`: the name of an environment variable holding it (e.g. from a Kubernetes Secret, since the URL may carry a password). Unset at start: `INVALID_CONFIG` naming it.",
  "store.prefix": "Prefix of every key and channel of this deployment; replicas that share state use the same one. A replica that sees no live peer under its prefix while other prefixes have live replicas says so at start.",
  "store.config_version": "A label replicas compare at start; a replica whose peers run another says so (log and `store.warnings` in status). Absent: a digest of the config fields that must agree (everything except `listen`, `data_dir`, `auth`, `keyring`, `log_level`, `console`, `audit`, `store`).",
  "store.connect_timeout_ms": "How long a start waits for Redis; without it the replica starts anyway, serving what its data directory holds, and keeps reconnecting.",
  "store.command_timeout_ms": "Longest wait for one Redis command; past it the operation fails with `STORE_UNAVAILABLE` (503).",
  "store.max_backoff_ms": "Ceiling of the reconnect backoff (exponential from 100 ms, with jitter).",
  "store.heartbeat_ms": "How often a replica writes its record (revision, bundles, refusals) and reads its peers'; a replica silent for 3 intervals is not live.",
  "store.reconcile_ms": "How often a replica re-reads the shared bundle revision even without a notification (covers missed pub/sub messages), and retries a revision or removal it could not apply for a reason that can pass (its data directory, the sandbox, Redis).",
  "store.unreachable_after_ms": "How long Redis may go without answering this replica (commands timing out, or no connection) before the replica is not ready: `/readyz` answers 503 `store_unreachable`, status shows `store.connection.connected: false` with `unreachable_ms`, and `vcp_store_unreachable` is 1, so a load balancer stops sending it session calls it could only answer 503. It is ready again at Redis's first answer. `/healthz` is unaffected (a restart would not help). When Redis itself is down every replica is affected alike, stateless chains included; `0` keeps replicas ready without Redis.",
  "store.upload_wait_ms": "How long `PUT /v1/bundles/{name}` waits, after the upload is shared, for the other live replicas to accept or refuse the revision (each verifies it with its own keyring); the answer's `replicas` lists `accepted`, `refused` (`replica`, `code`, `message`) and `pending` (silent when the wait ended). `0`: answer at once (the others are pending). A replica that refused the active revision of a bundle is not ready (`/readyz` 503) until it runs it.",
  console: "The operator console at `/console` (bundles, chains, live decisions, health, security report).",
  "console.security_report_dir": "Directory holding the latest `npm run bench:sandbox` report (`report.json`, `report.html`) that the console's Security page shows, relative to the config file's directory.",
  "limits.json_depth": "Deepest nesting of every input field, every hook result field, `chain_state` and `vcp.log` fields (`event`/`session` may add one level for the fields they carry; HTTP bodies `json_depth + 2`); deeper input is `INVALID_INPUT`, a deeper result `invalid_result`.",
  "limits.input_bytes": "Serialized size of each input field and of a chain's fields together; larger is `INVALID_INPUT` (HTTP 400).",
  "limits.annotation_bytes_per_hook": "Above it a hook's `annotations` become `{ \"_truncated\": true, \"bytes\", \"limit\", \"cap\": \"per_hook\" }`; its status, reason and modifications stand.",
  "limits.streams_per_principal": "Server-sent-event streams (`GET /v1/approvals/stream`, `GET /v1/decisions/stream`, together) one principal may have open on this server; one more is refused with 429 `STREAM_LIMIT` before anything is sent. Counted per server process (each replica bounds its own memory). Applies to streams opened after a reload.",
  "limits.stream_buffer_bytes": "Bytes an event stream may have written but not yet sent (its reader is behind). Past it the approvals stream ends with `event: end` (`reason: slow_consumer`; reconnecting lists the pending approvals again) and the decisions stream drops events (counted in its `stats` event); a reader that does not take the last bytes within 5 s is disconnected. Applies to streams opened after a reload.",
  "limits.annotation_bytes_per_chain": "Above it the chain's largest annotations are truncated first (`\"cap\": \"per_chain\"`).",
  "limits.result_bytes": "Largest serialized hook result; above it the hook's outcome is `invalid_result`.",
  exec: "The command lane (PROFILES §6): hooks that run an existing script outside the sandbox, only from signed `system`-trust bundles, each pinned by SHA-256 and re-hashed before every spawn. Their results are marked `sandboxed: false`.",
  "exec.enabled": "Allow exec hooks at all; off, a bundle carrying one is refused with `EXEC_DISABLED`.",
  "exec.shell": "Allow an exec hook's command to be a shell string (`sh -c`); off, it is refused with `EXEC_SHELL_DISABLED`.",
  "exec.env_allow": "Environment variables passed to a script; every other variable of the server is withheld.",
  "exec.wrapper": "Optional argv prefix every script runs under, e.g. `[bwrap, --ro-bind, /, /, --unshare-net, --]` or a `systemd-run` line.",
  "exec.max_output_bytes": "Bytes kept of a script's stdout and of its stderr each; beyond it the output is cut and the result marked `truncated`.",
  redact_keys: "Keys whose values are replaced by `[redacted]` in annotations, error details and guest logs before they are logged or audited (secret shapes — bearer tokens, PEM keys, `sk-…`, `AKIA…`, JWTs — always are).",
  log_level: "Operational log level (`debug`, `info`, `warn`, `error`); `--log-level` and `VCP_LOG_LEVEL` take precedence. Default `info`.",
};

interface JsonSchemaNode {
  type?: string | string[];
  properties?: Record<string, JsonSchemaNode>;
  items?: JsonSchemaNode;
  enum?: unknown[];
  const?: unknown;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  propertyNames?: JsonSchemaNode;
  additionalProperties?: JsonSchemaNode | boolean;
}

export interface FieldRow {
  path: string;
  type: string;
  default: string;
  /** `per field` for an object whose fields reload differently (`limits`). */
  reload: "live" | "restart" | "per field";
  description: string | undefined;
}

function typeText(node: JsonSchemaNode): string {
  if (node.const !== undefined) return `\`${JSON.stringify(node.const)}\``;
  if (node.enum) return node.enum.map((v) => `\`${String(v)}\``).join(" \\| ");
  let text = Array.isArray(node.type) ? node.type.join(" \\| ") : (node.type ?? "any");
  if (text === "array" && node.items) text = `list of ${node.items.properties ? "objects" : typeText(node.items)}`;
  if (text === "object" && node.propertyNames?.enum) text = `map of ${node.propertyNames.enum.map((v) => `\`${String(v)}\``).join(", ")} → ${typeText(node.additionalProperties as JsonSchemaNode)}`;
  const bounds: string[] = [];
  if (node.minimum !== undefined || node.maximum !== undefined) bounds.push(`${node.minimum ?? "…"}–${node.maximum ?? "…"}`);
  if (node.minLength !== undefined || node.maxLength !== undefined) bounds.push(`length ${node.minLength ?? 0}–${node.maxLength ?? "…"}`);
  if (node.pattern) bounds.push(`\`${node.pattern}\``);
  return bounds.length ? `${text} (${bounds.join(", ")})` : text;
}

/** Whether a reload applies `path`: the nearest enclosing field named in LIVE_FIELDS or RESTART_FIELDS. */
export function reloadClass(path: string): "live" | "restart" | undefined {
  const top = path.replace(/\[\]/g, "");
  for (let p = top; p !== ""; p = p.includes(".") ? p.slice(0, p.lastIndexOf(".")) : "") {
    if ((LIVE_FIELDS as readonly string[]).includes(p)) return "live";
    if ((RESTART_FIELDS as readonly string[]).includes(p)) return "restart";
  }
  return undefined;
}

/** Every field of the config schema, depth first, in schema order. */
export function configFields(): FieldRow[] {
  const root = z.toJSONSchema(ConfigSchema, { io: "input", unrepresentable: "any" }) as JsonSchemaNode;
  const rows: FieldRow[] = [];
  const walk = (node: JsonSchemaNode, prefix: string): void => {
    for (const [key, child] of Object.entries(node.properties ?? {})) {
      const path = prefix ? `${prefix}.${key}` : key;
      const row: FieldRow = {
        path,
        type: typeText(child),
        default: child.default === undefined ? "–" : `\`${JSON.stringify(child.default)}\``,
        reload: reloadClass(path) ?? "restart",
        description: FIELD_DOCS[path],
      };
      rows.push(row);
      const first = rows.length;
      if (child.properties) walk(child, path);
      if (child.items?.properties) walk(child.items, `${path}[]`);
      const inner = new Set(rows.slice(first).filter((r) => r.path.split(".").length === path.split(".").length + 1).map((r) => r.reload));
      if (reloadClass(path) === undefined && inner.size > 1) row.reload = "per field";
    }
  };
  walk(root, "");
  return rows;
}

/** The text of docs/config.md. */
export function renderConfigReference(): string {
  const cell = (s: string): string => s.replace(/\|/g, "\\|").replace(/\\\\\|/g, "\\|");
  const lines = [
    "# `vcp.yaml` reference",
    "",
    "<!-- Generated by `npm run docs:config` from the config schema (src/config/config.ts) and the field",
    "     docs in src/server/config-reference.ts. Do not edit by hand: a test compares this file. -->",
    "",
    "`vcp-hooks serve --config vcp.yaml` reads this file; `vcp-hooks config check --config vcp.yaml` validates",
    "it without starting. Unknown keys are errors. Relative paths resolve against the config file's",
    "directory (`audit.path` against `data_dir`). **Reload**: `live` fields take effect on `SIGHUP`",
    "(`systemctl reload`) for the next request; `restart` fields keep their running value until a restart,",
    "and the reload logs which ones changed. `limits.bundle_bytes` and `session_hook_allowlist` are live only",
    "in the narrowing direction (a raised cap or a new entry needs a restart).",
    "",
    "| field | type | default | reload | what it does |",
    "|---|---|---|---|---|",
    ...configFields().map((r) => `| \`${r.path}\` | ${cell(r.type)} | ${cell(r.default)} | ${r.reload} | ${cell(r.description ?? "")} |`),
    "",
  ];
  return lines.join("\n");
}
