import { Socket } from "node:net";
import type { Writable } from "node:stream";
import { VcpError } from "../errors.js";

/**
 * The framed byte channels between the supervisor and the sandbox host (DESIGN §4.1): socketpairs
 * that carry every chain, call and reply once the host is ready — the host's fd 4 to its main thread
 * (calls: load, unload, close) and one per worker thread (fd 5, 6, …: chains; protocol.ts). The Node
 * IPC channel is kept for `init`/`ready` and for its disconnect semantics only.
 *
 * A frame is a fixed header and an opaque body. JSON is made once at the sending end and parsed once
 * at the receiving end. A worker decodes a chain frame's sections to strings and writes its reply text
 * behind a header of its own.
 *
 * ```
 *  offset  size  field
 *   0      u32   length of the rest of the frame (header after this field + body), little-endian
 *   4      u8    kind: 1 chain (→ a worker), 2 call (→ the host's main thread), 3 reply (→ supervisor)
 *   5      u8    FRAME_MAGIC (protocol version); a different byte is corruption
 *   6      u16   0
 *   8      f64   id: supervisor task id (a safe integer ≥ 0)
 *  16      u32   key: plan key of a chain frame; a worker's reply: protocol.ts ReplyKey; else 0
 *  20      u32   plan section bytes (chain: the hook list as JSON, when this frame carries it)
 *  24      u32   quarantine section bytes (chain: quarantined digests as a JSON array)
 *  28      u32   invoke section bytes (chain: a one-action task's `<budgetMs>\n<inputJson>`)
 *  32      body  plan · quarantine · invoke sections · payload (chain: the ChainRequest as JSON;
 *                call: the call as JSON; reply: { ok, value | error, logs? } as JSON)
 * ```
 *
 * SECURITY: the length is checked against the frame limit before a byte is buffered for the frame,
 * and the header is checked (magic, reserved bytes, kind, section lengths) as soon as its 32 bytes
 * are in: a corrupt or truncated stream is a protocol error the receiver acts on at once (the
 * supervisor kills and restarts the host; the host exits; a worker closes its channel, for which the
 * supervisor kills the host), never a wait for bytes that do not come.
 */

export const FRAME_HEADER_BYTES = 32;
/** Protocol version byte: a frame written by another version of this module is refused. */
export const FRAME_MAGIC = 0xc1;
/** Default frame limit, bytes (sandbox option `frameBytes`): far above a chain at the default input and result limits. */
export const DEFAULT_FRAME_BYTES = 64 * 1024 * 1024;
/** Smallest allowed frame limit: room for a header, a bundle load call and an error reply. */
export const MIN_FRAME_BYTES = 4096;
/** Largest allowed frame limit: the u32 length field. */
export const MAX_FRAME_BYTES = 0xffff_ffff;

export const FrameKind = { chain: 1, call: 2, reply: 3 } as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

/** Exit code of a sandbox host that received a corrupt frame (EX_PROTOCOL). */
export const HOST_EXIT_PROTOCOL = 76;

export interface FrameHeader {
  kind: FrameKind;
  id: number;
  key: number;
  planBytes: number;
  quarantineBytes: number;
  invokeBytes: number;
  /** Whole frame, header included. */
  bytes: number;
}

/** Sections of a frame body, as text; absent sections are empty. */
export interface FrameTexts {
  plan?: string;
  quarantine?: string;
  invoke?: string;
  payload: string;
}

/**
 * A frame in a buffer of its own (exact size, not from Node's shared pool), so it can be transferred to
 * another thread. Throws SANDBOX_FRAME_TOO_LARGE naming `limit` before allocating when it would be larger.
 *
 * @example
 * ```ts
 * const frame = encodeFrame(FrameKind.reply, 7, 0, { payload: '{"ok":true,"value":null}' }, DEFAULT_FRAME_BYTES, "reply");
 * ```
 */
