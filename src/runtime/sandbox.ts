/*
 * The default chain backend: the supervised isolated-vm sandbox process (src/pool/), started with the
 * runtime's depth bound, integrity settings and a guest log that redacts secrets. The pool module
 * (piscina, child process) is imported only here, and only when no other backend is given.
 */
import { createRedactor } from "../audit/index.js";
import { DEFAULTS } from "../config/defaults.js";
import type { Logger } from "../observe/events.js";
import type { GuestLogLine } from "../sandbox-host/types.js";
import type { ChainBackend } from "../pool/backend.js";
import type { RuntimeOptions } from "./types.js";

/**
 * Start the sandbox process for a runtime.
 *
 * @example
 * ```ts
 * const backend = await startBackend(options, { logger, jsonDepth: 64, auditDiffs: true });
 * ```
 */
export async function startBackend(options: RuntimeOptions, how: { logger: Logger; jsonDepth: number; auditDiffs: boolean }): Promise<ChainBackend> {
  const { logger } = how;
  return (await import("../pool/index.js")).startSandbox({
    ...options.sandbox,
    // One depth rule for inputs and for results inside the isolate (model/json-bounds.ts).
    limits: { ...options.sandbox?.limits, jsonDepth: how.jsonDepth },
    logger,
    onGuestLog: redactedGuestLog(options.redactKeys, options.sandbox?.onGuestLog, logger),
    integrity: {
      safetyCriticalRuleIds: options.integrity?.safetyCriticalRules ?? [],
      ...(options.integrity?.runtimeKey ? { runtimeKey: options.integrity.runtimeKey } : {}),
      ...(options.integrity?.trustedConstitutionKeys ? { trustedConstitutionKeys: options.integrity.trustedConstitutionKeys } : {}),
    },
    auditDiffs: how.auditDiffs,
    ...(options.profileModules !== undefined ? { profileModules: options.profileModules } : {}),
  });
}

/**
 * Guest log lines with configured keys (and secret shapes) redacted in their fields before they reach
 * the caller's sink or the operational log (DESIGN §5: operational logs redact secrets).
 */
function redactedGuestLog(keys: readonly string[] | undefined, sink: ((line: GuestLogLine) => void) | undefined, logger: Logger) {
  const redact = createRedactor({ keys: [...(keys ?? DEFAULTS.redact_keys)] });
  return (line: GuestLogLine): void => {
    const clean: GuestLogLine = { ...line, message: redact(line.message) as string, ...(line.fields ? { fields: redact(line.fields) as Record<string, unknown> } : {}) };
    if (sink) sink(clean);
    else if (logger.isLevelEnabled(clean.level)) logger[clean.level]({ bundle: clean.bundle, hook: clean.hook, ...(clean.fields ? { fields: clean.fields } : {}) }, clean.message);
  };
}
