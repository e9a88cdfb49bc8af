import { DEFAULTS } from "../config/defaults.js";
import { VcpError } from "../errors.js";
import { silentLogger, type Logger } from "../observe/events.js";
import { assertSandboxLimits, DEFAULT_SANDBOX_LIMITS } from "../sandbox-host/index.js";
import type { FetchPolicy, GuestLogLine } from "../sandbox-host/types.js";
import type { SandboxOptions } from "./api.js";
import { DEFAULT_FRAME_BYTES, MAX_FRAME_BYTES, MIN_FRAME_BYTES } from "./frames.js";
import type { HostStartConfig } from "./protocol.js";

const DEFAULT_FETCH: FetchPolicy = Object.freeze({ allowHosts: [...DEFAULTS.fetch.allow_hosts], denyLlmHosts: [...DEFAULTS.fetch.deny_llm_hosts] });

/** {@link SandboxOptions} checked, with their defaults: what the supervisor and its parts are built from. */
export interface SandboxSettings {
  /** What every host is started with, but for its directories and generation (see {@link hostConfig}). */
  readonly host: Readonly<Omit<HostStartConfig, "codeDir" | "slotDir" | "generation">>;
  readonly slowBundle: { readonly timeouts: number; readonly windowMs: number };
  /** Fair-share window; undefined when fair share is off. */
  readonly fairShareWindowMs: number | undefined;
  readonly codeDir: string | undefined;
  /** Config `pool.start_timeout_ms` (host-lifecycle.ts startWithRetries). */
  readonly startTimeoutMs: number;
  readonly logger: Logger;
  /** Where guest `vcp.log` lines go, in order: the caller's onGuestLog, else the logger. */
  readonly deliverLogs: (lines: readonly GuestLogLine[]) => void;
}

/**
 * Check the options once, at start (INVALID_CONFIG naming the field), and fill in defaults. The
 * sandbox limits are refused here, before any host or worker thread exists.
 */
export function resolveSandboxOptions(options: SandboxOptions): SandboxSettings {
  const threads = positiveInt(options.threads ?? DEFAULTS.pool.threads, "threads");
  const maxQueue = nonNegativeInt(options.maxQueue ?? DEFAULTS.pool.max_queue, "maxQueue");
  const limits = Object.freeze({ ...DEFAULT_SANDBOX_LIMITS, ...options.limits });
  assertSandboxLimits(limits);
  const frameBytes = options.frameBytes ?? DEFAULT_FRAME_BYTES;
  if (!Number.isSafeInteger(frameBytes) || frameBytes < MIN_FRAME_BYTES || frameBytes > MAX_FRAME_BYTES) {
    throw new VcpError("INVALID_CONFIG", `sandbox option frameBytes must be an integer from ${MIN_FRAME_BYTES} to ${MAX_FRAME_BYTES}, got ${String(options.frameBytes)}`, {
      field: "frameBytes",
    });
  }
  const slowBundle = options.slowBundle ?? { timeouts: 3, windowMs: 60_000 };
  const logger = options.logger ?? silentLogger;
  const profileModules = [...(options.profileModules ?? [])];
  return {
    host: Object.freeze({
      threads,
      maxQueue,
      limits,
      fetch: options.fetch ?? DEFAULT_FETCH,
      integrity: options.integrity ?? { safetyCriticalRuleIds: [] },
      auditDiffs: options.auditDiffs === true,
      ...(profileModules.length > 0 ? { profileModules } : {}),
      frameBytes,
    }),
    slowBundle: { timeouts: positiveInt(slowBundle.timeouts, "slowBundle.timeouts"), windowMs: positiveInt(slowBundle.windowMs, "slowBundle.windowMs") },
    fairShareWindowMs: options.fairShare === false ? undefined : positiveInt(options.fairShare?.windowMs ?? 3000, "fairShare.windowMs"),
    codeDir: options.codeDir,
    startTimeoutMs: positiveInt(options.startTimeoutMs ?? DEFAULTS.pool.start_timeout_ms, "startTimeoutMs"),
    logger,
    deliverLogs: guestLogSink(options.onGuestLog, logger),
  };
}

/** The configuration one host generation is started with. */
export function hostConfig(settings: SandboxSettings, dirs: { dir: string; slotDir: string }, generation: number): HostStartConfig {
  return { ...settings.host, codeDir: dirs.dir, slotDir: dirs.slotDir, generation };
}

function guestLogSink(onGuestLog: ((line: GuestLogLine) => void) | undefined, logger: Logger): (lines: readonly GuestLogLine[]) => void {
  return (lines) => {
    for (const line of lines) {
      if (onGuestLog) {
        try {
          onGuestLog(line);
        } catch (err) {
          logger.error({ err }, "sandbox: onGuestLog threw");
        }
      } else if (logger.isLevelEnabled(line.level)) {
        logger[line.level]({ bundle: line.bundle, hook: line.hook, ...(line.fields ? { fields: line.fields } : {}) }, line.message);
      }
    }
  };
}

function positiveInt(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new VcpError("INVALID_CONFIG", `sandbox option ${field} must be a positive integer, got ${String(value)}`, { field });
  }
  return value;
}

function nonNegativeInt(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new VcpError("INVALID_CONFIG", `sandbox option ${field} must be a non-negative integer, got ${String(value)}`, { field });
  }
  return value;
}
