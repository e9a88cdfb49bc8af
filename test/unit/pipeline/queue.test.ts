import { describe, expect, test } from "vitest";
import { createSerialQueue } from "../../../src/pipeline/queue.js";
import { deferred, flush } from "./support.js";

describe("createSerialQueue", () => {
  test("tasks run one at a time, in call order: each starts only after the previous settled", async () => {
    const queue = createSerialQueue();
    const log: string[] = [];
    const gates = [deferred(), deferred(), deferred()];
    const runs = gates.map((gate, i) =>
      queue.run(async () => {
        log.push(`start ${i}`);
        await gate.promise;
        log.push(`end ${i}`);
        return i;
      }),
    );
    await flush();
    expect(log).toEqual(["start 0"]);
    gates[2]!.resolve(); // releasing a later task early changes nothing
    gates[1]!.resolve();
    await flush();
    expect(log).toEqual(["start 0"]);
    gates[0]!.resolve();
    expect(await Promise.all(runs)).toEqual([0, 1, 2]);
    expect(log).toEqual(["start 0", "end 0", "start 1", "end 1", "start 2", "end 2"]);
  });

  test("a failing task rejects only its own promise; the next task still runs", async () => {
    const queue = createSerialQueue();
    const failing = queue.run(() => {
      throw new Error("boom");
    });
    const rejecting = queue.run(async () => Promise.reject(new Error("async boom")));
    const next = queue.run(async () => "ran");
    await expect(failing).rejects.toThrow("boom");
    await expect(rejecting).rejects.toThrow("async boom");
    await expect(next).resolves.toBe("ran");
  });

  test("run() returns before its task starts, even on an idle queue", async () => {
    const queue = createSerialQueue();
    let started = false;
    const done = queue.run(() => {
      started = true;
    });
    expect(started).toBe(false);
    await done;
    expect(started).toBe(true);
  });

  test("idle() settles after every task queued so far, without rejecting; size counts queued and running tasks", async () => {
    const queue = createSerialQueue();
    const gate = deferred();
    const log: string[] = [];
    void queue.run(() => gate.promise.then(() => log.push("a")));
    void queue.run(() => Promise.reject(new Error("x"))).catch(() => log.push("b failed"));
    expect(queue.size).toBe(2);
    const idle = queue.idle().then(() => log.push("idle"));
    await flush();
    expect(log).toEqual([]);
    gate.resolve();
    await idle;
    expect(log).toEqual(["a", "b failed", "idle"]);
    expect(queue.size).toBe(0);
  });
});
