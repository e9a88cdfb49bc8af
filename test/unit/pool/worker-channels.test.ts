import { describe, expect, test } from "vitest";
import { BATCH_MAX_CHARS } from "../../../src/pool/batch.js";
import { ReplyKey } from "../../../src/pool/protocol.js";
import { channelChain, WorkerChannels, type ChannelChain } from "../../../src/pool/worker-channels.js";
import { pendingChain } from "./fixtures.js";

// Which worker runs which chain, and which plans each worker was sent (src/pool/worker-channels.ts),
// without a process: the channels are lists of the frames written to them.

interface Sent {
  channel: number;
  id: number;
  withPlan: boolean;
}

function channels(count: number, refuse: (chain: ChannelChain) => boolean = () => false): { c: WorkerChannels; sent: Sent[] } {
  const sent: Sent[] = [];
  const c = new WorkerChannels(count, (channel, chain, withPlan) => {
    if (refuse(chain)) return false;
    sent.push({ channel, id: chain.entry.id, withPlan });
    return true;
  });
  return { c, sent };
}

function chain(digests = ["sha256:a"], payload = "{}"): ChannelChain {
  return channelChain(pendingChain(digests), payload);
}

describe("WorkerChannels", () => {
  test("a chain that finds an idle worker goes at once with its plan; that worker is not sent the plan again", () => {
    const { c, sent } = channels(2);
    const first = chain();
    c.submit(first);
    expect(sent).toEqual([{ channel: 0, id: first.entry.id, withPlan: true }]);
    expect(c.reply(0, first.entry.id, ReplyKey.answer)).toEqual({ kind: "answer", chain: first });
    const second = channelChain({ ...pendingChain(["sha256:a"]), plan: first.entry.plan }, "{}");
    c.submit(second);
    expect(sent[1]).toEqual({ channel: 0, id: second.entry.id, withPlan: false });
  });

  test("each worker is sent a plan's hook list once: the other worker gets it with its first chain of the plan", () => {
    const { c, sent } = channels(2);
    const a = chain();
    const b = channelChain({ ...pendingChain(["sha256:a"]), plan: a.entry.plan }, "{}");
    c.submit(a);
    c.submit(b);
    expect(sent).toEqual([
      { channel: 0, id: a.entry.id, withPlan: true },
      { channel: 1, id: b.entry.id, withPlan: true },
    ]);
  });

  test("while every worker is busy chains wait, and the worker that frees up first takes them as one batch", () => {
    const { c, sent } = channels(2);
    const chains = Array.from({ length: 6 }, () => chain());
    for (const each of chains) c.submit(each);
    expect(sent.map((s) => s.channel)).toEqual([0, 1]);
    expect(c.queued).toBe(4);
    c.reply(1, chains[1]!.entry.id, ReplyKey.answer);
    // Its share of the queue over both workers: 2 of 4.
    expect(sent.slice(2).map((s) => [s.channel, s.id])).toEqual([
      [1, chains[2]!.entry.id],
      [1, chains[3]!.entry.id],
    ]);
    expect(c.queued).toBe(2);
  });

  test("a chain the worker did not start goes again first, to the next free worker", () => {
    const { c, sent } = channels(1);
    const [a, b, d] = [chain(), chain(), chain()];
    c.submit(a);
    c.submit(b);
    c.submit(d);
    c.reply(0, a.entry.id, ReplyKey.answer); // b and d go as one batch
    expect(sent.slice(1).map((s) => s.id)).toEqual([b.entry.id, d.entry.id]);
    c.reply(0, b.entry.id, ReplyKey.answer);
    expect(c.reply(0, d.entry.id, ReplyKey.notStarted)).toEqual({ kind: "again" });
    expect(sent.at(-1)).toEqual({ channel: 0, id: d.entry.id, withPlan: false });
  });

  test("a worker that dropped a plan gets it again with the chain; a miss of a chain that carried its plan is a protocol error", () => {
    const { c, sent } = channels(1);
    const a = chain();
    c.submit(a);
    c.reply(0, a.entry.id, ReplyKey.answer);
    const b = channelChain({ ...pendingChain(["sha256:a"]), plan: a.entry.plan }, "{}");
    c.submit(b);
    expect(sent[1]!.withPlan).toBe(false);
    expect(c.reply(0, b.entry.id, ReplyKey.planMiss)).toEqual({ kind: "again" });
    expect(sent[2]).toEqual({ channel: 0, id: b.entry.id, withPlan: true });
    expect(c.reply(0, b.entry.id, ReplyKey.planMiss)).toEqual({ kind: "protocol", detail: expect.stringMatching(/missed the plan its chain/) });
  });

  test("a reply for a chain the channel is not running, twice, or with an unknown key is a protocol error", () => {
    const { c } = channels(2);
    const a = chain();
    c.submit(a);
    expect(c.reply(1, a.entry.id, ReplyKey.answer)).toEqual({ kind: "protocol", detail: expect.stringMatching(/which that worker was not running/) });
    expect(c.reply(0, a.entry.id, 7)).toEqual({ kind: "protocol", detail: expect.stringMatching(/unknown reply key 7/) });
    expect(c.reply(0, a.entry.id, ReplyKey.answer).kind).toBe("answer");
    expect(c.reply(0, a.entry.id, ReplyKey.answer).kind).toBe("protocol");
    expect(c.reply(5, a.entry.id, ReplyKey.answer).kind).toBe("protocol");
  });

  test("a plan key the supervisor evicted is sent with its hook list again", () => {
    const { c, sent } = channels(1);
    const a = chain();
    c.submit(a);
    c.reply(0, a.entry.id, ReplyKey.answer);
    c.forget([a.entry.plan.key]);
    const b = channelChain({ ...pendingChain(["sha256:a"]), plan: a.entry.plan }, "{}");
    c.submit(b);
    expect(sent[1]).toEqual({ channel: 0, id: b.entry.id, withPlan: true });
  });

  test("a chain that could not be sent frees its worker for the next one", () => {
    const { c, sent } = channels(1, (each) => each.payload === "unsendable");
    const bad = chain(["sha256:a"], "unsendable");
    const good = chain();
    c.submit(bad);
    c.submit(good);
    expect(sent.map((s) => s.id)).toEqual([good.entry.id]);
  });

  test("a batch's size counts each chain's request and one-action input", () => {
    const half = Math.floor(BATCH_MAX_CHARS / 2);
    const invoke = { ...pendingChain(["sha256:a"]), invoke: { inputJson: "i".repeat(half), budgetMs: 10 } };
    expect(channelChain(invoke, "x".repeat(half)).chars).toBe(2 * half);
    const { c, sent } = channels(1);
    const gate = chain();
    c.submit(gate);
    c.submit(channelChain(invoke, "x".repeat(half)));
    c.submit(chain(["sha256:a"], "y".repeat(10)));
    c.reply(0, gate.entry.id, ReplyKey.answer);
    // The large one-action chain goes alone: with the next one the batch would pass BATCH_MAX_CHARS.
    expect(sent.slice(1).map((s) => s.id)).toEqual([invoke.id]);
  });
});
