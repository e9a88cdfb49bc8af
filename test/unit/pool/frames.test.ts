import { Writable } from "node:stream";
import { describe, expect, test } from "vitest";
import { VcpError } from "../../../src/errors.js";
import {
  encodeFrame,
  FRAME_HEADER_BYTES,
  FrameKind,
  FrameReader,
  frameText,
  FrameWriter,
  POOLED_FRAME_BYTES,
  readHeader,
  sections,
  type FrameHeader,
} from "../../../src/pool/frames.js";

const LIMIT = 64 * 1024;
const CHAINS = new Set<FrameKind>([FrameKind.chain, FrameKind.call]);

function reader(limit = LIMIT): { r: FrameReader; frames: { header: FrameHeader; texts: string[]; owned: boolean }[]; errors: VcpError[] } {
  const frames: { header: FrameHeader; texts: string[]; owned: boolean }[] = [];
  const errors: VcpError[] = [];
  const r = new FrameReader(
    limit,
    CHAINS,
    (frame, header, owned) => {
      const at = sections(header);
      frames.push({ header, owned, texts: [at.plan, at.quarantine, at.payload].map(([a, b]) => frameText(frame, a, b)) });
    },
    (err) => errors.push(err),
  );
  return { r, frames, errors };
}

function chainFrame(id: number, payload: string, plan?: string, quarantine?: string): Buffer {
  return Buffer.from(encodeFrame(FrameKind.chain, id, 7, { plan, quarantine, payload }, LIMIT, "chain request"));
}

