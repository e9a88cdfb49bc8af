import { DEFAULTS } from "../config/defaults.js";
import { VcpError } from "../errors.js";
import { DeadlineBackoff } from "../model/backoff.js";
import type { Logger } from "../observe/events.js";
import type { BundleRegistry, QuarantineInfo } from "./bundle-registry.js";
import type { FrameHeader } from "./frames.js";
import type { HostHandle, HostListener } from "./host-process.js";
import type { BundleMeta, HostStartConfig } from "./protocol.js";
import type { HostKill } from "./watchdog.js";

/** A host asked to close that has not exited by then is killed. */
export const STOP_TIMEOUT_MS = 10_000;

/**
 * Start hosts until one is ready, within `budgetMs` (config `pool.start_timeout_ms`): `start` gets
 * what is left of the budget (a slow host is waited for, not killed and started over), and one that
 * fails early — it died, or could not be forked — is retried after the backoff's wait (0.5 s, 1 s,
 * 2 s … at most 5 s) while the budget lasts. `stopping` ends the attempts (close() began); `onFailure`
 * hears of each failed start and the wait before the next one (undefined: none follows).
 * Resolves "started", "stopped", or the error to give up with (SANDBOX_START_FAILED naming the budget).
 */
export async function startWithRetries(
  start: (timeoutMs: number) => Promise<void>,
  budgetMs: number,
  hooks: { stopping: () => boolean; onFailure: (err: unknown, attempt: number, retryInMs: number | undefined) => void },
): Promise<"started" | "stopped" | VcpError> {
  const backoff = new DeadlineBackoff(budgetMs, () => performance.now());
  for (;;) {
    if (hooks.stopping()) return "stopped";
    try {
      await start(Math.max(1, Math.ceil(backoff.remainingMs())));
      return "started";
    } catch (err) {
      const waitMs = backoff.failed();
      hooks.onFailure(err, backoff.failedAttempts, waitMs);
      if (waitMs === undefined) {
        const why = err instanceof Error ? err.message : String(err);
        return startError(`the sandbox did not start within pool.start_timeout_ms (${budgetMs} ms, ${backoff.failedAttempts} attempt${backoff.failedAttempts === 1 ? "" : "s"}): ${why}`);
      }
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

/**
 * A freshly forked host's start: resolves on its `ready` message ({@link markReady}), rejects with
 * SANDBOX_START_FAILED (and its stderr) when it dies first or stays silent for `timeoutMs` — then it
 * is killed and marked gone, so its death is a failed start, not a crash to recover from.
 */
export function whenReady(host: HostHandle, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      const fail = host.onGoneBeforeReady;
      host.gone = true;
      host.child.kill("SIGKILL");
      fail?.(`no ready message within ${timeoutMs} ms`);
    }, timeoutMs);
    host.onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    host.onGoneBeforeReady = (why) => {
      clearTimeout(timer);
      host.onReady = undefined;
      host.onGoneBeforeReady = undefined;
      reject(startError(`sandbox host failed to start: ${why}${host.stderrTail ? `\n${host.stderrTail.trim()}` : ""}`));
    };
  });
}

/** The host said `ready`: chains may go to it, and its death from now on is a crash. */
export function markReady(host: HostHandle): void {
  host.ready = true;
  host.onGoneBeforeReady = undefined;
  const onReady = host.onReady;
  host.onReady = undefined;
  onReady?.();
}

/** What the supervisor hears from the host it keeps (stale hosts' events never reach it). */
export interface KeptHostEvents {
  /** A whole reply frame of the live host; `frame` is valid only during the call. */
  onFrame(host: HostHandle, frame: Uint8Array, header: FrameHeader, channel: number | undefined): void;
  /** The live host's frame stream is corrupt, cut off or over the limit. */
  onProtocolError(host: HostHandle, err: VcpError): void;
  /** The live host died after it was ready, while the sandbox was not stopping: a crash to recover from. */
  onCrash(host: HostHandle, exit: { code: number | null; signal: NodeJS.Signals | null }): void;
}

