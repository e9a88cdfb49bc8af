/**
 * `vcp-hooks config check [--config vcp.yaml] [--data-dir DIR]`: what `serve --config` would refuse,
 * without starting anything — the schema (every bad field at once, with its path), then everything
 * serve checks before it opens its data directory (src/cli/preflight.ts, the one function both run).
 * Exit 0 valid, 1 invalid, 2 usage.
 */
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { VcpError } from "../index.js";
import { loadConfigFile, type ErrorCode } from "../index.js";
import { EXIT_FAILED, EXIT_OK, parseCommand, printJson, UsageError, type Command } from "./common.js";
import { preflight } from "./preflight.js";

const USAGE = `usage: vcp-hooks config check [--config vcp.yaml] [--data-dir DIR] [--json]

Refuses exactly what 'vcp-hooks serve --config' refuses before it starts, without starting or writing
anything: every field the schema refuses (all of them, with their path); the environment variables the
config names (auth[].token_env, store.url_env) and VCP_REPLICA_ID, VCP_LOG_LEVEL; the files serve reads
(runtime_key_file, keyring keys, the data directory's runtime key and replica id, the audit sink's
cursor); and that data_dir and the audit log's directory are writable. --data-dir as for serve.
Not checked (they need the start itself): another live serve holding the data directory, the sandbox
host starting, Redis being reachable. Exit 0 valid, 1 invalid, 2 usage error.`;

export interface ConfigProblem {
  /** `limits.body_bytes`, `keyring.keys[1]`, `VCP_REPLICA_ID`, or `(file)` for an unreadable file or a YAML syntax error. */
  field: string;
  rule: string;
  code: ErrorCode;
}

export interface ConfigCheck {
  file: string;
  valid: boolean;
  /** Each problem by field, for a person. */
  problems: ConfigProblem[];
  /** The refusals exactly as `serve` logs them (its exit 1), one per failed check. */
  errors: Array<{ code: ErrorCode; message: string }>;
}

/** The field/rule lines of one refusal: a schema error names each bad field. */
function problemsOf(err: VcpError): ConfigProblem[] {
  const details = (err.details ?? {}) as { problems?: Array<{ field: string; rule: string }>; field?: string };
  if (Array.isArray(details.problems) && details.problems.length > 0) return details.problems.map((p) => ({ field: p.field, rule: p.rule, code: err.code }));
  const field = details.field ?? "(file)";
  const rule = err.message.startsWith(`${field}: `) ? err.message.slice(field.length + 2) : err.message;
  return [{ field, rule, code: err.code }];
}

/**
 * Check a config file the way `serve --config` starts with it; never throws for a bad config.
 *
 * @example
 * ```ts
 * const check = await checkConfigFile("vcp.yaml", { env: process.env });
 * if (!check.valid) for (const e of check.errors) console.error(`${e.code}: ${e.message}`);
 * ```
 */
export async function checkConfigFile(file: string, options: { env?: NodeJS.ProcessEnv; dataDir?: string } = {}): Promise<ConfigCheck> {
  let refusals: VcpError[];
  try {
    const config = loadConfigFile(file, options.dataDir !== undefined ? { data_dir: resolve(options.dataDir) } : {});
    refusals = (await preflight(config, { env: options.env ?? process.env })).problems;
  } catch (err) {
    refusals = [err instanceof VcpError ? err : new VcpError("INVALID_CONFIG", err instanceof Error ? err.message : String(err), { field: "(file)" })];
  }
  return {
    file,
    valid: refusals.length === 0,
    problems: refusals.flatMap(problemsOf),
    errors: refusals.map((e) => ({ code: e.code, message: e.message })),
  };
}

export const configCommand: Command = {
  name: "config",
  summary: "config check [--config vcp.yaml]: refuse what serve would refuse, without starting",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals, help } = parseCommand("config", args, { config: { type: "string", short: "c" }, "data-dir": { type: "string" } }, { min: 1, max: 1, names: "a subcommand (check)" });
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    if (positionals[0] !== "check") throw new UsageError(`config: unknown subcommand '${positionals[0]}' (subcommands: check)`);
    const file = typeof values["config"] === "string" ? values["config"] : "vcp.yaml";
    if (!existsSync(file)) throw new UsageError(`config check: ${file} does not exist (give the file with --config)`);
    const dataDir = typeof values["data-dir"] === "string" ? values["data-dir"] : undefined;
    const result = await checkConfigFile(file, dataDir !== undefined ? { dataDir } : {});
    if (io.json) {
      printJson(io, result);
    } else if (result.valid) {
      io.out(`${file}: valid`);
    } else {
      io.out(`${file}: ${result.problems.length} problem${result.problems.length === 1 ? "" : "s"}`);
      for (const p of result.problems) io.out(`  ${p.field}: ${p.rule}${p.code === "INVALID_CONFIG" ? "" : ` (${p.code})`}`);
    }
    return result.valid ? EXIT_OK : EXIT_FAILED;
  },
};
