import { describe, expect, test } from "vitest";
import {
  BATCH_MAX_CHAINS,
  BATCH_MAX_CHARS,
  BATCH_MAX_MS,
  BATCH_REPLY_MAX_CHARS,
  ChainDispatcher,
  HOST_QUEUE_MS,
  batchCount,
  hostQueuePerThread,
  shouldStopBatch,
  takeBatch,
} from "../../../src/pool/batch.js";

// The supervisor's dispatch decision (src/pool/batch.ts), without a process or a pool.

interface Chain {
  id: number;
  chars: number;
}

function chain(id: number, chars = 100): Chain {
  return { id, chars };
}

/** A dispatcher whose workers are a list of the batches handed to them. */
function dispatcher(threads: number): { d: ChainDispatcher<Chain>; tasks: number[][] } {
  const tasks: number[][] = [];
  const d = new ChainDispatcher<Chain>(threads, (batch) => tasks.push(batch.map((c) => c.id)));
  return { d, tasks };
}

describe("ChainDispatcher", () => {
  test("a chain that finds an idle worker goes at once, alone", () => {
    const { d, tasks } = dispatcher(2);
    d.submit(chain(1));
    expect(tasks).toEqual([[1]]);
    d.submit(chain(2));
    expect(tasks).toEqual([[1], [2]]);
    expect(d.inFlight).toBe(2);
    expect(d.queued).toBe(0);
  });

  test("one chain at a time stays one chain per task (concurrency 1 adds no wait)", () => {
    const { d, tasks } = dispatcher(2);
    for (let id = 1; id <= 5; id++) {
      d.submit(chain(id));
      d.done();
    }
    expect(tasks).toEqual([[1], [2], [3], [4], [5]]);
    expect(d.inFlight).toBe(0);
  });

  test("never more tasks on the pool than threads; chains beyond wait and go to the next free worker together", () => {
    const { d, tasks } = dispatcher(2);
    for (let id = 1; id <= 10; id++) d.submit(chain(id));
    expect(tasks).toEqual([[1], [2]]);
    expect(d.queued).toBe(8);
    d.done();
    // Its share of the queue: the other worker frees up soon and finds the rest.
    expect(tasks[2]).toEqual([3, 4, 5, 6]);
    d.done();
    expect(tasks[3]).toEqual([7, 8]);
    d.done();
    expect(tasks[4]).toEqual([9]);
    d.done();
    expect(tasks[5]).toEqual([10]);
    expect(d.inFlight).toBe(2);
    d.done();
    d.done();
    expect(d.inFlight).toBe(0);
    expect(tasks.flat()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  test("a batch holds at most BATCH_MAX_CHAINS chains", () => {
    const { d, tasks } = dispatcher(1);
    for (let id = 1; id <= 2 + BATCH_MAX_CHAINS; id++) d.submit(chain(id));
    d.done();
    expect(tasks[1]).toHaveLength(BATCH_MAX_CHAINS);
    expect(d.queued).toBe(1);
  });

  test("chains a task gives back (not started, or now carrying their plan) run next, before everything that waits", () => {
    const { d, tasks } = dispatcher(1);
    for (let id = 1; id <= 4; id++) d.submit(chain(id));
    expect(tasks).toEqual([[1]]);
    d.done();
    expect(tasks[1]).toEqual([2, 3, 4]);
    d.submit(chain(5));
    d.done([chain(3), chain(4)]);
    expect(tasks[2]).toEqual([3, 4, 5]);
  });
});

describe("takeBatch", () => {
  test("stops before the chain that would take the batch past BATCH_MAX_CHARS; a large chain goes alone", () => {
    const half = Math.floor(BATCH_MAX_CHARS / 2);
    const queue = [chain(1, half), chain(2, half), chain(3, 10), chain(4, BATCH_MAX_CHARS * 2), chain(5, 10)];
    expect(takeBatch(queue, 1).map((c) => c.id)).toEqual([1, 2]);
    expect(takeBatch(queue, 1).map((c) => c.id)).toEqual([3]);
    expect(takeBatch(queue, 1).map((c) => c.id)).toEqual([4]);
    expect(takeBatch(queue, 1).map((c) => c.id)).toEqual([5]);
    expect(queue).toEqual([]);
  });

  test("batchCount: a share of the queue per thread, at least one, at most BATCH_MAX_CHAINS", () => {
    expect(batchCount(0, 2)).toBe(0);
    expect(batchCount(1, 4)).toBe(1);
    expect(batchCount(5, 2)).toBe(3);
    expect(batchCount(1000, 2)).toBe(BATCH_MAX_CHAINS);
  });
});

test("shouldStopBatch: the worker starts no further chain after BATCH_MAX_MS or BATCH_REPLY_MAX_CHARS of replies", () => {
  expect(shouldStopBatch(0, 0)).toBe(false);
  expect(shouldStopBatch(BATCH_MAX_MS - 0.1, BATCH_REPLY_MAX_CHARS - 1)).toBe(false);
  expect(shouldStopBatch(BATCH_MAX_MS, 0)).toBe(true);
  expect(shouldStopBatch(0, BATCH_REPLY_MAX_CHARS)).toBe(true);
});

test("hostQueuePerThread: about HOST_QUEUE_MS of recent chain time waits in the host per thread, 1 to BATCH_MAX_CHAINS", () => {
  expect(hostQueuePerThread(undefined)).toBe(1); // no reply yet: as without batching
  expect(hostQueuePerThread(HOST_QUEUE_MS * 3)).toBe(1); // slow chains: no batches to wait for
  expect(hostQueuePerThread(HOST_QUEUE_MS / 4)).toBe(4);
  expect(hostQueuePerThread(0.01)).toBe(BATCH_MAX_CHAINS);
  expect(hostQueuePerThread(0)).toBe(BATCH_MAX_CHAINS);
  expect(hostQueuePerThread(Number.NaN)).toBe(1);
});
