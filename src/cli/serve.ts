/**
 * `vcp-hooks serve [--config vcp.yaml] [--port N] [--host H] [--log-level L]`: the HTTP server.
 *
 * With a config file: validated at start (errors name the field), reloaded on SIGHUP (see
 * src/server/options.ts for what is live and what needs a restart; an invalid new config is logged
 * and the previous one kept). Without one: the embedded default (DESIGN §6.4) — data in ./.vcp, the
 * bundles under ./policies built and signed with a development key kept in ./.vcp/dev-key.pem
 * (keyring max_trust deployment), and two bearer tokens printed once.
 *
 * Tokens of the embedded default are generated per start (or taken from VCP_OPERATOR_TOKEN /
 * VCP_CLIENT_TOKEN) and held only as SHA-256 hashes: they are printed once on stdout and never
 * logged or written to disk, so a leaked log or data directory does not leak a credential.
 *
 * SIGTERM/SIGINT: stop accepting, answer new requests on open connections 503, finish in-flight
 * requests and chains, then runtime.close() (flushes the audit log, stops the sandbox process).
 *
 * Runnable directly: `node dist/src/cli/serve.js [args]` (with Node 24, e.g. node_modules/.bin/node).
 */
import { createHash, createPublicKey } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { assertNodeVersion, createAuditSinkMetrics, createOperationalLogger, createRuntime, LOG_LEVELS, sinkCursorPath, startAuditSink, VcpError, type AuditSink, type OperationalLogger, type Runtime, type VcpArtifact } from "../index.js";
import { buildBundle, generateKeyPair, signArtifact } from "../tooling.js";
import { escapeControl } from "./common.js";
import { routeProcessOutput } from "./log-stream.js";
import { DATA_DIR_RUNTIME_KEY, preflight } from "./preflight.js";
import { versionInfo } from "./version.js";
import { loadConfigFile, resolveConfig, type ResolvedConfig } from "../index.js";
import { createServer, generateToken, hashToken, liveSettingsFor, logLevelOf, partiallyLiveChanges, restartOnlyChanges, runtimeOptionsFor, type VcpServer } from "../server/index.js";

const USAGE = `usage: vcp-hooks serve [--config vcp.yaml] [--data-dir DIR] [--port N] [--host H] [--log-level debug|info|warn|error]
                       [--trust-key pub.pem --key-id ID [--max-trust system|deployment|session]]…

Without --config: embedded default (data in ./.vcp, ./policies built and signed with a dev key,
tokens printed once). --trust-key adds your own signing key to the embedded default's keyring, so
bundles you sign with it can be uploaded (repeat the three options per key; --max-trust defaults to
deployment). With --config, keys belong in the file's keyring. --data-dir replaces the config's
data_dir (replicas sharing one vcp.yaml each need their own). With store.kind redis the replica id
is VCP_REPLICA_ID, else the one kept in the data directory. Signals: SIGHUP reloads --config;
SIGTERM/SIGINT drain and stop.`;

const DEV_KEY_ID = "dev";
const RUNTIME_KEY_ID = "runtime";
const SHUTDOWN_GRACE_MS = 30_000;

export interface ServeHandle {
  url: string;
  server: VcpServer;
  runtime: Runtime;
  /** Resolves with the exit code once the server has stopped. */
  done: Promise<number>;
  /** Graceful stop, as SIGTERM does. */
  stop(reason?: string): Promise<number>;
}

/**
 * Run `vcp-hooks serve` until SIGTERM/SIGINT; resolves with the exit code (0 ok, 1 start failed,
 * 2 usage error).
 *
 * @example
 * ```ts
 * process.exitCode = await runServe(["--config", "vcp.yaml"]);
 * ```
 */