describe("frames: encoding", () => {
  test("a frame carries its id, key and three sections, UTF-8 intact", () => {
    const frame = encodeFrame(FrameKind.chain, 42, 9, { plan: '{"hooks":[]}', quarantine: '["sha256:ab"]', payload: '{"note":"naïve ☃"}' }, LIMIT, "chain request");
    const header = readHeader(frame, CHAINS) as FrameHeader;
    expect(header).toMatchObject({ kind: FrameKind.chain, id: 42, key: 9, bytes: frame.length });
    const at = sections(header);
    expect(frameText(frame, ...at.plan)).toBe('{"hooks":[]}');
    expect(frameText(frame, ...at.quarantine)).toBe('["sha256:ab"]');
    expect(JSON.parse(frameText(frame, ...at.payload))).toEqual({ note: "naïve ☃" });
  });

  test("a one-action task's invoke section sits between the quarantine section and the payload", () => {
    const frame = encodeFrame(FrameKind.chain, 1, 2, { quarantine: "[]", invoke: '250\n{"tool":"rm"}', payload: "{}" }, LIMIT, "chain request");
    const header = readHeader(frame, CHAINS) as FrameHeader;
    const at = sections(header);
    expect([at.quarantine, at.invoke, at.payload].map(([a, b]) => frameText(frame, a, b))).toEqual(["[]", '250\n{"tool":"rm"}', "{}"]);
  });

  test("a frame is its own buffer, so it can be transferred to a worker", () => {
    const frame = encodeFrame(FrameKind.reply, 1, 0, { payload: "{}" }, LIMIT, "reply");
    expect(frame.byteOffset).toBe(0);
    expect(frame.buffer.byteLength).toBe(frame.length);
  });

  test("a frame over the limit is refused with a coded error naming the limit", () => {
    const big = "x".repeat(LIMIT);
    let error: unknown;
    try {
      encodeFrame(FrameKind.chain, 1, 1, { payload: big }, LIMIT, "chain request");
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(VcpError);
    expect(error).toMatchObject({ code: "SANDBOX_FRAME_TOO_LARGE", details: { limit: LIMIT, bytes: LIMIT + FRAME_HEADER_BYTES, frame: "chain request" } });
    expect((error as Error).message).toMatch(`frame limit of ${LIMIT} bytes`);
  });
});

describe("frames: reading a byte stream", () => {
  test("frames split at every byte boundary come out whole and in order", () => {
    const stream = Buffer.concat([chainFrame(1, '{"a":1}', '{"p":true}'), chainFrame(2, '{"b":"ü"}', undefined, '["d"]'), chainFrame(3, "[]")]);
    for (let cut = 1; cut < stream.length; cut += 3) {
      const { r, frames, errors } = reader();
      r.push(stream.subarray(0, cut));
      r.push(stream.subarray(cut));
      expect(errors).toEqual([]);
      expect(frames.map((f) => [f.header.id, ...f.texts])).toEqual([
        [1, '{"p":true}', "", '{"a":1}'],
        [2, "", '["d"]', '{"b":"ü"}'],
        [3, "", "", "[]"],
      ]);
    }
  });

  test("one byte at a time works too; a frame assembled from pieces is handed over as its own buffer", () => {
    const { r, frames } = reader();
    const one = chainFrame(5, '{"x":[1,2,3]}');
    for (const byte of one) r.push(Buffer.from([byte]));
    expect(frames).toHaveLength(1);
    expect(frames[0]).toMatchObject({ owned: true, texts: ["", "", '{"x":[1,2,3]}'] });
    expect(r.pending).toBe(0);
  });

  test("chunks read into one reused buffer: a frame left unfinished by a read is copied out, never read from the overwritten buffer", () => {
    const { r, frames, errors } = reader();
    const stream = Buffer.concat([chainFrame(1, '{"a":"' + "é".repeat(300) + '"}', '{"p":1}'), chainFrame(2, "{}"), chainFrame(3, '{"c":3}', undefined, '["q"]')]);
    const readBuffer = Buffer.alloc(7); // as a socket's onread buffer: every read overwrites it
    for (let at = 0; at < stream.length; at += readBuffer.length) {
      const n = stream.copy(readBuffer, 0, at, Math.min(at + readBuffer.length, stream.length));
      r.push(readBuffer, n);
      readBuffer.fill(0xff); // what the next read would do to bytes the reader kept a reference to
    }
    expect(errors).toEqual([]);
    expect(frames.map((f) => [f.header.id, ...f.texts])).toEqual([
      [1, '{"p":1}', "", '{"a":"' + "é".repeat(300) + '"}'],
      [2, "", "", "{}"],
      [3, "", '["q"]', '{"c":3}'],
    ]);
    expect(r.pending).toBe(0);
  });

  test("a length over the limit is refused from its first 4 bytes, before anything is buffered for the body", () => {
    const { r, frames, errors } = reader(8192);
    const length = Buffer.alloc(4);
    length.writeUInt32LE(0xfffffff0, 0); // ≈ 4 GiB announced
    r.push(length);
    expect(frames).toEqual([]);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ code: "SANDBOX_FRAME_TOO_LARGE", details: { limit: 8192 } });
    expect(errors[0]!.message).toMatch("frame limit of 8192 bytes");
    expect(r.pending).toBe(0);
  });

  test("a corrupt header is a protocol error as soon as its 32 bytes are in, without waiting for the announced body", () => {
    const { r, frames, errors } = reader();
    const frame = chainFrame(1, '{"a":1}');
    frame[5] = 0x00; // the magic byte
    r.push(frame.subarray(0, FRAME_HEADER_BYTES));
    expect(frames).toEqual([]);
    expect(errors).toEqual([expect.objectContaining({ code: "SANDBOX_PROTOCOL_ERROR" })]);
  });

  test("garbage, a kind this side does not accept and sections larger than the frame are protocol errors", () => {
    const garbage = reader();
    const junk = Buffer.from("....this is not a frame stream at all, not even close");
    junk.writeUInt32LE(junk.length - 4, 0); // a plausible length, then junk
    garbage.r.push(junk);
    expect(garbage.errors.map((e) => e.code)).toEqual(["SANDBOX_PROTOCOL_ERROR"]);
    const text = reader();
    text.r.push(Buffer.from("GET / HTTP/1.1\r\n")); // read as a length: far over the limit
    expect(text.errors.map((e) => e.code)).toEqual(["SANDBOX_FRAME_TOO_LARGE"]);

    const wrongKind = reader();
    wrongKind.r.push(Buffer.from(encodeFrame(FrameKind.reply, 1, 0, { payload: "{}" }, LIMIT, "reply")));
    expect(wrongKind.errors[0]?.message).toMatch("unexpected frame kind 3");

    const sectionsTooLong = reader();
    const frame = chainFrame(1, "{}");
    frame.writeUInt32LE(1000, 20); // plan section bytes
    sectionsTooLong.r.push(frame);
    expect(sectionsTooLong.errors[0]?.message).toMatch("sections larger than the frame");
  });

  test("a stream that ends inside a frame is a protocol error; after an error nothing more is read", () => {
    const { r, frames, errors } = reader();
    const frame = chainFrame(1, '{"a":1}');
    r.push(frame.subarray(0, frame.length - 2));
    r.end();
    expect(errors).toEqual([expect.objectContaining({ code: "SANDBOX_PROTOCOL_ERROR", message: expect.stringMatching(/ended inside a frame/) })]);
    r.push(chainFrame(2, "{}"));
    expect(frames).toEqual([]);
    expect(errors).toHaveLength(1);
  });

  test("a truncated frame followed by the next one shows as corruption, not a wait", () => {
    const { r, frames, errors } = reader();
    const cut = chainFrame(1, '{"long":"' + "y".repeat(100) + '"}').subarray(0, 60);
    // The announced length swallows the next frame's bytes; the one after starts mid-frame.
    r.push(Buffer.concat([cut, ...[2, 3, 4, 5, 6, 7].map((id) => chainFrame(id, "{}"))]));
    expect(errors.map((e) => e.code)).toEqual(["SANDBOX_PROTOCOL_ERROR"]);
    expect(frames.map((f) => f.header.id)).toEqual([1]); // the cut frame "completed" with foreign bytes…
    expect(() => JSON.parse(frames[0]!.texts[2]!)).toThrow(); // …whose body does not parse (the receiver's protocol error)
  });
});

