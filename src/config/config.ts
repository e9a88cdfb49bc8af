import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import YAML from "yaml";
import { z } from "zod";
import { DEFAULTS } from "./defaults.js";
import { VcpError } from "../errors.js";
import { HOOK_TYPES, TrustLevelSchema } from "../model/hook-type.js";
import { checkProfileSettings, getProfile } from "../profiles/index.js";
import type { EventProfile } from "../profiles/types.js";
import { describeIssues } from "../model/zod-errors.js";
import { INPUT_BYTES_CEILING, JSON_DEPTH_CEILING } from "../model/json-bounds.js";
import { SESSION_HOOK_REF } from "../model/names.js";
import { deepFreeze } from "./deep-freeze.js";
import { canonicalJson } from "../integrity/canonical.js";

const HEX64 = /^[0-9a-f]{64}$/;
/** Tokens read from the environment (`auth[].token_env`) are at least this long (`vcp-hooks token` makes longer ones). */
const MIN_ENV_TOKEN_LENGTH = 32;

/** Key prefix of one deployment in a shared Redis: every key and channel starts with `<prefix>:`. */
export const STORE_PREFIX = /^[A-Za-z0-9_.-]{1,64}$/;
const REDIS_ONLY_FIELDS = ["url", "url_env", "config_version"] as const;

/**
 * `store:` — `{ kind: local }` (the default: today's data directory, no Redis touched) or
 * `{ kind: redis, url, prefix }`. One flat object rather than a union so every field is documented in
 * docs/config.md; the refinement says which fields go with which kind.
 */
const StoreConfigSchema = z
  .object({
    kind: z.enum(["local", "redis"]).default(DEFAULTS.store.kind),
    url: z
      .string()
      .regex(/^rediss?:\/\/[^\s]+$/, "must be a redis:// or rediss:// URL (redis://[user:password@]host:port[/db])")
      .optional(),
    // The URL may carry a password: in Kubernetes it comes from a Secret through this variable instead.
    url_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "must be an environment variable name").optional(),
    prefix: z.string().regex(STORE_PREFIX, "1–64 characters of A-Z a-z 0-9 _ . -").default(DEFAULTS.store.prefix),
    config_version: z.string().min(1).max(128).regex(/^[\x21-\x7e]+$/, "printable ASCII without spaces").optional(),
    connect_timeout_ms: z.number().int().min(100).max(60_000).default(DEFAULTS.store.connect_timeout_ms),
    command_timeout_ms: z.number().int().min(50).max(60_000).default(DEFAULTS.store.command_timeout_ms),
    max_backoff_ms: z.number().int().min(100).max(60_000).default(DEFAULTS.store.max_backoff_ms),
    heartbeat_ms: z.number().int().min(100).max(60_000).default(DEFAULTS.store.heartbeat_ms),
    reconcile_ms: z.number().int().min(100).max(600_000).default(DEFAULTS.store.reconcile_ms),
    upload_wait_ms: z.number().int().min(0).max(60_000).default(DEFAULTS.store.upload_wait_ms),
    unreachable_after_ms: z.number().int().min(0).max(600_000).default(DEFAULTS.store.unreachable_after_ms),
  })
  .strict()
  .superRefine((store, ctx) => {
    if (store.kind === "redis" && store.url === undefined && store.url_env === undefined) ctx.addIssue({ code: "custom", path: ["url"], message: "is required with kind: redis (or url_env, naming the environment variable that holds it)" });
    if (store.url !== undefined && store.url_env !== undefined) ctx.addIssue({ code: "custom", path: ["url_env"], message: "give url or url_env, not both" });
    if (store.kind === "local") {
      for (const field of REDIS_ONLY_FIELDS) {
        if (store[field] !== undefined) ctx.addIssue({ code: "custom", path: [field], message: "applies only to kind: redis" });
      }
    }
  })
  .default({ ...DEFAULTS.store });

/**
 * The deployment config `vcp.yaml` (DESIGN §6.4). Every limit has a safe default, from
 * config/defaults.ts (the library reads the same ones); unknown keys are errors so a typo never
 * silently falls back to a default.
 */
