/**
 * Exec hooks in a manifest (PROFILES §6): a hook with `exec: { command, sha256, args?, cwd?, shell? }`
 * instead of `action` runs an existing script through the command lane (src/pool/exec/), outside the
 * sandbox. This file is the pure gate install runs for each one; it does no I/O (the executable's hash
 * is checked before every spawn, not here).
 *
 *   exec.enabled off ─────────────────────────────► EXEC_DISABLED
 *   not signed, trust ≠ system, or a session hook ─► EXEC_NOT_ALLOWED
 *   bad shape (hash, relative path, both action and exec) ─► INVALID_BUNDLE (the path names the field)
 *   shell: true and exec.shell off ────────────────► EXEC_SHELL_DISABLED
 */
import { z } from "zod";
import { VcpError } from "../errors.js";
import type { TrustLevel } from "../model/hook-type.js";
import { describeIssues } from "../model/zod-errors.js";

const HEX64 = /^[0-9a-f]{64}$/;

/** The `exec` block of a manifest hook. */
export const ExecBlockSchema = z
  .object({
    command: z.string({ error: "must be a string" }).min(1).max(4096),
    sha256: z.string({ error: "must be a string" }).regex(HEX64, "must be the lowercase hex SHA-256 of the executable (64 hex digits)"),
    args: z.array(z.string().max(4096)).max(256).optional(),
    cwd: z.string().min(1).max(4096).optional(),
    shell: z.boolean().optional(),
  })
  .strict();
export type ExecBlock = z.infer<typeof ExecBlockSchema>;

/** Where the hook came from and what the deployment allows. */
export interface ExecHookContext {
  /** The bundle's declared trust (already checked against the signing key's `max_trust`). */
  readonly trust: TrustLevel;
  /** A signature verified against the keyring (an unsigned bundle with `require_signatures: false` is not). */
  readonly signed: boolean;
  /** Registration scope: exec hooks are never registrable per session. */
  readonly scope: "deployment" | "session";
  /** Config `exec`. */
  readonly config: { readonly enabled: boolean; readonly shell: boolean };
  /** For messages: the manifest file or bundle name. */
  readonly file?: string;
}

/** A hook definition that passed the gate. */
export interface ExecHookDefinition {
  readonly name: string;
  readonly exec: ExecBlock;
}

/** True when a manifest hook is an exec hook (has an `exec` key). */
export function isExecHook(hook: unknown): boolean {
  return typeof hook === "object" && hook !== null && Object.hasOwn(hook, "exec");
}

/**
 * Check one exec hook of a manifest. Throws a coded `VcpError` naming the hook and the rule; returns
 * the validated definition otherwise.
 *
 * @example
 * ```ts
 * const def = validateExecHook(manifest.hooks[0], 0, { trust: "system", signed: true, scope: "deployment",
 *   config: config.exec, file: "guard.vcpb" });
 * ```
 */
export function validateExecHook(hook: unknown, index: number, ctx: ExecHookContext): ExecHookDefinition {
  const file = ctx.file ?? "manifest";
  const at = `hooks[${index}]`;
  const h = (typeof hook === "object" && hook !== null ? hook : {}) as Record<string, unknown>;
  const name = typeof h["name"] === "string" ? h["name"] : `#${index}`;
  // SECURITY: the deployment's switch comes first: with the lane off nothing about the hook matters.
  if (!ctx.config.enabled) {
    throw new VcpError("EXEC_DISABLED", `${file}: ${at} '${name}' is an exec hook and exec.enabled is off in this deployment`, { file, hook: name, field: `${at}.exec` });
  }
  // SECURITY: scripts run unsandboxed with the server's user: only a verified system-trust signer may add one.
  if (!ctx.signed || ctx.trust !== "system" || ctx.scope !== "deployment") {
    const why = !ctx.signed ? "the bundle is not signed" : ctx.trust !== "system" ? `the bundle's trust is ${ctx.trust}, exec needs system` : "exec hooks cannot be registered per session";
    throw new VcpError("EXEC_NOT_ALLOWED", `${file}: ${at} '${name}' is an exec hook and ${why}`, { file, hook: name, trust: ctx.trust, signed: ctx.signed, scope: ctx.scope });
  }
  const exec = checkExecShape(hook, index, file);
  // SECURITY: a shell string is a second, wider language: the deployment must allow it separately.
  if (exec.shell === true && !ctx.config.shell) {
    throw new VcpError("EXEC_SHELL_DISABLED", `${file}: ${at} '${name}' runs a shell string and exec.shell is off in this deployment`, { file, hook: name, field: `${at}.exec.shell` });
  }
  return { name, exec };
}

/**
 * The shape rules of an exec hook, with no deployment in sight: what build, sign and verify check
 * (parseManifest) and install checks again after the gate. Throws INVALID_BUNDLE naming the field.
 *
 * @example
 * ```ts
 * checkExecShape({ name: "guard", event: "BeforeTool", exec: { command: "/opt/h.sh", sha256 } }, 0, "policy.yaml");
 * ```
 */
export function checkExecShape(hook: unknown, index: number, file = "manifest"): ExecBlock {
  const at = `hooks[${index}]`;
  const h = (typeof hook === "object" && hook !== null ? hook : {}) as Record<string, unknown>;
  if (Object.hasOwn(h, "action")) {
    throw invalid(file, `${at}.action`, "an exec hook has no action (give either action or exec)");
  }
  const parsed = ExecBlockSchema.safeParse(h["exec"]);
  if (!parsed.success) {
    const problems = describeIssues(parsed.error, `${at}.exec`);
    throw new VcpError("INVALID_BUNDLE", `${file}: ${problems.map((p) => `${p.field}: ${p.rule}`).join("; ")}`, { file, problems });
  }
  const exec = parsed.data;
  if (exec.cwd !== undefined && !exec.cwd.startsWith("/")) throw invalid(file, `${at}.exec.cwd`, "must be an absolute path");
  if (exec.shell === true) return exec;
  if (!exec.command.startsWith("/")) {
    // SECURITY: no PATH lookup: the pinned file is the one named, wherever the server's PATH points.
    throw invalid(file, `${at}.exec.command`, "must be an absolute path (no PATH lookup; use shell: true for a shell string)");
  }
  if (/\s/.test(exec.command) && exec.args === undefined && /\s-{1,2}\w/.test(exec.command)) {
    throw invalid(file, `${at}.exec.command`, "looks like a command line; put the path in command and the rest in args, or use shell: true");
  }
  return exec;
}

function invalid(file: string, field: string, rule: string): VcpError {
  return new VcpError("INVALID_BUNDLE", `${file}: ${field}: ${rule}`, { file, problems: [{ field, rule }] });
}