export async function runServe(args: string[]): Promise<number> {
  // Every line this process writes is JSON (src/cli/log-stream.ts): until the config names a level
  // and redact keys, the library's defaults carry start refusals.
  let logger: OperationalLogger = createOperationalLogger({ level: "info", base: { svc: "vcp-hooks" } });
  routeProcessOutput(() => logger);
  let handle: ServeHandle;
  try {
    handle = await startServe(args, { signals: true, onLogger: (configured) => (logger = configured) });
  } catch (err) {
    if (err instanceof UsageError) {
      // At a terminal a person reads the usage; otherwise a collector does.
      if (process.stderr.isTTY) process.stderr.write(`${escapeControl(err.message)}\n${USAGE}\n`);
      else logger.fatal({ usage: USAGE }, `usage error: ${err.message}`);
      return 2;
    }
    // A refusal is a coded error with its details; anything else is a defect: its stack and causes.
    for (const refusal of refusalsOf(err)) {
      const fields = refusal instanceof VcpError ? { code: refusal.code, ...(refusal.details !== undefined ? { details: refusal.details } : {}), ...(refusal.cause !== undefined ? { cause: refusal.cause } : {}) } : { err: refusal };
      logger.fatal(fields, `vcp-hooks serve: ${describe(refusal)}`);
    }
    return 1;
  }
  return handle.done;
}

/** The start was refused before anything opened (src/cli/preflight.ts): every problem found. */
export class StartRefused extends Error {
  constructor(readonly problems: readonly VcpError[]) {
    super(problems.map((p) => `${p.code}: ${p.message}`).join("\n"));
  }
}

function refusalsOf(err: unknown): readonly unknown[] {
  return err instanceof StartRefused ? err.problems : [err];
}

class UsageError extends Error {}