/**
 * The sandbox host's life: one live host at a time, numbered by generation. Starts a host (ready, or
 * SANDBOX_START_FAILED), restarts one after a crash with backoff — holding everything else back until
 * the bundles are reloaded — kills one (SIGKILL) and stops the last. The fork is a parameter, so the
 * state machine runs in tests without a process.
 *
 * ```
 *  start ─▶ forked ── ready ─▶ live ── dies ─▶ onCrash ─▶ restart(reload): start with backoff,
 *             │                  │                          reload (nothing else runs), ready again
 *             └─ dies: retried with backoff ─┐               └─ stop(): close call, or SIGKILL after STOP_TIMEOUT_MS
 *                silent past pool.start_timeout_ms ─▶ start fails (SANDBOX_START_FAILED)
 * ```
 */
export class HostKeeper {
  private live: HostHandle | undefined;
  private generation = 0;
  private restartToken = 0;
  private reloadingNow = false;
  private stoppingNow = false;
  private onStopped: (() => void) | undefined;

  constructor(
    private readonly configFor: (generation: number) => HostStartConfig,
    private readonly events: KeptHostEvents,
    private readonly fork: (config: HostStartConfig, listener: HostListener) => HostHandle,
    private readonly logger: Logger,
    /** Config `pool.start_timeout_ms`: the time a start (and each restart) has, retries included. */
    private readonly startTimeoutMs: number = DEFAULTS.pool.start_timeout_ms,
  ) {}

  /** The live host (ready or starting), if any. */
  get host(): HostHandle | undefined {
    return this.live;
  }

  /** The live host when chains may go to it: ready, and not reloading bundles after a restart. */
  get open(): HostHandle | undefined {
    const host = this.live;
    return host?.ready === true && !this.reloadingNow ? host : undefined;
  }

  /** True while a restarted host reloads bundles: nothing else may run, so a crash names the reload. */
  get reloading(): boolean {
    return this.reloadingNow;
  }

  get stopping(): boolean {
    return this.stoppingNow;
  }

  /**
   * The first host: started with retries within `startTimeoutMs` (startWithRetries); SANDBOX_START_FAILED
   * when none became ready in that time.
   */
  async start(): Promise<void> {
    const started = await startWithRetries((timeoutMs) => this.startOnce(timeoutMs), this.startTimeoutMs, {
      stopping: () => this.stoppingNow,
      onFailure: (err, attempt, retryInMs) =>
        this.logger.warn({ err, attempt, retry_in_ms: retryInMs ?? null, start_timeout_ms: this.startTimeoutMs }, retryInMs === undefined ? "sandbox: host start failed; giving up" : "sandbox: host start failed; retrying"),
    });
    if (started instanceof VcpError) throw started;
    if (started === "stopped") throw startError("the sandbox was closed while its host was starting");
  }

  /** Fork the next generation and wait up to `timeoutMs` for its ready message. */
  private async startOnce(timeoutMs: number): Promise<void> {
    const config = this.configFor(++this.generation);
    let host: HostHandle;
    try {
      host = this.fork(config, {
        onMessage: (from, message) => {
          if (from !== this.live || message.t !== "ready") return;
          markReady(from);
        },
        onFrame: (from, frame, header, channel) => {
          if (from === this.live && from.killed === undefined) this.events.onFrame(from, frame, header, channel);
        },
        onProtocolError: (from, err) => {
          if (from === this.live && !from.gone && from.killed === undefined) this.events.onProtocolError(from, err);
        },
        onGone: (from, error) => this.gone(from, error),
      });
    } catch (err) {
      throw startError(`could not fork the sandbox host: ${(err as Error).message}`);
    }
    this.live = host;
    try {
      await whenReady(host, timeoutMs);
    } catch (err) {
      if (this.live === host) this.live = undefined;
      throw err;
    }
  }

