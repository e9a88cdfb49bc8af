/**
 * What `vcp-hooks serve --config` refuses before it opens anything, as ONE function: `serve` runs it
 * first and refuses to start on any problem it finds; `vcp-hooks config check` runs it and lists the
 * problems. So a config the check calls valid is one serve starts with, and every refusal of serve has
 * the same code and message in both (test/cli/preflight.test.ts holds the table).
 *
 * ```
 *  loadConfigFile (schema, auth[].token_env, profiles)      ─┐ serve: first problem ⇒ exit 1, one
 *  preflight(config, env):                                   │ JSON log line per problem
 *    VCP_LOG_LEVEL · runtime_key_file / data_dir key         │
 *    data_dir and audit dirs writable · store.url_env        │ config check: every problem,
 *    VCP_REPLICA_ID / <data_dir>/replica-id                  │ exit 1
 *    keyring keys (each) · runtime settings (profiles, exec) │
 *    audit.sink cursor                                      ─┘
 * ```
 *
 * Nothing here writes a byte or takes a lock: the check runs beside a live server (before a SIGHUP or a
 * rollout). So two refusals stay with the start itself and are not the check's: a data directory
 * another live process holds (DATA_DIR_LOCKED) and a sandbox host that cannot start (SANDBOX_START_FAILED).
 * Neither does it connect to Redis: serve starts without Redis too, and reconnects.
 */