describe("frames: writing", () => {
  function sink(): { stream: Writable; writes: number[]; bytes: Buffer[] } {
    const writes: number[] = [];
    const bytes: Buffer[] = [];
    const stream = new Writable({
      decodeStrings: true,
      write(chunk: Buffer, _encoding, done) {
        writes.push(1);
        bytes.push(chunk);
        done();
      },
      writev(chunks, done) {
        writes.push(chunks.length);
        for (const { chunk } of chunks) bytes.push(chunk as Buffer);
        done();
      },
    });
    return { stream, writes, bytes };
  }

  test("what the writer writes is what the reader reads: header, sections and UTF-8 text", async () => {
    const out = sink();
    const writer = new FrameWriter(out.stream);
    writer.write(FrameKind.chain, 3, 11, { plan: '{"hooks":["ü"]}', quarantine: '["d"]', payload: '{"x":"☃"}' }, LIMIT, "chain request");
    writer.write(FrameKind.call, 4, 0, { payload: '{"t":"close","id":4}' }, LIMIT, "close call");
    await new Promise((r) => setImmediate(r));
    const { r, frames, errors } = reader();
    r.push(Buffer.concat(out.bytes));
    expect(errors).toEqual([]);
    expect(frames.map((f) => [f.header.kind, f.header.id, f.header.key, ...f.texts])).toEqual([
      [FrameKind.chain, 3, 11, '{"hooks":["ü"]}', '["d"]', '{"x":"☃"}'],
      [FrameKind.call, 4, 0, "", "", '{"t":"close","id":4}'],
    ]);
  });

  test("frames written in one event-loop turn leave in one writev", async () => {
    const out = sink();
    const writer = new FrameWriter(out.stream);
    for (let i = 1; i <= 5; i++) writer.write(FrameKind.reply, i, 0, { payload: "{}" }, LIMIT, "reply");
    expect(out.writes).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(out.writes).toEqual([5]); // 5 small frames, one buffer each
    writer.write(FrameKind.reply, 6, 0, { payload: "{}" }, LIMIT, "reply");
    await new Promise((r) => setImmediate(r));
    expect(out.writes).toEqual([5, 1]);
  });

  test("a frame over the limit is refused before anything is written, naming the limit", async () => {
    const out = sink();
    const writer = new FrameWriter(out.stream);
    expect(() => writer.write(FrameKind.chain, 1, 1, { plan: "p".repeat(LIMIT / 2), payload: "x".repeat(LIMIT / 2) }, LIMIT, "chain request")).toThrow(
      expect.objectContaining({ code: "SANDBOX_FRAME_TOO_LARGE", details: expect.objectContaining({ limit: LIMIT, frame: "chain request" }) }),
    );
    await new Promise((r) => setImmediate(r));
    expect(out.bytes).toEqual([]);
  });

  test("a frame at or above the pooled size goes as its header and sections; it reads back the same", async () => {
    const out = sink();
    const writer = new FrameWriter(out.stream);
    const big = '{"x":"' + "ü".repeat(POOLED_FRAME_BYTES) + '"}';
    writer.write(FrameKind.chain, 8, 2, { plan: "[1]", payload: big }, LIMIT, "chain request");
    writer.write(FrameKind.chain, 9, 2, { payload: "{}" }, LIMIT, "chain request");
    await new Promise((r) => setImmediate(r));
    expect(out.writes).toEqual([4]); // header, plan, payload; then the small frame as one buffer
    const { r, frames, errors } = reader();
    r.push(Buffer.concat(out.bytes));
    expect(errors).toEqual([]);
    expect(frames.map((f) => [f.header.id, ...f.texts])).toEqual([
      [8, "[1]", "", big],
      [9, "", "", "{}"],
    ]);
  });

  test("a write with a callback flushes at once and calls back once the bytes are written", async () => {
    const out = sink();
    const writer = new FrameWriter(out.stream);
    writer.write(FrameKind.reply, 1, 0, { payload: "{}" }, LIMIT, "reply");
    await new Promise<void>((resolve) => writer.write(FrameKind.reply, 2, 0, { payload: "{}" }, LIMIT, "reply", resolve));
    const { r, frames } = reader(LIMIT);
    const all = Buffer.concat(out.bytes);
    all[4] = FrameKind.call; // this test reader accepts chain and call frames
    all[4 + 34] = FrameKind.call;
    r.push(all);
    expect(frames.map((f) => f.header.id)).toEqual([1, 2]);
  });
});