export const ConfigSchema = z
  .object({
    listen: z
      .object({ host: z.string().default(DEFAULTS.listen.host), port: z.number().int().min(0).max(65535).default(DEFAULTS.listen.port) })
      .strict()
      .default({ ...DEFAULTS.listen }),
    data_dir: z.string().default(DEFAULTS.data_dir),
    // The key that signs constitution modification links (DESIGN §4.5). Replicas share one (a
    // Kubernetes Secret) so every link verifies with one public key; default data_dir/runtime-key.pem.
    runtime_key_file: z.string().min(1).optional(),
    auth: z
      .array(
        z
          .object({
            id: z.string().min(1).max(64),
            // operator, client, approver, or metrics (GET /metrics only: a scraper's token; src/server/auth.ts).
            role: z.enum(["operator", "client", "approver", "metrics"]),
            // An approver decides the approvals of these client principals only (absent: every client's).
            approves: z.array(z.string().min(1).max(64)).min(1).max(1024).optional(),
            token_sha256: z.string().regex(HEX64, "must be the lowercase hex SHA-256 of the token (64 hex digits), never the token").optional(),
            // The token from an environment variable (a Kubernetes Secret, a compose env): read once
            // here, hashed, and only the hash is kept (as for token_sha256).
            token_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "must be an environment variable name").optional(),
          })
          .strict()
          .transform((entry, ctx) => {
            if ((entry.token_sha256 === undefined) === (entry.token_env === undefined)) {
              ctx.addIssue({ code: "custom", message: "give exactly one of token_sha256 or token_env" });
              return z.NEVER;
            }
            if (entry.approves !== undefined && entry.role !== "approver") {
              ctx.addIssue({ code: "custom", path: ["approves"], message: `only an approver has approves (this entry's role is ${entry.role})` });
              return z.NEVER;
            }
            const approves = entry.approves !== undefined ? { approves: entry.approves } : {};
            if (entry.token_sha256 !== undefined) return { id: entry.id, role: entry.role, token_sha256: entry.token_sha256, ...approves };
            const token = process.env[entry.token_env!];
            // SECURITY: a missing or short token must not start a server whose principal anyone could guess.
            if (token === undefined || token.length < MIN_ENV_TOKEN_LENGTH) {
              ctx.addIssue({ code: "custom", path: ["token_env"], message: token === undefined || token === "" ? `environment variable ${entry.token_env} is not set` : `the token in ${entry.token_env} is shorter than ${MIN_ENV_TOKEN_LENGTH} characters` });
              return z.NEVER;
            }
            return { id: entry.id, role: entry.role, token_sha256: createHash("sha256").update(token).digest("hex"), token_env: entry.token_env!, ...approves };
          }),
      )
      // An approver for a client id that no entry holds would silently see nothing: name the typo.
      .superRefine((entries, ctx) => {
        const clients = new Set(entries.filter((e) => e.role === "client").map((e) => e.id));
        entries.forEach((entry, i) => {
          (entry.approves ?? []).forEach((id, j) => {
            if (!clients.has(id)) ctx.addIssue({ code: "custom", path: [i, "approves", j], message: `'${id}' is not the id of a client entry of auth` });
          });
        });
      })
      .default([]),
    keyring: z
      .object({
        keys: z.array(
          z
            .object({
              key_id: z.string().min(1),
              public_key: z.string().optional(),
              public_key_file: z.string().optional(),
              max_trust: TrustLevelSchema,
            })
            .strict()
            .refine((k) => (k.public_key === undefined) !== (k.public_key_file === undefined), "give exactly one of public_key or public_key_file"),
        ),
      })
      .strict()
      .default({ keys: [] }),
    require_signatures: z.boolean().default(true),
    session_hook_allowlist: z.array(z.string().regex(SESSION_HOOK_REF.regex, "entries are bundle/hook")).default([]),
    safety_critical_rules: z.array(z.string().min(1)).default([]),
    conflict_strategy: z.enum(["most_restrictive", "highest_priority", "reject"]).default("most_restrictive"),
    pool: z
      .object({
        processes: z.literal(1, { error: "only 1 sandbox process is supported" }).default(DEFAULTS.pool.processes),
        threads: z.number().int().min(1).max(64).default(DEFAULTS.pool.threads),
        isolate_memory_mb: z.number().int().min(8).max(4096).default(DEFAULTS.pool.isolate_memory_mb),
        max_queue: z.number().int().min(1).max(1_000_000).default(DEFAULTS.pool.max_queue),
        start_timeout_ms: z.number().int().min(1000).max(600_000).default(DEFAULTS.pool.start_timeout_ms),
        load_timeout_ms: z.number().int().min(10).max(10_000).default(DEFAULTS.pool.load_timeout_ms),
      })
      .strict()
      .default({ ...DEFAULTS.pool }),
    profiles: z
      .record(
        z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}(@[0-9A-Za-z.x-]{1,32})?$/, "keys are <name> or <name>@<version> (e.g. gemini-cli@0.x)"),
        z
          .object({
            strict: z.boolean({ error: "must be a boolean" }).default(false),
            session_ttl_s: z.number().int().min(1).max(31_536_000).default(86_400),
          })
          // Profile-specific settings (e.g. ai-memory required_events) are the profile's to check.
          .catchall(z.unknown()),
      )
      .optional(),
    // Approvals of Amplifier ask_user answers (src/pipeline/approvals.ts, PROFILES §3.4).
    approvals: z
      .object({
        max_pending_per_session: z.number().int().min(1).max(10_000).default(64),
        max_pending: z.number().int().min(1).max(1_000_000).default(4096),
        max_pending_per_client: z.number().int().min(1).max(1_000_000).default(256),
        max_timeout_s: z.number().int().min(1).max(86_400).default(3600),
        retain_decided: z.number().int().min(1).max(1_000_000).default(1024),
      })
      .strict()
      .default({ max_pending_per_session: 64, max_pending: 4096, max_pending_per_client: 256, max_timeout_s: 3600, retain_decided: 1024 }),
    chain_deadline_ms: z.partialRecord(z.enum(HOOK_TYPES), z.number().int().min(1).max(300_000)).default({}),
    cascade: z.object({ disable_failing_hooks: z.boolean().default(false) }).strict().default({ disable_failing_hooks: false }),
    audit: z
      .object({
        path: z.string().default(DEFAULTS.audit.path),
        fsync: z.enum(["batch", "always", "never"]).default(DEFAULTS.audit.fsync),
        rotate_bytes: z.number().int().min(4096).default(DEFAULTS.audit.rotate_bytes),
        group_commit_ms: z.number().min(0).max(100).default(DEFAULTS.audit.group_commit_ms),
        // audit/chain-budget.ts: one request's chain writes at most this much audit.
        max_chain_bytes: z.number().int().min(4096).max(64 * 1024 * 1024).default(DEFAULTS.audit.max_chain_bytes),
        // Decision-log export (src/audit/sink.ts): ships the durable log to a receiver, never blocking chains.
        sink: z
          .object({
            url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
            format: z.enum(["jsonl", "otlp"]).default(DEFAULTS.audit.sink.format),
            batch_records: z.number().int().min(1).max(10_000).default(DEFAULTS.audit.sink.batch_records),
            interval_ms: z.number().int().min(50).max(60_000).default(DEFAULTS.audit.sink.interval_ms),
            timeout_ms: z.number().int().min(100).max(300_000).default(DEFAULTS.audit.sink.timeout_ms),
            max_backoff_ms: z.number().int().min(100).max(3_600_000).default(DEFAULTS.audit.sink.max_backoff_ms),
            headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/, "must be an HTTP header name"), z.string()).default({}),
          })
          .strict()
          .optional(),
        // audit/retention.ts: deletes old rotated segments, by default only those the sink has shipped.
        retention: z
          .object({
            max_segments: z.number().int().min(0).max(1_000_000).optional(),
            max_bytes: z.number().int().min(4096).optional(),
            max_age_s: z.number().int().min(1).max(100 * 365 * 86_400).optional(),
            require_shipped: z.boolean().default(DEFAULTS.audit.retention.require_shipped),
            interval_ms: z.number().int().min(100).max(3_600_000).default(DEFAULTS.audit.retention.interval_ms),
          })
          .strict()
          .refine((r) => r.max_segments !== undefined || r.max_bytes !== undefined || r.max_age_s !== undefined, "give at least one of max_segments, max_bytes or max_age_s (retention without a limit deletes nothing)")
          .optional(),
      })
      .strict()
      // SECURITY: deleting audit records nobody shipped is the operator's explicit choice, never a default.
      .refine((audit) => audit.retention === undefined || !audit.retention.require_shipped || audit.sink !== undefined, {
        path: ["retention", "require_shipped"],
        message: "is true (the default) but no audit.sink ships the log: configure audit.sink, or set require_shipped: false to delete rotated segments nobody has shipped (their records are then gone)",
      })
      .default({ path: DEFAULTS.audit.path, fsync: DEFAULTS.audit.fsync, rotate_bytes: DEFAULTS.audit.rotate_bytes, group_commit_ms: DEFAULTS.audit.group_commit_ms, max_chain_bytes: DEFAULTS.audit.max_chain_bytes }),
    fetch: z
      .object({
        allow_hosts: z.array(z.string().min(1)).default(() => [...DEFAULTS.fetch.allow_hosts]),
        deny_llm_hosts: z.array(z.string().min(1)).default(() => [...DEFAULTS.fetch.deny_llm_hosts]),
      })
      .strict()
      .default(() => ({ allow_hosts: [...DEFAULTS.fetch.allow_hosts], deny_llm_hosts: [...DEFAULTS.fetch.deny_llm_hosts] })),
    limits: z
      .object({
        body_bytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(DEFAULTS.limits.body_bytes),
        bundle_bytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(DEFAULTS.limits.bundle_bytes),
        registrations_per_minute: z.number().int().min(1).max(100_000).default(DEFAULTS.limits.registrations_per_minute),
        result_bytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(DEFAULTS.limits.result_bytes),
        // Open sessions per principal (DESIGN §6.5); each holds its context, constitutions and timers.
        sessions_per_client: z.number().int().min(1).max(1_000_000).default(DEFAULTS.limits.sessions_per_client),
        // model/json-bounds.ts: every input field, hook result field, chain state and log fields.
        json_depth: z.number().int().min(2).max(JSON_DEPTH_CEILING).default(DEFAULTS.limits.json_depth),
        input_bytes: z.number().int().min(1024).max(INPUT_BYTES_CEILING).default(DEFAULTS.limits.input_bytes),
        // chain/annotations.ts: above a cap, a hook's annotations become a { _truncated } marker.
        annotation_bytes_per_hook: z.number().int().min(1024).max(64 * 1024 * 1024).default(DEFAULTS.limits.annotation_bytes_per_hook),
        annotation_bytes_per_chain: z.number().int().min(1024).max(64 * 1024 * 1024).default(DEFAULTS.limits.annotation_bytes_per_chain),
        // server/sse.ts: what unread event streams may hold (issue 24: 300 of them held 908 MB).
        streams_per_principal: z.number().int().min(1).max(1024).default(DEFAULTS.limits.streams_per_principal),
        stream_buffer_bytes: z.number().int().min(64 * 1024).max(64 * 1024 * 1024).default(DEFAULTS.limits.stream_buffer_bytes),
      })
      .strict()
      .default({ ...DEFAULTS.limits }),
    // The command lane (PROFILES §6): existing hook scripts, outside the sandbox. Off by default.
    exec: z
      .object({
        enabled: z.boolean().default(false),
        shell: z.boolean().default(false),
        env_allow: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be an environment variable name")).max(256).default(["PATH", "HOME", "LANG"]),
        wrapper: z.array(z.string().min(1)).min(1).max(64).optional(),
        max_output_bytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(1_048_576),
      })
      .strict()
      .default({ enabled: false, shell: false, env_allow: ["PATH", "HOME", "LANG"], max_output_bytes: 1_048_576 }),
    // The library's list: `serve` must not redact less than `createRuntime` does.
    redact_keys: z.array(z.string().min(1)).default(() => [...DEFAULTS.redact_keys]),
    log_level: z.enum(["debug", "info", "warn", "error"]).optional(),
    // Where shared state lives (issue 18): the data directory alone, or Redis shared by replicas (src/store/).
    store: StoreConfigSchema,
    // The operator console (src/server/console-routes.ts).
    console: z
      .object({ security_report_dir: z.string().min(1).default("bench/reports/sandbox") })
      .strict()
      .default({ security_report_dir: "bench/reports/sandbox" }),
  })
  .strict();