/** Start the server and return a handle (tests and benches use it in-process; `runServe` waits on it). */
export async function startServe(
  args: string[],
  options: {
    signals?: boolean;
    /** Where the banner goes as text; default stdout at a terminal, else the banner is one JSON log line. */
    out?: (text: string) => void;
    env?: NodeJS.ProcessEnv;
    /** Called with the configured logger as soon as it exists (runServe routes process output to it). */
    onLogger?: (logger: OperationalLogger) => void;
  } = {},
): Promise<ServeHandle> {
  const out = options.out ?? (process.stdout.isTTY ? (text: string) => process.stdout.write(text) : undefined);
  const env = options.env ?? process.env;
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        config: { type: "string", short: "c" },
        "data-dir": { type: "string" },
        port: { type: "string", short: "p" },
        host: { type: "string" },
        "log-level": { type: "string" },
        "trust-key": { type: "string", multiple: true },
        "key-id": { type: "string", multiple: true },
        "max-trust": { type: "string", multiple: true },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (parsed.values.help) {
    // Help is the command's output (stdout), unlike the banner.
    (options.out ?? ((text: string) => process.stdout.write(text)))(`${USAGE}\n`);
    const done = Promise.resolve(0);
    return { url: "", server: undefined as never, runtime: undefined as never, done, stop: () => done };
  }
  let port: number | undefined;
  if (parsed.values.port !== undefined) {
    port = Number(parsed.values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port: '${parsed.values.port}' is not a port number (0–65535)`);
  }
  const configPath = parsed.values.config !== undefined ? resolve(parsed.values.config) : undefined;
  const trustedKeys = trustedKeysOf(parsed.values, configPath !== undefined);
  assertNodeVersion(); // before the embedded default builds anything: a clear error on Node 20

  const embedded = configPath === undefined ? await embeddedDefault(env, trustedKeys) : undefined;
  if (parsed.values["data-dir"] !== undefined && configPath === undefined) throw new UsageError("--data-dir goes with --config (the embedded default keeps its data in ./.vcp)");
  const overrides = parsed.values["data-dir"] !== undefined ? { data_dir: resolve(parsed.values["data-dir"]) } : {};
  const levelFlag = parsed.values["log-level"];
  if (levelFlag !== undefined && !isLogLevel(levelFlag)) throw new UsageError(`--log-level: '${levelFlag}' is not a pino level (${LOG_LEVELS.join(", ")})`);
  let config: ResolvedConfig = configPath !== undefined ? loadConfigFile(configPath, overrides) : embedded!.config;
  const startedWith = config;
  // Everything refused before anything opens, in one function with `vcp-hooks config check`.
  const checked = await preflight(config, { env, logLevelFlag: levelFlag });
  if (checked.problems.length > 0) throw new StartRefused(checked.problems);
  const level = levelFlag ?? (env.VCP_LOG_LEVEL || undefined) ?? logLevelOf(config) ?? "info";
  // SECURITY: the operational logger redacts the configured keys (the library's list by default) and,
  // always, authorization and token: credentials never reach a log line, whatever a log call includes.
  const logger: OperationalLogger = createOperationalLogger({ level: level as (typeof LOG_LEVELS)[number], base: { svc: "vcp-hooks" }, redactKeys: config.redact_keys });
  options.onLogger?.(logger);

  // The runtime key signs constitution modification links (DESIGN §4.5); it lives in the data dir.
  // Replicas share one given key (runtime_key_file, e.g. a Kubernetes Secret); else one per data dir.
  const runtimeKeyPem = checked.runtimeKeyPem ?? loadOrCreatePrivateKey(join(config.data_dir, DATA_DIR_RUNTIME_KEY));
  const runtimeOptions = runtimeOptionsFor(config, env);
  const runtime = await createRuntime({
    ...runtimeOptions,
    // The replica id (store/replica-id.ts): VCP_REPLICA_ID (a pod name, a compose service), else the
    // one kept in the data dir; in every audit record and, with Redis, in the replica's heartbeat.
    ...(env.VCP_REPLICA_ID ? { replicaId: env.VCP_REPLICA_ID } : {}),
    // A replica's software version goes into its record in the shared store.
    ...(runtimeOptions.store.kind === "redis" ? { store: { ...runtimeOptions.store, version: versionInfo().version } } : {}),
    integrity: { safetyCriticalRules: [...config.safety_critical_rules], runtimeKey: { keyId: RUNTIME_KEY_ID, privateKeyPem: runtimeKeyPem } },
    logger,
  });
  // An operator reading the log sees every hook that timed out or failed, with its chain id.
  runtime.on("hook.timeout", (e) => logger.info({ hook: e.hook, type: e.type, chain_id: e.chain_id, timeout_ms: e.timeout_ms, elapsed_ms: Math.round(e.elapsed_ms) }, "hook timed out"));
  runtime.on("hook.error", (e) => logger.info({ hook: e.hook, type: e.type, chain_id: e.chain_id, outcome: e.outcome, error: e.error }, "hook failed"));
  const installed: string[] = [];
  const failed: string[] = [];
  let serving = false;
  let sink: AuditSink | undefined;
  try {
    if (embedded !== undefined) {
      failed.push(...embedded.failed);
      for (const artifact of embedded.artifacts) {
        try {
          installed.push((await runtime.bundles.install(artifact)).bundle);
        } catch (err) {
          failed.push(`${artifact.manifest.bundle} (${describe(err)})`);
        }
      }
      for (const why of failed) logger.error({ policy: why }, "embedded default: policy not installed");
    }

    // Decision-log export: reads the durable audit log, so it never slows a chain (src/audit/sink.ts).
    const sinkConfig = config.audit.sink;
    sink = sinkConfig === undefined ? undefined : startAuditSink({
      path: config.audit.path,
      cursorFile: sinkCursorPath(config.audit.path),
      url: sinkConfig.url,
      format: sinkConfig.format,
      batchRecords: sinkConfig.batch_records,
      intervalMs: sinkConfig.interval_ms,
      timeoutMs: sinkConfig.timeout_ms,
      maxBackoffMs: sinkConfig.max_backoff_ms,
      headers: { ...sinkConfig.headers },
      logger,
    });

    let reloadState: { at: string | null; ok: boolean | null; error: string | null; restart_pending: string[] } = { at: null, ok: null, error: null, restart_pending: [] };
    const running = versionInfo();
    const server = await createServer({
      runtime,
      settings: liveSettingsFor(config),
      logger,
      version: running.version,
      buildInfo: { ...running },
      ...(sink !== undefined ? { extraMetrics: [createAuditSinkMetrics(sink.stats).text] } : {}),
      describe: () => ({ config: configPath ?? "embedded default", data_dir: startedWith.data_dir, reload: reloadState, ...(sink ? { audit_sink: sink.stats() } : {}) }),
      console: { securityReportDir: startedWith.console.security_report_dir },
    });
    const host = parsed.values.host ?? config.listen.host;
    const url = await server.listen(host, port ?? config.listen.port);
    serving = true;

    // ── shutdown ───────────────────────────────────────────────────────────────────────────────
    let resolveDone!: (code: number) => void;
    const done = new Promise<number>((r) => (resolveDone = r));
    let stopping: Promise<number> | null = null;
    const stop = (reason = "stop"): Promise<number> => {
      if (stopping !== null) return stopping;
      stopping = (async () => {
        logger.info({ reason }, "shutting down: draining in-flight requests");
        const force = setTimeout(() => {
          logger.warn({ grace_ms: SHUTDOWN_GRACE_MS }, "in-flight requests did not finish in time; closing connections");
          server.app.server.closeAllConnections();
        }, SHUTDOWN_GRACE_MS);
        force.unref();
        let code = 0;
        try {
          await server.close();
        } catch (err) {
          logger.error({ err }, "closing the HTTP server failed");
          code = 1;
        }
        clearTimeout(force);
        try {
          await runtime.close(); // flushes the audit log, stops the sandbox process
        } catch (err) {
          logger.error({ err }, "closing the runtime failed");
          code = 1;
        }
        await sink?.close(); // its cursor is durable: the next start resumes shipping there
        logger.info({ code }, "stopped");
        detach();
        resolveDone(code);
        return code;
      })();
      return stopping;
    };

    // ── reload ─────────────────────────────────────────────────────────────────────────────────
    const reload = (): void => {
      if (configPath === undefined) {
        logger.warn("SIGHUP: no --config file to reload (embedded default); nothing changed");
        return;
      }
      const at = new Date().toISOString();
      let next: ResolvedConfig;
      try {
        next = loadConfigFile(configPath, overrides);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        reloadState = { ...reloadState, at, ok: false, error: message };
        logger.error({ config: configPath, error: message }, "config reload failed: keeping the previous config");
        return;
      }
      // Restart-only fields are compared with what runs (the start values), not the last reload.
      const restart = [...restartOnlyChanges(startedWith, next), ...partiallyLiveChanges(startedWith, next)];
      server.update(liveSettingsFor(next));
      const nextLevel = levelFlag ?? (env.VCP_LOG_LEVEL || undefined) ?? logLevelOf(next);
      if (nextLevel !== undefined && nextLevel !== logger.level) logger.level = nextLevel;
      if (restart.length > 0) logger.warn({ fields: restart }, "config reloaded; these fields changed but take effect only after a restart");
      config = next;
      reloadState = { at, ok: true, error: null, restart_pending: restart };
      logger.info({ config: configPath, auth_entries: next.auth.length }, "config reloaded");
    };

    const onTerm = () => void stop("SIGTERM");
    const onInt = () => void stop("SIGINT");
    const detach = () => {
      process.off("SIGTERM", onTerm);
      process.off("SIGINT", onInt);
      process.off("SIGHUP", reload);
    };
    if (options.signals) {
      process.on("SIGTERM", onTerm);
      process.on("SIGINT", onInt);
      process.on("SIGHUP", reload);
    }

    // The banner last: whoever waits for it (a person, a supervisor, a test) may signal at once, so
    // the handlers above must already be in place or a SIGTERM kills the process without draining.
    // The one place generated tokens are shown, once: as text at a terminal, else in the banner's log line.
    const lines = [`vcp-hooks serving at ${url}`];
    if (embedded !== undefined) {
      lines.push(`  embedded default: data in ${config.data_dir}, dev signing key ${embedded.keyFile} (key_id '${DEV_KEY_ID}', max_trust deployment)`);
      for (const k of embedded.trustedKeys) lines.push(`  trusted key '${k.key_id}' from ${k.public_key_file} (max_trust ${k.max_trust})`);
      if (embedded.policiesFound === false) lines.push(`  no policies/ directory in ${process.cwd()}: serving with no bundles installed (upload .vcpb files with PUT /v1/bundles/{name})`);
      const bundles = runtime.bundles.list();
      lines.push(bundles.length > 0 ? `  bundles: ${bundles.map((b) => `${b.bundle}@${b.version} (${b.hooks.length} hook${b.hooks.length === 1 ? "" : "s"})`).join(", ")}` : "  bundles: none installed");
      if (failed.length > 0) lines.push(`  NOT installed: ${escapeControl(failed.join("; "))}`);
      lines.push(
        embedded.tokensFromEnv
          ? "  tokens: from VCP_OPERATOR_TOKEN and VCP_CLIENT_TOKEN"
          : "  tokens (shown once, held only as SHA-256 hashes; new ones at every start):",
      );
      if (!embedded.tokensFromEnv) {
        lines.push(`    export VCP_OPERATOR_TOKEN=${embedded.tokens.operator}`);
        lines.push(`    export VCP_CLIENT_TOKEN=${embedded.tokens.client}`);
      }
      embedded.tokens.operator = "";
      embedded.tokens.client = "";
    } else {
      lines.push(`  config ${configPath} (SIGHUP reloads it); ${config.auth.length} token(s) configured`);
    }
    const store = runtime.status().store;
    if (store.kind === "redis") {
      const peers = store.replicas.filter((r) => r.live && r.id !== store.replica_id).length;
      lines.push(`  store: redis ${store.url} prefix '${store.prefix}', replica '${store.replica_id}', config version ${store.config_version}, ${store.connection.connected ? `${peers} live peer(s)` : "NOT CONNECTED (reconnecting)"}`);
      for (const warning of store.warnings) lines.push(`  WARNING (store): ${escapeControl(warning)}`);
    }
    const started = { url, config: configPath ?? "embedded default", bundles: runtime.bundles.list().length };
    if (out !== undefined) {
      out(`${lines.join("\n")}\n`);
      logger.info(started, "listening");
    } else {
      // One JSON line: `banner` holds the lines a terminal would show.
      logger.info({ ...started, banner: lines.slice(1).map((line) => line.trim()) }, lines[0]!);
    }
    return { url, server, runtime, done, stop };
  } catch (err) {
    if (!serving) {
      await sink?.close();
      await runtime.close().catch(() => {});
    }
    throw err;
  }
}

interface Embedded {
  config: ResolvedConfig;
  keyFile: string;
  artifacts: VcpArtifact[];
  failed: string[];
  tokens: { operator: string; client: string };
  tokensFromEnv: boolean;
  policiesFound: boolean;
  trustedKeys: readonly TrustedKey[];
}

/** An Ed25519 private key kept in `file` (mode 0600), created on first use. */
function loadOrCreatePrivateKey(file: string): string {
  let privateKeyPem: string;
  if (existsSync(file)) {
    privateKeyPem = readFileSync(file, "utf8");
  } else {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    privateKeyPem = generateKeyPair().privateKeyPem;
    try {
      // "wx": this runs before the runtime takes the data directory lock, so a second server
      // starting at the same moment must not replace a key the first has already loaded.
      writeFileSync(file, privateKeyPem, { mode: 0o600, flag: "wx" });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      privateKeyPem = readFileSync(file, "utf8");
    }
  }
  chmodSync(file, 0o600);
  return privateKeyPem;
}

interface TrustedKey {
  key_id: string;
  public_key_file: string;
  max_trust: "system" | "deployment" | "session";
}

/**
 * `--trust-key F --key-id ID [--max-trust T]`, repeated: the operator's own keys for the embedded
 * default. Each --trust-key needs its --key-id; --max-trust is given for all keys or for none.
 */
function trustedKeysOf(values: { "trust-key"?: string[]; "key-id"?: string[]; "max-trust"?: string[] }, withConfig: boolean): TrustedKey[] {
  const files = values["trust-key"] ?? [];
  const ids = values["key-id"] ?? [];
  const trusts = values["max-trust"] ?? [];
  if (files.length === 0 && ids.length === 0 && trusts.length === 0) return [];
  if (withConfig) throw new UsageError("--trust-key is for the embedded default; with --config, add the key to the config file's keyring");
  if (ids.length !== files.length) throw new UsageError(`--trust-key and --key-id go in pairs (got ${files.length} --trust-key, ${ids.length} --key-id)`);
  if (trusts.length !== 0 && trusts.length !== files.length) throw new UsageError(`--max-trust: give one per --trust-key or none (got ${trusts.length} for ${files.length} keys)`);
  return files.map((file, i) => {
    const maxTrust = trusts[i] ?? "deployment";
    if (maxTrust !== "system" && maxTrust !== "deployment" && maxTrust !== "session") throw new UsageError(`--max-trust: '${maxTrust}' is not system, deployment or session`);
    if (ids[i] === DEV_KEY_ID) throw new UsageError(`--key-id: '${DEV_KEY_ID}' is the embedded default's own dev key; choose another id`);
    if (!existsSync(file)) throw new UsageError(`--trust-key: ${file} does not exist`);
    return { key_id: ids[i]!, public_key_file: resolve(file), max_trust: maxTrust };
  });
}