import { createPrivateKey } from "node:crypto";
import { accessSync, constants, existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { assertNodeVersion, checkReplicaId, checkRuntimeOptions, LOG_LEVELS, readSinkCursor, REPLICA_ID_FILE, VcpError, type ResolvedConfig } from "../index.js";
import { runtimeSettingsFor, storeOptionsFor } from "../server/index.js";
import { loadKeyring } from "../tooling.js";

/** The key signing constitution modification links, when `runtime_key_file` is not given (DESIGN §4.5). */
export const DATA_DIR_RUNTIME_KEY = "runtime-key.pem";

export interface PreflightContext {
  /** Where `store.url_env`, `VCP_REPLICA_ID` and `VCP_LOG_LEVEL` are read. */
  env: NodeJS.ProcessEnv;
  /** `serve --log-level`: when given, VCP_LOG_LEVEL is not read (the flag is checked as a usage error). */
  logLevelFlag?: string | undefined;
}

export interface Preflight {
  /** Every refusal, in the order serve meets them; empty when serve would start. */
  problems: VcpError[];
  /** The PEM of `runtime_key_file` when it was read and is an Ed25519 private key. */
  runtimeKeyPem?: string;
}

/**
 * Check a loaded config the way `serve` needs it, without starting or writing anything.
 *
 * @example
 * ```ts
 * const { problems } = await preflight(loadConfigFile("vcp.yaml"), { env: process.env });
 * for (const p of problems) console.log(`${p.code}: ${p.message}`);
 * ```
 */
export async function preflight(config: ResolvedConfig, context: PreflightContext): Promise<Preflight> {
  const { env } = context;
  const problems: VcpError[] = [];
  const attempt = <T>(check: () => T): T | undefined => {
    try {
      return check();
    } catch (err) {
      problems.push(coded(err));
      return undefined;
    }
  };

  attempt(() => assertNodeVersion());
  if (context.logLevelFlag === undefined) attempt(() => checkLogLevelEnv(env.VCP_LOG_LEVEL));

  // Directories serve creates and writes: the data directory (lock, runtime key, replica id, bundles)
  // and the audit log's (the log, its lock, the sink cursor).
  const dataDirOk = attempt(() => checkWritableDirectory(config.data_dir, "data_dir")) !== undefined;
  const auditDir = dirname(config.audit.path);
  if (auditDir !== join(config.data_dir, "audit")) attempt(() => checkWritableDirectory(auditDir, "audit.path"));
  else if (dataDirOk) attempt(() => checkWritableDirectory(auditDir, "audit.path"));

  let runtimeKeyPem: string | undefined;
  if (config.runtime_key_file !== undefined) runtimeKeyPem = attempt(() => readRuntimeKey(config.runtime_key_file!, "runtime_key_file"));
  else {
    // Made at first start; a damaged one must not be found only when the first link is signed.
    const kept = join(config.data_dir, DATA_DIR_RUNTIME_KEY);
    if (existsSync(kept)) attempt(() => readRuntimeKey(kept, "data_dir"));
  }

  attempt(() => storeOptionsFor(config, env));

  // The replica id: VCP_REPLICA_ID, else the one kept in the data directory (store/replica-id.ts).
  if (env.VCP_REPLICA_ID) attempt(() => checkReplicaId(env.VCP_REPLICA_ID!, "VCP_REPLICA_ID"));
  else {
    const file = join(config.data_dir, REPLICA_ID_FILE);
    if (existsSync(file)) attempt(() => checkReplicaId(readFileSync(file, "utf8").trim(), file));
  }

  // One keyring key at a time, so every bad key is named rather than only the first; then the
  // runtime's own settings check (the whole keyring, profiles, limits, the command lane) exactly as
  // createRuntime runs it.
  let keysOk = true;
  for (const [i, key] of config.keyring.keys.entries()) {
    try {
      await loadKeyring({ keys: [{ ...key }] });
    } catch (err) {
      keysOk = false;
      problems.push(keyProblem(err, i));
    }
  }
  const options = runtimeSettingsFor(config);
  try {
    await checkRuntimeOptions(keysOk ? options : { ...options, keyring: { keys: [] } });
  } catch (err) {
    problems.push(coded(err));
  }

  // The decision-log export resumes from its cursor; a damaged one stops the start.
  if (config.audit.sink !== undefined) {
    attempt(() => {
      try {
        readSinkCursor(sinkCursorFile(config));
      } catch (err) {
        throw new VcpError("INVALID_CONFIG", `audit.sink: ${err instanceof Error ? err.message : String(err)}`, { field: "audit.sink", file: sinkCursorFile(config) }, { cause: err });
      }
    });
  }
  return runtimeKeyPem !== undefined ? { problems, runtimeKeyPem } : { problems };
}

/** Where the decision-log sink keeps its cursor: beside the audit log. */
export function sinkCursorFile(config: ResolvedConfig): string {
  return join(dirname(config.audit.path), "sink.cursor");
}

/** `runtime_key_file` (a mounted Secret is read-only) or the data directory's key: an Ed25519 private key in PEM. */
export function readRuntimeKey(file: string, field: "runtime_key_file" | "data_dir"): string {
  let pem: string;
  try {
    pem = readFileSync(file, "utf8");
  } catch (err) {
    throw new VcpError("INVALID_CONFIG", `${field}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? String(err)})`, { field, file });
  }
  let type: string | undefined;
  try {
    type = createPrivateKey(pem).asymmetricKeyType;
  } catch {
    type = undefined;
  }
  if (type !== "ed25519") {
    const fix = field === "runtime_key_file" ? "make one with 'vcp-hooks keygen --out <prefix>'" : "restore it from a backup: it signs the modification links of this data directory";
    throw new VcpError("INVALID_CONFIG", `${field}: ${file} is not an Ed25519 private key in PEM (${fix})`, { field, file });
  }
  return pem;
}

/**
 * `dir` is a directory this process may create files in, or can be created: its nearest existing
 * ancestor is a writable directory. (Run as root, only a read-only file system or a file in the way
 * refuses; the start would fail on the same.)
 */
export function checkWritableDirectory(dir: string, field: string): string {
  let existing = dir;
  while (!existsSync(existing)) {
    const parent = dirname(existing);
    if (parent === existing) break;
    existing = parent;
  }
  let isDirectory: boolean;
  try {
    isDirectory = statSync(existing).isDirectory();
  } catch (err) {
    throw new VcpError("INVALID_CONFIG", `${field}: cannot use ${dir}: ${existing} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`, { field, path: dir });
  }
  if (!isDirectory) {
    throw new VcpError("INVALID_CONFIG", `${field}: cannot use ${dir}: ${existing} is a file, not a directory`, { field, path: dir });
  }
  try {
    accessSync(existing, constants.W_OK | constants.X_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new VcpError("INVALID_CONFIG", `${field}: cannot use ${dir}: ${existing === dir ? "it" : existing} is not writable by this process (${code})`, { field, path: dir });
  }
  return dir;
}

/** `VCP_LOG_LEVEL`, when set, names a pino level. */
export function checkLogLevelEnv(level: string | undefined): void {
  if (level === undefined || level === "") return;
  if (!(LOG_LEVELS as readonly string[]).includes(level)) {
    throw new VcpError("INVALID_CONFIG", `VCP_LOG_LEVEL: '${level}' is not a log level (${LOG_LEVELS.join(", ")})`, { field: "VCP_LOG_LEVEL" });
  }
}

/** loadKeyring saw a one-key list: put the key's real index back into the path it names. */
function keyProblem(err: unknown, index: number): VcpError {
  const error = coded(err);
  const message = error.message.replace(/^keyring: keys\[0\]/, `keyring: keys[${index}]`);
  const details = error.details as { problems?: Array<{ field: string; rule: string }> } | undefined;
  const problems = details?.problems?.map((p) => ({ field: `keyring.${p.field.replace(/^keys\[0\]/, `keys[${index}]`)}`, rule: p.rule }));
  return new VcpError(error.code, message, { ...(details ?? {}), ...(problems !== undefined ? { problems } : {}), field: `keyring.keys[${index}]` });
}

/** Every refusal is a coded error; anything else (an fs error from a library) is INVALID_CONFIG naming its text. */
function coded(err: unknown): VcpError {
  if (err instanceof VcpError) return err;
  return new VcpError("INVALID_CONFIG", err instanceof Error ? err.message : String(err), {}, { cause: err });
}
