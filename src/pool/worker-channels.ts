import { ChainDispatcher, type Batchable } from "./batch.js";
import type { PendingChain } from "./chain-queue.js";
import { ReplyKey } from "./protocol.js";

/**
 * The supervisor's side of one host's worker channels (protocol.ts): which worker runs which chain,
 * and which plans each worker has been sent. No I/O: `send` writes a chain's frame to a channel, and
 * the supervisor reports each reply frame with {@link WorkerChannels.reply}.
 *
 * Each worker thread of the host reads chain frames from a socketpair of its own and writes its replies
 * there, so a chain crosses from the main process straight to the thread that runs it and back: two
 * hand-offs per chain instead of four through the host's main thread (each one a wake-up of a sleeping
 * thread, 15–30 µs of CPU per side on this project's machine; docs/benchmarks.md).
 *
 * ```
 *  admitted chain ─▶ submit ─▶ ChainDispatcher (batch.ts): a worker idle? ─▶ send its frames to that channel
 *  reply frame ────▶ reply(channel, id, key): answer → the caller parses it; planMiss / notStarted →
 *                    the chain goes again, first (with its plan after a miss); the last reply of a batch
 *                    frees the worker for the next batch
 * ```
 *
 * SECURITY: a reply names its chain by id; it is accepted only from the channel the chain was sent to
 * and only once (anything else is a corrupt stream, which kills the host: protocol errors).
 */

/** A chain admitted for the live host, waiting for a free worker or running on one. */
export interface ChannelChain extends Batchable {
  readonly entry: PendingChain;
  /** The ChainRequest as JSON text, serialized once (the runtime's, or made at admission). */
  readonly payload: string;
  /** The next frame of this chain carries its plan whatever its channel was sent (a worker missed it). */
  planRequired: boolean;
}

/**
 * An admitted chain as the channels hold it. Its size for batching (batch.ts BATCH_MAX_CHARS) is the text
 * it carries whatever channel it goes to: the request and a one-action task's hook input (a plan's hook
 * list goes once per worker, a quarantine list is a few digests).
 */
export function channelChain(entry: PendingChain, payload: string): ChannelChain {
  return { entry, payload, chars: payload.length + (entry.invoke?.inputJson.length ?? 0), planRequired: false };
}

/** What a reply frame means for the supervisor. */
export type ChannelReply =
  /** The chain's reply is in the frame's payload: parse it and settle the chain. */
  | { kind: "answer"; chain: ChannelChain }
  /** The chain ran nothing and waits again, first in line. */
  | { kind: "again" }
  /** Not a reply this channel owes: the stream is corrupt. */
  | { kind: "protocol"; detail: string };

interface Running {
  readonly chain: ChannelChain;
  /** Its frame carried the plan: a miss now is a protocol error, not a reason to send it again. */
  readonly withPlan: boolean;
}

interface Channel {
  /** The chains of the batch out on this channel, by task id. */
  readonly running: Map<number, Running>;
  /** Chains of that batch that go again when it ends (not started, or missed their plan). */
  again: ChannelChain[];
  /** Plan keys whose hook list this channel's worker was sent. */
  readonly planKeys: Set<number>;
}

/**
 * Most plan keys remembered per channel. A worker keeps 256 compiled plans (worker.ts); a key it
 * dropped costs one PLAN_MISS round trip, a key this side dropped one plan text sent again.
 */
const PLAN_KEYS_PER_CHANNEL = 4096;

export class WorkerChannels {
  private readonly channels: Channel[];
  private readonly dispatcher: ChainDispatcher<ChannelChain>;

  constructor(
    count: number,
    /** Writes the chain's frame to `channel` (with its hook list when `withPlan`); false when nothing was written (the chain was answered). */
    private readonly send: (channel: number, chain: ChannelChain, withPlan: boolean) => boolean,
  ) {
    this.channels = Array.from({ length: count }, () => ({ running: new Map(), again: [], planKeys: new Set() }));
    this.dispatcher = new ChainDispatcher(count, (batch) => this.run(batch));
  }

  /** An admitted chain: to an idle worker at once, alone; else it waits for the next free one. */
  submit(chain: ChannelChain): void {
    this.dispatcher.submit(chain);
  }

  /** The reply frame of task `id`, whose header says `key` (protocol.ts ReplyKey), arrived on `channel`. */
  reply(channel: number, id: number, key: number): ChannelReply {
    const state = this.channels[channel];
    const running = state?.running.get(id);
    // SECURITY: only a chain sent on this channel and not answered yet; a second reply finds it gone.
    if (state === undefined || running === undefined) return { kind: "protocol", detail: `a reply on worker channel ${channel} for task ${id}, which that worker was not running` };
    if (key !== ReplyKey.answer && key !== ReplyKey.planMiss && key !== ReplyKey.notStarted) {
      return { kind: "protocol", detail: `a reply on worker channel ${channel} with the unknown reply key ${key}` };
    }
    if (key === ReplyKey.planMiss && running.withPlan) {
      // The frame carried the plan and the worker compiles a plan it is given: never retried twice.
      return { kind: "protocol", detail: `worker channel ${channel} missed the plan its chain ${id} carried` };
    }
    state.running.delete(id);
    if (key === ReplyKey.planMiss) {
      state.planKeys.delete(running.chain.entry.plan.key);
      running.chain.planRequired = true;
    }
    if (key !== ReplyKey.answer) state.again.push(running.chain);
    this.endIfDone(state);
    return key === ReplyKey.answer ? { kind: "answer", chain: running.chain } : { kind: "again" };
  }

  /** Plan keys the supervisor evicted (plan-cache.ts): they are never used again. */
  forget(keys: readonly number[]): void {
    for (const state of this.channels) for (const key of keys) state.planKeys.delete(key);
  }

  /** Chains waiting for a free worker. */
  get queued(): number {
    return this.dispatcher.queued;
  }

  private run(batch: ChannelChain[]): void {
    // The dispatcher keeps at most one batch per channel out, so an idle channel exists.
    const index = this.channels.findIndex((state) => state.running.size === 0);
    const state = this.channels[index]!;
    for (const chain of batch) {
      const key = chain.entry.plan.key;
      const withPlan = chain.planRequired || !state.planKeys.has(key);
      state.running.set(chain.entry.id, { chain, withPlan });
      if (!this.send(index, chain, withPlan)) {
        state.running.delete(chain.entry.id);
        continue;
      }
      chain.planRequired = false;
      if (withPlan) {
        if (state.planKeys.size >= PLAN_KEYS_PER_CHANNEL) state.planKeys.clear();
        state.planKeys.add(key);
      }
    }
    this.endIfDone(state);
  }

  /** The batch out on `state` has no chain left running: its worker takes the next batch. */
  private endIfDone(state: Channel): void {
    if (state.running.size > 0) return;
    const again = state.again;
    state.again = [];
    this.dispatcher.done(again);
  }
}
