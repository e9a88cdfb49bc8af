/**
 * Retries bounded by a deadline, the rule of every start-up retry (the sandbox host's start in
 * src/pool/host-lifecycle.ts, the reload of installed bundles in src/install/bundles.ts): on a busy
 * machine a start that failed once often works a moment later, and a supervisor (k8s startupProbe,
 * systemd) waits a known time anyway. Waits of `baseMs`, doubling, at most `maxMs`; no wait that would
 * end past the deadline, so the caller gives up in time with its last error.
 *
 * ```
 *  budget ├──attempt──┤0.5 s├──attempt──┤1 s├──attempt──┤2 s├──attempt…──┤ deadline: give up
 * ```
 *
 * @example
 * ```ts
 * const backoff = new DeadlineBackoff(90_000, () => performance.now());
 * for (;;) {
 *   try { return await start(backoff.remainingMs()); }
 *   catch (err) { const wait = backoff.failed(); if (wait === undefined) throw err; await sleep(wait); }
 * }
 * ```
 */
export class DeadlineBackoff {
  readonly deadline: number;
  private failures = 0;

  constructor(
    readonly budgetMs: number,
    private readonly now: () => number,
    private readonly baseMs = 500,
    private readonly maxMs = 5000,
  ) {
    this.deadline = now() + budgetMs;
  }

  /** Milliseconds left before the deadline (0 once it passed). */
  remainingMs(): number {
    return Math.max(0, this.deadline - this.now());
  }

  /** An attempt failed: the milliseconds to wait before the next one, or undefined to give up now. */
  failed(): number | undefined {
    this.failures++;
    const wait = Math.min(this.maxMs, this.baseMs * 2 ** (this.failures - 1));
    return wait < this.remainingMs() ? wait : undefined;
  }

  /** Failed attempts so far. */
  get failedAttempts(): number {
    return this.failures;
  }
}
