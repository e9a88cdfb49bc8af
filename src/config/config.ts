import { readFileSync } from "node:fs";
import { dirname, isAbsolute, resolve } from "node:path";
import YAML from "yaml";
import { z } from "zod";
import { DEFAULT_REDACT_KEYS } from "../audit/redact.js";
import { VcpError } from "../errors.js";
import { HOOK_TYPES, TrustLevelSchema } from "../model/hook-type.js";
import { checkProfileSettings, getProfile } from "../profiles/index.js";
import type { EventProfile } from "../profiles/types.js";
import { describeIssues } from "../model/zod-errors.js";
import { DEFAULT_INPUT_BYTES, DEFAULT_JSON_DEPTH, INPUT_BYTES_CEILING, JSON_DEPTH_CEILING } from "../model/json-bounds.js";
import { DEFAULT_ANNOTATION_BYTES_PER_CHAIN, DEFAULT_ANNOTATION_BYTES_PER_HOOK } from "../chain/annotations.js";

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The deployment config `vcp.yaml` (DESIGN §6.4). Every limit has a safe default; unknown keys are
 * errors so a typo never silently falls back to a default.
 */
export const ConfigSchema = z
  .object({
    listen: z
      .object({ host: z.string().default("127.0.0.1"), port: z.number().int().min(0).max(65535).default(8787) })
      .strict()
      .default({ host: "127.0.0.1", port: 8787 }),
    data_dir: z.string().default("./.vcp"),
    auth: z
      .array(
        z
          .object({
            id: z.string().min(1).max(64),
            role: z.enum(["operator", "client"]),
            token_sha256: z.string().regex(HEX64, "must be the lowercase hex SHA-256 of the token (64 hex digits), never the token"),
          })
          .strict(),
      )
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
    session_hook_allowlist: z.array(z.string().regex(/^[a-z0-9_-]{1,64}\/[a-z0-9_-]{1,64}$/, "entries are bundle/hook")).default([]),
    safety_critical_rules: z.array(z.string().min(1)).default([]),
    conflict_strategy: z.enum(["most_restrictive", "highest_priority", "reject"]).default("most_restrictive"),
    pool: z
      .object({
        processes: z.literal(1, { error: "only 1 sandbox process is supported" }).default(1),
        threads: z.number().int().min(1).max(64).default(2),
        isolate_memory_mb: z.number().int().min(8).max(4096).default(64),
        max_queue: z.number().int().min(1).max(1_000_000).default(1024),
      })
      .strict()
      .default({ processes: 1, threads: 2, isolate_memory_mb: 64, max_queue: 1024 }),
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
    chain_deadline_ms: z.partialRecord(z.enum(HOOK_TYPES), z.number().int().min(1).max(300_000)).default({}),
    cascade: z.object({ disable_failing_hooks: z.boolean().default(false) }).strict().default({ disable_failing_hooks: false }),
    audit: z
      .object({
        path: z.string().default("audit/audit.jsonl"),
        fsync: z.enum(["batch", "always", "never"]).default("batch"),
        rotate_bytes: z.number().int().min(4096).default(104_857_600),
        // Decision-log export (src/audit/sink.ts): ships the durable log to a receiver, never blocking chains.
        sink: z
          .object({
            url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }),
            format: z.enum(["jsonl", "otlp"]).default("jsonl"),
            batch_records: z.number().int().min(1).max(10_000).default(500),
            interval_ms: z.number().int().min(50).max(60_000).default(1000),
            timeout_ms: z.number().int().min(100).max(300_000).default(10_000),
            max_backoff_ms: z.number().int().min(100).max(3_600_000).default(60_000),
            headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,64}$/, "must be an HTTP header name"), z.string()).default({}),
          })
          .strict()
          .optional(),
      })
      .strict()
      .default({ path: "audit/audit.jsonl", fsync: "batch", rotate_bytes: 104_857_600 }),
    fetch: z
      .object({
        allow_hosts: z.array(z.string().min(1)).default([]),
        deny_llm_hosts: z
          .array(z.string().min(1))
          .default(["api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com", "api.mistral.ai", "api.cohere.com", "api.groq.com"]),
      })
      .strict()
      .default({ allow_hosts: [], deny_llm_hosts: ["api.openai.com", "api.anthropic.com", "generativelanguage.googleapis.com", "api.mistral.ai", "api.cohere.com", "api.groq.com"] }),
    limits: z
      .object({
        body_bytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(1_048_576),
        bundle_bytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(5_242_880),
        registrations_per_minute: z.number().int().min(1).max(100_000).default(30),
        result_bytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(1_048_576),
        // Open sessions per principal (DESIGN §6.5); each holds its context, constitutions and timers.
        sessions_per_client: z.number().int().min(1).max(1_000_000).default(100),
        // model/json-bounds.ts: every input field, hook result field, chain state and log fields.
        json_depth: z.number().int().min(2).max(JSON_DEPTH_CEILING).default(DEFAULT_JSON_DEPTH),
        input_bytes: z.number().int().min(1024).max(INPUT_BYTES_CEILING).default(DEFAULT_INPUT_BYTES),
        // chain/annotations.ts: above a cap, a hook's annotations become a { _truncated } marker.
        annotation_bytes_per_hook: z.number().int().min(1024).max(64 * 1024 * 1024).default(DEFAULT_ANNOTATION_BYTES_PER_HOOK),
        annotation_bytes_per_chain: z.number().int().min(1024).max(64 * 1024 * 1024).default(DEFAULT_ANNOTATION_BYTES_PER_CHAIN),
      })
      .strict()
      .default({
        body_bytes: 1_048_576, bundle_bytes: 5_242_880, registrations_per_minute: 30, result_bytes: 1_048_576, sessions_per_client: 100,
        json_depth: DEFAULT_JSON_DEPTH, input_bytes: DEFAULT_INPUT_BYTES,
        annotation_bytes_per_hook: DEFAULT_ANNOTATION_BYTES_PER_HOOK, annotation_bytes_per_chain: DEFAULT_ANNOTATION_BYTES_PER_CHAIN,
      }),
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
    redact_keys: z.array(z.string().min(1)).default([...DEFAULT_REDACT_KEYS]),
    log_level: z.enum(["debug", "info", "warn", "error"]).optional(),
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
type DeepReadonly<T> = T extends (infer U)[] ? ReadonlyArray<DeepReadonly<U>> : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

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

/** Read and validate a `vcp.yaml` file. YAML syntax errors name the line and column. */
export function loadConfigFile(path: string): ResolvedConfig {
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
  return resolveConfig(doc.toJS(), dirname(resolve(path)), path);
}