export function encodeFrame(kind: FrameKind, id: number, key: number, texts: FrameTexts, limit: number, what: string): Uint8Array {
  const sizes = measureFrame(texts, limit, what);
  const frame = Buffer.allocUnsafeSlow(sizes.bytes);
  fillFrame(frame, kind, id, key, texts, sizes);
  return frame;
}

interface FrameSizes {
  planBytes: number;
  quarantineBytes: number;
  invokeBytes: number;
  /** The whole frame, header included. */
  bytes: number;
}

/** The UTF-8 sizes of a frame's sections; throws SANDBOX_FRAME_TOO_LARGE naming `limit` when it would be larger. */
function measureFrame(texts: FrameTexts, limit: number, what: string): FrameSizes {
  const planBytes = texts.plan !== undefined ? Buffer.byteLength(texts.plan, "utf8") : 0;
  const quarantineBytes = texts.quarantine !== undefined ? Buffer.byteLength(texts.quarantine, "utf8") : 0;
  const invokeBytes = texts.invoke !== undefined ? Buffer.byteLength(texts.invoke, "utf8") : 0;
  const bytes = FRAME_HEADER_BYTES + planBytes + quarantineBytes + invokeBytes + Buffer.byteLength(texts.payload, "utf8");
  // SECURITY: the limit applies before any buffer exists or anything is written; the receiver would refuse the frame anyway.
  if (bytes > limit) throw frameTooLarge(bytes, limit, what);
  return { planBytes, quarantineBytes, invokeBytes, bytes };
}

/** Header and sections into `frame`, which is exactly `sizes.bytes` long. */
function fillFrame(frame: Buffer, kind: FrameKind, id: number, key: number, texts: FrameTexts, sizes: FrameSizes): void {
  writeHeader(frame, kind, id, key, sizes.planBytes, sizes.quarantineBytes, sizes.invokeBytes, sizes.bytes);
  let at = FRAME_HEADER_BYTES;
  if (texts.plan !== undefined) at += frame.write(texts.plan, at, "utf8");
  if (texts.quarantine !== undefined) at += frame.write(texts.quarantine, at, "utf8");
  if (texts.invoke !== undefined) at += frame.write(texts.invoke, at, "utf8");
  frame.write(texts.payload, at, "utf8");
}

function writeHeader(frame: Buffer, kind: FrameKind, id: number, key: number, planBytes: number, quarantineBytes: number, invokeBytes: number, bytes: number): void {
  frame.writeUInt32LE(bytes - 4, 0);
  frame[4] = kind;
  frame[5] = FRAME_MAGIC;
  frame.writeUInt16LE(0, 6);
  frame.writeDoubleLE(id, 8);
  frame.writeUInt32LE(key, 16);
  frame.writeUInt32LE(planBytes, 20);
  frame.writeUInt32LE(quarantineBytes, 24);
  frame.writeUInt32LE(invokeBytes, 28);
}

/**
 * The header of a whole frame (as {@link FrameReader} hands it out, or as a worker receives it), or a
 * description of what is wrong with it.
 */
export function readHeader(frame: Uint8Array, accepts: ReadonlySet<FrameKind>): FrameHeader | string {
  if (frame.length < FRAME_HEADER_BYTES) return `a frame of ${frame.length} bytes is shorter than its header`;
  return parseHeader(asBuffer(frame), 0, accepts);
}