  /**
   * After a crash: start a new host (with backoff), then `reload` the bundles into it while nothing else
   * runs. "ready" when this restart is the latest and done; "superseded" when a reload killed the host
   * and a newer restart took over; "stopped" when close() began; an error to give up with.
   */
  async restart(reload: (host: HostHandle) => Promise<void>): Promise<"ready" | "superseded" | "stopped" | VcpError> {
    // SECURITY: no chain and no other load starts until the reloads are done (`open` is undefined
    // meanwhile), so a reload that kills the host is the only code that was running.
    const token = ++this.restartToken;
    this.reloadingNow = true;
    const started = await startWithRetries((timeoutMs) => this.startOnce(timeoutMs), this.startTimeoutMs, {
      stopping: () => this.stoppingNow,
      onFailure: (err, attempt, retryInMs) => this.logger.error({ err, attempt, retry_in_ms: retryInMs ?? null }, "sandbox: host restart failed"),
    });
    if (started !== "started") return started;
    const host = this.live;
    if (host !== undefined) await reload(host);
    if (token !== this.restartToken) return "superseded";
    this.reloadingNow = false;
    return "ready";
  }

  /** SECURITY: SIGKILL, not a request: a wedged or busy host cannot be asked to stop. */
  kill(host: HostHandle, kill: HostKill): void {
    host.killed = kill;
    host.child.kill("SIGKILL");
  }

  /** Stop the live host: `close` asks a ready one to finish and exit; SIGKILL after STOP_TIMEOUT_MS or when it is not ready. */
  async stop(close: (host: HostHandle) => void): Promise<void> {
    this.stoppingNow = true;
    const host = this.live;
    if (host !== undefined && !host.gone) {
      const stopped = new Promise<void>((resolve) => {
        this.onStopped = resolve;
      });
      const timer = setTimeout(() => host.child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      if (host.ready) close(host);
      else host.child.kill("SIGKILL");
      await stopped;
      clearTimeout(timer);
    }
    this.live = undefined;
  }

  private gone(host: HostHandle, error: string | undefined): void {
    if (host.gone) return;
    host.gone = true;
    if (host !== this.live) return;
    this.live = undefined;
    const exit = host.exit ?? { code: null, signal: null };
    if (host.onGoneBeforeReady) {
      host.onGoneBeforeReady(error ?? `exited (code ${exit.code}, signal ${exit.signal})`);
    } else if (this.stoppingNow) {
      this.onStopped?.();
    } else {
      this.events.onCrash(host, exit);
    }
  }
}

/**
 * Load every loaded, non-quarantined bundle into a restarted host, one at a time, so that if a reload
 * kills the host the culprit is that bundle and nothing else. `load` sends one load call; `live` says
 * whether `host` is still the live host. Stops at the first death (that recovery takes over).
 */
export async function reloadBundles(
  bundles: BundleRegistry,
  load: (digest: string) => Promise<unknown>,
  live: () => boolean,
  report: { quarantine: (info: QuarantineInfo) => void; loadsOnFirstUse: (meta: BundleMeta) => void },
): Promise<void> {
  for (const meta of bundles.toReload()) {
    if (bundles.isQuarantined(meta.digest)) continue; // a recovery in the meantime quarantined it
    if (!live()) return;
    try {
      await load(meta.digest);
    } catch (err) {
      const verdict = reloadVerdict(err, !live());
      if (verdict.quarantine) report.quarantine({ digest: meta.digest, bundle: meta.name, reason: `failed to reload after a sandbox restart: ${(err as Error).message}` });
      else if (!verdict.stop) report.loadsOnFirstUse(meta);
      if (verdict.stop) return;
    }
  }
}

/**
 * What to do when reloading a bundle into a restarted host failed (the reloads run one at a time, with
 * nothing else running):
 *
 * ```
 *  host alive, load ran past its budget  → keep it loaded: a worker loads it on first use, within the
 *                                          hook's own budget (a busy machine, not a refusal)
 *  host alive, load refused              → quarantine it, reload the next
 *  host died, its load was the only code → quarantine it (it killed the host); that recovery takes over
 *  host died otherwise                   → stop; that recovery takes over
 * ```
 */
export function reloadVerdict(err: unknown, hostDied: boolean): { quarantine: boolean; stop: boolean } {
  const details = err instanceof VcpError ? err.details : undefined;
  if (!hostDied && details?.["timed_out"] === true) return { quarantine: false, stop: false };
  // SECURITY: a host death is this bundle's doing only when its load was the only code running.
  return { quarantine: !hostDied || details?.["sole"] === true, stop: hostDied };
}

export function startError(message: string): VcpError {
  return new VcpError("SANDBOX_START_FAILED", message);
}
