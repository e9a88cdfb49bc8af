/**
 * A first-in, first-out queue of async tasks that run one at a time: the per-session mutex of the
 * pipeline (DESIGN §4.6). Every operation of one session (adapt, transition, conflict, violation,
 * periodic tick) runs as one task, so a periodic chain can never start while a chain of another
 * type of the same session is in progress (spec §5.2), and two operations never interleave their
 * chains or their session updates.
 *
 * ```
 *   run(A) ─┐       run(B) ─┐          run(tick) ─┐
 *           ▼               ▼                     ▼
 *   tail: [A running] ──▶ [B waits] ──────▶ [tick waits]     (each starts when the previous settled)
 * ```
 *
 * A task that throws or rejects rejects only its own promise; the next task still runs.
 *
 * @example
 * ```ts
 * const queue = createSerialQueue();
 * const a = queue.run(async () => { await fire("post_select", …); await fire("pre_inject", …); });
 * const b = queue.run(async () => fire("periodic", …)); // starts only after `a` settled
 * ```
 */
export interface SerialQueue {
  /** Run `task` after every task queued before it has settled; resolves or rejects with it. */
  run<T>(task: () => T | Promise<T>): Promise<T>;
  /** Settles when every task queued so far has settled (never rejects). */
  idle(): Promise<void>;
  /** Tasks queued or running. */
  readonly size: number;
}

export function createSerialQueue(): SerialQueue {
  let tail: Promise<void> = Promise.resolve();
  let size = 0;
  const settle = (): void => {
    size--;
  };
  return {
    run<T>(task: () => T | Promise<T>): Promise<T> {
      size++;
      // The task starts in a reaction of the previous tail, never synchronously inside run():
      // callers can rely on run() returning before their task begins.
      const result = tail.then(() => task());
      tail = result.then(settle, settle);
      return result;
    },
    idle() {
      return tail;
    },
    get size() {
      return size;
    },
  };
}