/** The header starting at `buf[at]` (32 bytes of it are there), or what is wrong with it. Reads the bytes in place. */
function parseHeader(buf: Buffer, at: number, accepts: ReadonlySet<FrameKind>): FrameHeader | string {
  const bytes = buf.readUInt32LE(at) + 4;
  const kind = buf[at + 4] as FrameKind;
  if (buf[at + 5] !== FRAME_MAGIC || buf.readUInt16LE(at + 6) !== 0) return "bad magic or reserved bytes in a frame header";
  if (!accepts.has(kind)) return `unexpected frame kind ${kind}`;
  const id = buf.readDoubleLE(at + 8);
  if (!Number.isSafeInteger(id) || id < 0) return "a frame id that is not a non-negative integer";
  const planBytes = buf.readUInt32LE(at + 20);
  const quarantineBytes = buf.readUInt32LE(at + 24);
  const invokeBytes = buf.readUInt32LE(at + 28);
  if (bytes < FRAME_HEADER_BYTES || FRAME_HEADER_BYTES + planBytes + quarantineBytes + invokeBytes > bytes) return "frame sections larger than the frame";
  return { kind, id, key: buf.readUInt32LE(at + 16), planBytes, quarantineBytes, invokeBytes, bytes };
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** UTF-8 text of `frame[start, end)`, decoded in place (no view or copy of the bytes first). */
export function frameText(frame: Uint8Array, start: number, end: number): string {
  return asBuffer(frame).toString("utf8", start, end);
}

/** The four sections of a frame's body as byte offsets into the frame. */
export function sections(header: FrameHeader): { plan: [number, number]; quarantine: [number, number]; invoke: [number, number]; payload: [number, number] } {
  const planEnd = FRAME_HEADER_BYTES + header.planBytes;
  const quarantineEnd = planEnd + header.quarantineBytes;
  const invokeEnd = quarantineEnd + header.invokeBytes;
  return { plan: [FRAME_HEADER_BYTES, planEnd], quarantine: [planEnd, quarantineEnd], invoke: [quarantineEnd, invokeEnd], payload: [invokeEnd, header.bytes] };
}

/**
 * The text of each section a frame carries (empty sections are absent), decoded straight from the frame:
 * what the host's main thread hands a worker, with no offsets or views allocated on the way.
 */
export function frameTexts(frame: Uint8Array, header: FrameHeader): FrameTexts {
  const buf = asBuffer(frame);
  const planEnd = FRAME_HEADER_BYTES + header.planBytes;
  const quarantineEnd = planEnd + header.quarantineBytes;
  const invokeEnd = quarantineEnd + header.invokeBytes;
  const texts: FrameTexts = { payload: buf.toString("utf8", invokeEnd, header.bytes) };
  if (header.planBytes > 0) texts.plan = buf.toString("utf8", FRAME_HEADER_BYTES, planEnd);
  if (header.quarantineBytes > 0) texts.quarantine = buf.toString("utf8", planEnd, quarantineEnd);
  if (header.invokeBytes > 0) texts.invoke = buf.toString("utf8", quarantineEnd, invokeEnd);
  return texts;
}

export function frameTooLarge(bytes: number, limit: number, what: string): VcpError {
  return new VcpError("SANDBOX_FRAME_TOO_LARGE", `the ${what} is ${bytes} bytes as a sandbox frame, above the frame limit of ${limit} bytes (sandbox frameBytes)`, {
    limit,
    bytes,
    frame: what,
  });
}

export function protocolError(detail: string): VcpError {
  return new VcpError("SANDBOX_PROTOCOL_ERROR", `corrupt sandbox frame stream: ${detail}`, { detail });
}

/**
 * Splits a byte stream into frames. Frames lying inside one chunk are handed out as views of it
 * (`owned` false: valid only during the call); a frame spanning chunks is assembled into a buffer of
 * its own (`owned` true). The reader keeps no reference to a chunk after {@link push} returns (the bytes
 * of an unfinished frame are copied out), so the caller may read the next chunk into the same buffer
 * (a socket's `onread` buffer: no allocation per read). After the first error nothing more is read: the
 * stream cannot be trusted.
 */
export class FrameReader {
  /**
   * The unfinished frame: while fewer than its 32 header bytes are in, a header-sized buffer; once the
   * header is in and checked, a buffer of the whole frame (its length was checked against the limit first).
   */
  private partial: Buffer | undefined;
  /** Bytes of `partial` filled. */
  private filled = 0;
  /** The unfinished frame's header, once checked. */
  private header: FrameHeader | undefined;
  private failed = false;

  constructor(
    private readonly limit: number,
    private readonly accepts: ReadonlySet<FrameKind>,
    private readonly onFrame: (frame: Uint8Array, header: FrameHeader, owned: boolean) => void,
    private readonly onError: (err: VcpError) => void,
  ) {}

  /** The next `length` bytes of the stream, in `chunk[0, length)` (default: all of it). */
  push(bytes: Uint8Array, length = bytes.length): void {
    const chunk = asBuffer(bytes);
    let at = 0;
    if (this.partial !== undefined) at = this.fillPartial(chunk, 0, length);
    while (!this.failed && this.partial === undefined && at < length) {
      const left = length - at;
      if (left < FRAME_HEADER_BYTES) {
        // Too little to check the header: keep the bytes (checking the length as soon as it is here).
        this.startPartial(chunk, at, length);
        return;
      }
      const header = this.check(chunk, at);
      if (header === undefined) return;
      if (left < header.bytes) {
        this.startPartial(chunk, at, length);
        return;
      }
      this.onFrame(chunk.subarray(at, at + header.bytes), header, false);
      at += header.bytes;
    }
  }

  /** The stream ended: bytes of an unfinished frame mean it was cut off. */
  end(): void {
    if (!this.failed && this.filled > 0) this.fail(protocolError(`the stream ended inside a frame (${this.filled} bytes of it received)`));
  }

  /** Bytes buffered for a frame not yet complete. */
  get pending(): number {
    return this.filled;
  }

  /**
   * The frame length at `buf[at]` (4 bytes are there) is within the limit and can hold a header; else the
   * stream fails. SECURITY: checked before anything is kept or allocated for the frame.
   */
  private lengthOk(buf: Buffer, at: number): boolean {
    const bytes = buf.readUInt32LE(at) + 4;
    if (bytes > this.limit) this.fail(frameTooLarge(bytes, this.limit, "incoming frame"));
    else if (bytes < FRAME_HEADER_BYTES) this.fail(protocolError(`a frame length of ${bytes} bytes is shorter than the header`));
    return !this.failed;
  }

  /** The header at `buf[at]` (32 bytes are there), checked; undefined after failing the stream. */
  private check(buf: Buffer, at: number): FrameHeader | undefined {
    if (!this.lengthOk(buf, at)) return undefined;
    // The header alone, as soon as it is here: garbage is refused without waiting for its "body".
    const header = parseHeader(buf, at, this.accepts);
    if (typeof header === "string") {
      this.fail(protocolError(header));
      return undefined;
    }
    return header;
  }

  /** Keeps `chunk[at, end)`, the start of a frame not complete in this chunk. */
  private startPartial(chunk: Buffer, at: number, end: number): void {
    if (end - at >= 4 && !this.lengthOk(chunk, at)) return;
    if (end - at >= FRAME_HEADER_BYTES) {
      this.header = this.check(chunk, at);
      if (this.header === undefined) return;
      this.partial = Buffer.allocUnsafeSlow(this.header.bytes);
    } else {
      this.partial = Buffer.allocUnsafeSlow(FRAME_HEADER_BYTES);
    }
    this.filled = chunk.copy(this.partial, 0, at, end);
  }

  /** Continues the unfinished frame with `chunk[at, end)`; returns where the bytes after it start. */
  private fillPartial(chunk: Buffer, at: number, end: number): number {
    while (!this.failed && this.partial !== undefined && at < end) {
      const partial = this.partial;
      const hadLength = this.filled >= 4;
      const take = Math.min(partial.length - this.filled, end - at);
      chunk.copy(partial, this.filled, at, at + take);
      this.filled += take;
      at += take;
      if (this.header === undefined) {
        if (!hadLength && this.filled >= 4 && !this.lengthOk(partial, 0)) return end;
        if (this.filled < FRAME_HEADER_BYTES) continue;
        const header = this.check(partial, 0);
        if (header === undefined) return end;
        this.header = header;
        if (header.bytes > FRAME_HEADER_BYTES) {
          const whole = Buffer.allocUnsafeSlow(header.bytes);
          partial.copy(whole, 0, 0, FRAME_HEADER_BYTES);
          this.partial = whole;
          continue;
        }
      }
      if (this.filled === this.partial.length) {
        const frame = this.partial;
        const header = this.header;
        this.partial = undefined;
        this.header = undefined;
        this.filled = 0;
        this.onFrame(frame, header, true);
      }
    }
    return at;
  }

  private fail(err: VcpError): void {
    this.failed = true;
    this.partial = undefined;
    this.header = undefined;
    this.filled = 0;
    this.onError(err);
  }
}

/**
 * Writes frames to a stream. A frame under {@link POOLED_FRAME_BYTES} is encoded into one buffer from
 * Node's shared pool (one chunk for the stream to carry: the common reply or chain frame); a larger one
 * goes as a 32-byte header and its sections as strings, encoded to UTF-8 once, by the stream's writev,
 * straight into the socket write. Every frame written before the event loop's check phase leaves in one
 * `writev` (one syscall under load instead of one per frame; at once when idle).
 */
/**
 * Frames smaller than this are written as one pooled buffer: Node's `Buffer.allocUnsafe` takes a slice of
 * its shared 8 KiB pool below 4 KiB and allocates a buffer of its own (off-heap, freed by GC) above.
 */
export const POOLED_FRAME_BYTES = 4096;

export class FrameWriter {
  private corked = false;

  /** `undefined`: a channel that never opened (a failed spawn); writes go nowhere. */
  constructor(private readonly stream: Writable | undefined) {}

  /**
   * Queue one frame. Throws SANDBOX_FRAME_TOO_LARGE naming `limit` (nothing written) when it would be
   * larger. `done`: flush now and call back once the bytes are with the operating system.
   */
  write(kind: FrameKind, id: number, key: number, texts: FrameTexts, limit: number, what: string, done?: () => void): void {
    const sizes = measureFrame(texts, limit, what);
    const stream = this.stream;
    if (stream === undefined || stream.destroyed || stream.writableEnded) {
      // The peer is gone; its exit is handled elsewhere.
      done?.();
      return;
    }
    if (!this.corked) {
      this.corked = true;
      stream.cork();
      setImmediate(this.flush);
    }
    const callback = done !== undefined ? () => done() : undefined;
    if (sizes.bytes < POOLED_FRAME_BYTES) {
      // From Node's shared pool: the frame is only written, never transferred.
      const frame = Buffer.allocUnsafe(sizes.bytes);
      fillFrame(frame, kind, id, key, texts, sizes);
      stream.write(frame, callback);
    } else {
      const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
      writeHeader(header, kind, id, key, sizes.planBytes, sizes.quarantineBytes, sizes.invokeBytes, sizes.bytes);
      stream.write(header);
      if (texts.plan !== undefined) stream.write(texts.plan, "utf8");
      if (texts.quarantine !== undefined) stream.write(texts.quarantine, "utf8");
      if (texts.invoke !== undefined) stream.write(texts.invoke, "utf8");
      stream.write(texts.payload, "utf8", callback);
    }
    if (done !== undefined) this.flush();
  }

  private readonly flush = (): void => {
    if (!this.corked) return;
    this.corked = false;
    this.stream?.uncork();
  };
}

/**
 * Bytes read from a frame channel per read. Reads land in one buffer per channel, reused (the
 * FrameReader copies out the bytes of a frame a read leaves unfinished): no Buffer, no stream
 * bookkeeping and no event per read on the thread, where every allocation adds to the scavenges
 * chains wait behind.
 */
const READ_BUFFER_BYTES = 64 * 1024;

/**
 * The sandbox host's end of a frame channel (its fd 4, or a worker's channel): a socket on `fd` whose
 * reads go to `reader`, for writing through a {@link FrameWriter}.
 */
export function openFrameChannel(fd: number, reader: FrameReader): Socket {
  return new Socket({
    fd,
    readable: true,
    writable: true,
    onread: {
      buffer: Buffer.allocUnsafeSlow(READ_BUFFER_BYTES),
      callback: (bytes, buffer) => {
        reader.push(buffer, bytes);
        return true; // keep reading
      },
    },
  });
}
