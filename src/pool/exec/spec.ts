/**
 * From a validated manifest exec hook (src/bundle/exec-hook.ts) and the deployment's `exec` settings to
 * the lane's `CommandSpec`: the one place where the manifest, the config and the profile's deadlines meet.
 */
import type { ExecCommand } from "../../model/hook.js";
import type { CommandSpec } from "./run.js";

export interface ExecSettings {
  readonly env_allow: readonly string[];
  readonly wrapper?: readonly string[];
  readonly max_output_bytes: number;
}

/**
 * @example
 * ```ts
 * const spec = commandSpecOf(def.exec, config.exec, { timeout_ms: hook.timeout_ms ?? 60_000, term_grace_ms: profile.failure.term_grace_ms });
 * ```
 */
export function commandSpecOf(exec: ExecCommand, settings: ExecSettings, deadline: { timeout_ms: number; term_grace_ms: number }): CommandSpec {
  return {
    command: exec.command,
    sha256: exec.sha256,
    ...(exec.args !== undefined ? { args: exec.args } : {}),
    ...(exec.cwd !== undefined ? { cwd: exec.cwd } : {}),
    ...(exec.shell === true ? { shell: true } : {}),
    env_allow: settings.env_allow,
    ...(settings.wrapper !== undefined ? { wrapper: settings.wrapper } : {}),
    max_output_bytes: settings.max_output_bytes,
    timeout_ms: deadline.timeout_ms,
    term_grace_ms: deadline.term_grace_ms,
  };
}
