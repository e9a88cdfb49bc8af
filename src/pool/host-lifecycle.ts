import { VcpError } from "../errors.js";
import type { HostHandle } from "./host-process.js";

/** A forked host that has not said `ready` by then is killed and its start failed. */
export const START_TIMEOUT_MS = 20_000;
/** Consecutive failed host starts before the sandbox gives up (SANDBOX_START_FAILED). */
export const MAX_START_FAILURES = 5;

/**
 * Consecutive failed host starts and the wait before the next try: 100 ms × 2^failures (200 ms, 400
 * ms, …), and after MAX_START_FAILURES nothing more. A host that becomes ready starts the count over.
 */
export class StartBackoff {
  private failures = 0;

  constructor(
    private readonly max: number = MAX_START_FAILURES,
    private readonly baseMs: number = 100,
  ) {}

  /** A host became ready. */
  started(): void {
    this.failures = 0;
  }

  /** A start failed: the ms to wait before the next one, or undefined to give up. */
  failed(): number | undefined {
    this.failures++;
    return this.failures >= this.max ? undefined : this.baseMs * 2 ** this.failures;
  }

  get count(): number {
    return this.failures;
  }
}

/**
 * Start hosts until one is ready: `start` is retried after the backoff's wait until it gives up.
 * `stopping` ends the attempts (close() began); `onFailure` hears of each failed start.
 * Resolves "started", "stopped", or the error to give up with.
 */
export async function startWithRetries(
  start: () => Promise<void>,
  backoff: StartBackoff,
  hooks: { stopping: () => boolean; onFailure: (err: unknown, failures: number) => void },
): Promise<"started" | "stopped" | VcpError> {
  for (;;) {
    if (hooks.stopping()) return "stopped";
    try {
      await start();
      return "started";
    } catch (err) {
      const waitMs = backoff.failed();
      hooks.onFailure(err, backoff.count);
      if (waitMs === undefined) return err instanceof VcpError ? err : startError(String(err));
      await new Promise((resolve) => setTimeout(resolve, waitMs));
    }
  }
}

/**
 * A freshly forked host's start: resolves on its `ready` message ({@link markReady}), rejects with
 * SANDBOX_START_FAILED (and its stderr) when it dies first or stays silent for `timeoutMs` — then it
 * is killed and marked gone, so its death is a failed start, not a crash to recover from.
 */
export function whenReady(host: HostHandle, timeoutMs: number = START_TIMEOUT_MS): Promise<void> {
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
