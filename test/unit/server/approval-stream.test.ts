// The approval stream's per-client buffer (src/server/approval-routes.ts boundedWriter): a reader
// that stops reading gets at most `bufferEvents` queued events, then its stream is ended.
import { EventEmitter } from "node:events";
import { describe, expect, test } from "vitest";
import { boundedWriter } from "../../../src/server/approval-routes.js";

class SlowSocket extends EventEmitter {
  written: string[] = [];
  writableEnded = false;
  accepting = true;
  write(chunk: string): boolean {
    this.written.push(chunk);
    return this.accepting;
  }
}

describe("approval stream buffer", () => {
  test("while the socket does not drain, events queue up to the bound, in order; one more ends the stream", () => {
    const socket = new SlowSocket();
    let overflowed = 0;
    const out = boundedWriter(socket, 3, () => overflowed++);
    out.write("a");
    socket.accepting = false;
    out.write("b"); // accepted by the socket, which now reports back-pressure
    expect(out.blocked).toBe(true);
    out.write("c");
    out.write("d");
    out.write("e");
    expect(out.queued).toBe(3);
    expect(overflowed).toBe(0);
    out.write("f");
    expect(overflowed).toBe(1);
    expect(out.queued).toBe(0);
    expect(socket.written).toEqual(["a", "b"]);
  });

  test("on drain the queue is written in order", () => {
    const socket = new SlowSocket();
    const out = boundedWriter(socket, 10, () => { throw new Error("no overflow expected"); });
    socket.accepting = false;
    out.write("1");
    out.write("2");
    out.write("3");
    socket.accepting = true;
    socket.emit("drain");
    expect(out.blocked).toBe(false);
    expect(socket.written).toEqual(["1", "2", "3"]);
  });
});