/** The embedded default config: ./.vcp, a persisted dev key, tokens from the env or fresh, plus the operator's keys. */
async function embeddedDefault(env: NodeJS.ProcessEnv, trustedKeys: readonly TrustedKey[]): Promise<Embedded> {
  const dataDir = resolve(".vcp");
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const keyFile = join(dataDir, "dev-key.pem");
  const privateKeyPem = loadOrCreatePrivateKey(keyFile);
  const publicKeyPem = createPublicKey(privateKeyPem).export({ type: "spki", format: "pem" }).toString();
  const tokensFromEnv = Boolean(env.VCP_OPERATOR_TOKEN && env.VCP_CLIENT_TOKEN);
  const tokens = tokensFromEnv ? { operator: env.VCP_OPERATOR_TOKEN!, client: env.VCP_CLIENT_TOKEN! } : { operator: generateToken("operator"), client: generateToken("client") };
  const policiesFound = existsSync(resolve("policies"));
  const { artifacts, failed } = await buildPolicies(resolve("policies"), privateKeyPem);
  // Every session-scope hook of the example policies is offered to clients in the embedded default.
  const sessionHooks = artifacts.flatMap((a) => a.manifest.hooks.filter((h) => h.scope === "session").map((h) => `${a.manifest.bundle}/${h.name}`));
  const config = resolveConfig(
    {
      data_dir: dataDir,
      auth: [
        { id: "dev-operator", role: "operator", token_sha256: hashToken(tokens.operator) },
        { id: "dev-client", role: "client", token_sha256: hashToken(tokens.client) },
      ],
      keyring: { keys: [{ key_id: DEV_KEY_ID, public_key: publicKeyPem, max_trust: "deployment" }, ...trustedKeys] },
      require_signatures: true,
      session_hook_allowlist: sessionHooks,
    },
    process.cwd(),
    null,
  );
  return { config, keyFile, tokens, tokensFromEnv, policiesFound, artifacts, failed, trustedKeys };
}

/**
 * Build and sign every policy under `dir` (sorted by name). Build failures are reported, not fatal:
 * the server starts with what built.
 */
async function buildPolicies(dir: string, privateKeyPem: string): Promise<{ artifacts: VcpArtifact[]; failed: string[] }> {
  const artifacts: VcpArtifact[] = [];
  const failed: string[] = [];
  if (!existsSync(dir)) return { artifacts, failed };
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory() || !existsSync(join(dir, entry.name, "policy.yaml"))) continue;
    try {
      const { artifact } = await buildBundle(join(dir, entry.name));
      artifacts.push(signArtifact(artifact, privateKeyPem, DEV_KEY_ID));
    } catch (err) {
      failed.push(`${entry.name} (${describe(err)})`);
    }
  }
  return { artifacts, failed };
}

function describe(err: unknown): string {
  return err instanceof VcpError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
}

/** sha256 hex of a token, for writing `auth[].token_sha256` into vcp.yaml. */
export function tokenSha256(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = await runServe(process.argv.slice(2));
}

function isLogLevel(level: string): level is (typeof LOG_LEVELS)[number] {
  return (LOG_LEVELS as readonly string[]).includes(level);
}