export type ConfigInput = z.input<typeof ConfigSchema>;

/** A validated config: defaults applied, paths absolute, deeply frozen. */
export type ResolvedConfig = DeepReadonly<z.output<typeof ConfigSchema>> & { readonly source: string | null };
export type DeepReadonly<T> = T extends (infer U)[] ? ReadonlyArray<DeepReadonly<U>> : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/**
 * Validate a config object. Relative paths (`data_dir`, `audit.path` under `data_dir`, key files)
 * resolve against `baseDir` (the config file's directory). Errors name every bad field.
 *
 * @example
 * ```ts
 * const config = resolveConfig({ listen: { port: 0 } }, process.cwd());
 * ```
 */
export function resolveConfig(raw: unknown, baseDir: string, source: string | null = null): ResolvedConfig {
  const parsed = ConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const problems = describeIssues(parsed.error);
    throw new VcpError("INVALID_CONFIG", `${source ?? "config"}: ${problems.map((p) => `${p.field}: ${p.rule}`).join("; ")}`, {
      file: source,
      problems,
      field: problems[0]?.field,
    });
  }
  const config = parsed.data;
  const abs = (p: string, base: string) => (isAbsolute(p) ? p : resolve(base, p));
  config.data_dir = abs(config.data_dir, baseDir);
  config.audit.path = abs(config.audit.path, config.data_dir);
  config.console.security_report_dir = abs(config.console.security_report_dir, baseDir);
  if (config.runtime_key_file !== undefined) config.runtime_key_file = abs(config.runtime_key_file, baseDir);
  for (const key of config.keyring.keys) {
    if (key.public_key_file !== undefined) key.public_key_file = abs(key.public_key_file, baseDir);
  }
  for (const [ref, entry] of Object.entries(config.profiles ?? {})) {
    let profile: EventProfile;
    try {
      profile = getProfile(ref);
    } catch (err) {
      // SECURITY: a deployment that names a profile this runtime cannot run must not start silently without it.
      throw new VcpError("INVALID_CONFIG", `${source ?? "config"}: profiles.${ref}: ${err instanceof Error ? err.message : String(err)}`, { field: `profiles.${ref}`, file: source });
    }
    // The profile's own settings (ai-memory required_events, amplifier injection limits), checked by its schema.
    const { strict: _strict, ...settings } = entry;
    checkProfileSettings(profile, ref, settings, source ?? "config");
  }
  const ids = new Set<string>();
  for (const [i, entry] of config.auth.entries()) {
    if (ids.has(entry.id)) throw new VcpError("INVALID_CONFIG", `${source ?? "config"}: auth[${i}].id: '${entry.id}' is listed twice`, { field: `auth[${i}].id` });
    ids.add(entry.id);
  }
  return deepFreeze({ ...config, source });
}

