/**
 * Chain batching (issue 15, "batching of messages under load"). A chain costs little CPU in a worker
 * next to the crossings around it: a frame to a worker's channel and its reply back (a write and a
 * wake-up each way, 15–30 µs of CPU per side on this project's machine). When chains queue up in the
 * supervisor, several of them go to the next free worker as ONE batch — their frames in one write, read
 * by the worker in one wake-up, their replies coalesced the same way; the worker still runs them one
 * after another, each exactly as a chain of its own (worker.ts). When they do not queue up, nothing
 * changes: a chain that finds an idle worker goes at once, alone.
 *
 * ```
 *  chain ─▶ ChainDispatcher.submit ─▶ a worker idle?  yes ─▶ run([chain])          (no wait)
 *                                                     no  ─▶ queue
 *  a batch is answered ─▶ ChainDispatcher.done ─▶ queue not empty ─▶ run(takeBatch(queue)) on the freed worker
 * ```
 *
 * At most one batch per worker is out: chains sent to a busy worker would only wait there for the same
 * worker, while chains waiting here can still go to whichever worker frees up first.
 *
 * Bounds (every one applies before the work it limits):
 * - the supervisor's admission lets about {@link HOST_QUEUE_MS} of work per thread wait here
 *   ({@link hostQueuePerThread}): chains here are past admission, so slow chains get no batches;
 * - a batch takes at most {@link BATCH_MAX_CHAINS} chains and at most {@link BATCH_MAX_CHARS} characters
 *   of request text (a larger chain goes alone), and no more than its share of the queue, so a worker
 *   that frees up a moment later still finds chains to run;
 * - the worker stops a batch early, before its next chain, once the batch has run for
 *   {@link BATCH_MAX_MS} or its replies hold {@link BATCH_REPLY_MAX_CHARS} characters
 *   ({@link shouldStopBatch}); the chains it did not start come back to the front of the queue
 *   (answered ReplyKey.notStarted). This
 *   bounds how long a finished chain's reply can wait for the rest of its batch, and the memory of
 *   one batch reply (each chain's reply is also bounded by the frame limit on its own).
 *
 * SECURITY (crash attribution): a chain in a batch writes its own slot records (its task id) when it
 * starts, exactly as a lone chain does; a chain not started yet has written nothing. If the host dies
 * mid-batch, the supervisor sees the running chain in its slot record, and every other chain of the
 * batch as a chain that was in flight without a record: a bystander (requeued once, never blamed;
 * recovery.ts). A waiting chain is never "running" for the watchdog, which reads slot records only.
 */

/** Most chains in one batch. */
export const BATCH_MAX_CHAINS = 16;
/** Most request text (requests and one-action inputs, in UTF-16 characters; worker-channels.ts channelChain) in one batch. */
export const BATCH_MAX_CHARS = 256 * 1024;
/** A worker starts no further chain of its batch after the batch has run this long (ms). */
export const BATCH_MAX_MS = 5;
/** A worker starts no further chain of its batch once its replies hold this many characters. */
export const BATCH_REPLY_MAX_CHARS = 1024 * 1024;

/**
 * Work the supervisor lets wait past admission per thread, in milliseconds of chain time: chains waiting
 * there (for a free worker) are past admission (fair share, slow lane), so this bounds how long a newly
 * admitted or a promoted chain can wait behind them.
 */
export const HOST_QUEUE_MS = 10;

/**
 * How many chains per thread the supervisor lets wait for a worker past admission (beyond one running per thread):
 * about HOST_QUEUE_MS of work at the recent chain duration `chainMs`, from 1 (slow chains, or no
 * estimate yet: what a freed worker needs to start at once) to BATCH_MAX_CHAINS (quick chains: a
 * full batch for each thread).
 */
export function hostQueuePerThread(chainMs: number | undefined): number {
  if (chainMs === undefined || Number.isNaN(chainMs)) return 1;
  return Math.max(1, Math.min(BATCH_MAX_CHAINS, Math.floor(HOST_QUEUE_MS / Math.max(chainMs, 0))));
}

/** What batching needs of a waiting chain: its size, the text it carries to the worker (UTF-16 characters). */
export interface Batchable {
  readonly chars: number;
}

/**
 * How many of `queued` waiting chains a freed worker takes: its share of the queue over all `threads`
 * (the other workers free up soon too and should find work), at least one, at most BATCH_MAX_CHAINS.
 */
export function batchCount(queued: number, threads: number): number {
  if (queued <= 0) return 0;
  return Math.min(BATCH_MAX_CHAINS, Math.max(1, Math.ceil(queued / threads)));
}

/**
 * Removes the next batch from the front of `queue` (FIFO: the chains that waited longest go first):
 * {@link batchCount} chains, fewer when the next one would take the batch past BATCH_MAX_CHARS. The
 * first chain always goes, whatever its size (the frame limit already bounded it).
 */
export function takeBatch<T extends Batchable>(queue: T[], threads: number): T[] {
  const count = batchCount(queue.length, threads);
  let taken = 0;
  let chars = 0;
  while (taken < count) {
    const size = queue[taken]!.chars;
    if (taken > 0 && chars + size > BATCH_MAX_CHARS) break;
    chars += size;
    taken++;
  }
  return queue.splice(0, taken);
}

/** The worker's rule, checked after each chain of a batch: start no further one (the rest go back to the supervisor's queue). */
export function shouldStopBatch(elapsedMs: number, replyChars: number): boolean {
  return elapsedMs >= BATCH_MAX_MS || replyChars >= BATCH_REPLY_MAX_CHARS;
}

/**
 * The dispatch decision (no I/O: `run` sends a batch to a free worker and the caller reports its end
 * with {@link done}). Keeps at most `threads` batches out.
 */
export class ChainDispatcher<T extends Batchable> {
  private readonly queue: T[] = [];
  private running = 0;

  constructor(
    private readonly threads: number,
    private readonly run: (batch: T[]) => void,
  ) {}

  /** A chain arrived: to an idle worker at once, alone; else it waits for the next free one. */
  submit(chain: T): void {
    this.queue.push(chain);
    this.pump();
  }

  /**
   * A task ended. `again`: its chains that must run once more, first (a worker did not start them,
   * or lacked their plan and they now carry it), ahead of everything that waits.
   */
  done(again: readonly T[] = []): void {
    this.running--;
    if (again.length > 0) this.queue.unshift(...again);
    this.pump();
  }

  /** Chains waiting for a worker. */
  get queued(): number {
    return this.queue.length;
  }

  /** Batches out. */
  get inFlight(): number {
    return this.running;
  }

  private pump(): void {
    while (this.running < this.threads && this.queue.length > 0) {
      this.running++;
      this.run(takeBatch(this.queue, this.threads));
    }
  }
}
