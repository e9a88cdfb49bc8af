/**
 * `vcp-hooks config check [--config vcp.yaml]`: validate a deployment config without starting
 * anything — the schema (every bad field at once, with its path), then what `serve` would load from
 * it (the keyring's key files and keys). Exit 0 valid, 1 invalid, 2 usage.
 */
import { existsSync } from "node:fs";
import { VcpError } from "../index.js";
import { loadKeyring } from "../tooling.js";
import { loadConfigFile, type ResolvedConfig } from "../index.js";
import { EXIT_FAILED, EXIT_OK, parseCommand, printJson, UsageError, type Command } from "./common.js";

const USAGE = `usage: vcp-hooks config check [--config vcp.yaml] [--json]

Validates the config as 'vcp-hooks serve --config' would load it, without starting: every field the
schema refuses (all of them, with their path), then each keyring key (file readable, an Ed25519
public key). Exit 0 valid, 1 invalid, 2 usage error.`;

export interface ConfigProblem {
  /** `limits.body_bytes`, `keyring.keys[1]`, or `(file)` for an unreadable file or a YAML syntax error. */
  field: string;
  rule: string;
}

export interface ConfigCheck {
  file: string;
  valid: boolean;
  problems: ConfigProblem[];
}

function problemsOf(err: unknown): ConfigProblem[] {
  if (err instanceof VcpError && err.code === "INVALID_CONFIG") {
    const details = (err.details ?? {}) as { problems?: ConfigProblem[]; field?: string };
    if (Array.isArray(details.problems) && details.problems.length > 0) return details.problems;
    return [{ field: details.field ?? "(file)", rule: err.message }];
  }
  return [{ field: "(file)", rule: err instanceof Error ? err.message : String(err) }];
}

/** Check a config file the way `serve` loads it; never throws for a bad config. */
export async function checkConfigFile(file: string): Promise<ConfigCheck> {
  let config: ResolvedConfig;
  try {
    config = loadConfigFile(file);
  } catch (err) {
    return { file, valid: false, problems: problemsOf(err) };
  }
  const problems: ConfigProblem[] = [];
  // One key at a time, so every bad key is named rather than only the first.
  for (const [i, key] of config.keyring.keys.entries()) {
    try {
      await loadKeyring({ keys: [{ ...key }] });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      // loadKeyring saw a one-key list: put the key's real index back into the path it names.
      const named = /^keyring: keys\[0\]\.([\w.]+): ([\s\S]*)$/.exec(message);
      problems.push(named ? { field: `keyring.keys[${i}].${named[1]}`, rule: named[2]! } : { field: `keyring.keys[${i}]`, rule: message });
    }
  }
  return { file, valid: problems.length === 0, problems };
}

export const configCommand: Command = {
  name: "config",
  summary: "config check [--config vcp.yaml]: validate a deployment config without starting",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals, help } = parseCommand("config", args, { config: { type: "string", short: "c" } }, { min: 1, max: 1, names: "a subcommand (check)" });
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    if (positionals[0] !== "check") throw new UsageError(`config: unknown subcommand '${positionals[0]}' (subcommands: check)`);
    const file = typeof values["config"] === "string" ? values["config"] : "vcp.yaml";
    if (!existsSync(file)) throw new UsageError(`config check: ${file} does not exist (give the file with --config)`);
    const result = await checkConfigFile(file);
    if (io.json) {
      printJson(io, result);
    } else if (result.valid) {
      io.out(`${file}: valid`);
    } else {
      io.out(`${file}: ${result.problems.length} problem${result.problems.length === 1 ? "" : "s"}`);
      for (const p of result.problems) io.out(`  ${p.field}: ${p.rule}`);
    }
    return result.valid ? EXIT_OK : EXIT_FAILED;
  },
};