/** Per-process values given on the command line in place of the file's (`serve --data-dir`). */
export interface ConfigOverrides {
  /** Replicas sharing one `vcp.yaml` each need their own data directory (its lock, audit log and replica id). */
  data_dir?: string;
}

/** Read and validate a `vcp.yaml` file. YAML syntax errors name the line and column. */
export function loadConfigFile(path: string, overrides: ConfigOverrides = {}): ResolvedConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new VcpError("INVALID_CONFIG", `${path}: cannot read the config file (${(err as NodeJS.ErrnoException).code ?? String(err)})`, { file: path });
  }
  const doc = YAML.parseDocument(text, { prettyErrors: true });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    const where = first.linePos?.[0] ? `line ${first.linePos[0].line}, column ${first.linePos[0].col}` : "unknown position";
    throw new VcpError("INVALID_CONFIG", `${path}: YAML syntax error at ${where}: ${first.message.split("\n")[0]}`, { file: path, line: first.linePos?.[0]?.line });
  }
  const raw: unknown = doc.toJS();
  if (overrides.data_dir !== undefined && typeof raw === "object" && raw !== null) (raw as Record<string, unknown>).data_dir = resolve(overrides.data_dir);
  return resolveConfig(raw ?? (overrides.data_dir !== undefined ? { data_dir: resolve(overrides.data_dir) } : raw), dirname(resolve(path)), path);
}

/**
 * Fields replicas may set differently: where each listens and keeps its data, its own tokens and
 * keyring (a replica whose keyring refuses a revision keeps the previous one and says so), logging,
 * the console, and how it reaches the store. Everything else is policy that must agree across peers.
 */
const PER_REPLICA_FIELDS = ["listen", "data_dir", "auth", "keyring", "log_level", "console", "audit", "store", "source"] as const;

/**
 * The config version replicas compare at start: `store.config_version` when the operator names one,
 * else `sha256:` + 16 hex digits of the canonical JSON of the shared fields (everything but
 * PER_REPLICA_FIELDS), so two replicas with different limits, profiles or strategies notice.
 *
 * @example
 * ```ts
 * configVersionOf(loadConfigFile("vcp.yaml")); // "sha256:3f9a0c1d2e4b5a69"
 * ```
 */
export function configVersionOf(config: ResolvedConfig): string {
  if (config.store.config_version !== undefined) return config.store.config_version;
  const shared = Object.fromEntries(Object.entries(config).filter(([key]) => !(PER_REPLICA_FIELDS as readonly string[]).includes(key)));
  return `sha256:${createHash("sha256").update(canonicalJson(shared)).digest("hex").slice(0, 16)}`;
}
