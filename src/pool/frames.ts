import type { Writable } from "node:stream";
import { VcpError } from "../errors.js";

/**
 * The framed byte channel between the supervisor and the sandbox host (DESIGN §4.1): one extra
 * socketpair (the child's fd 4) that carries every chain, call and reply once the host is ready. The
 * Node IPC channel is kept for `init`/`ready` and for its disconnect semantics only.
 *
 * A frame is a fixed header and an opaque body. The host's main thread routes a frame by its header
 * and never parses the body: it decodes a chain frame's sections to strings for the worker and writes
 * the worker's reply text out behind a new header. JSON is made once at the sending end and parsed
 * once at the receiving end. (Measured: handing the worker its frame as a transferred ArrayBuffer and
 * moving a finished reply frame back cost the workers more CPU per chain than two string copies —
 * an ArrayBuffer with its own backing store per message — so strings cross the thread boundary.)
 *
 * ```
 *  offset  size  field
 *   0      u32   length of the rest of the frame (header after this field + body), little-endian
 *   4      u8    kind: 1 chain (→ host), 2 call (→ host), 3 reply (→ supervisor)
 *   5      u8    FRAME_MAGIC (protocol version); a different byte is corruption
 *   6      u16   0
 *   8      f64   id: supervisor task id (a safe integer ≥ 0)
 *  16      u32   key: plan key of a chain frame, else 0
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
 * supervisor kills and restarts the host; the host exits), never a wait for bytes that do not come.
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
  const planBytes = texts.plan !== undefined ? Buffer.byteLength(texts.plan, "utf8") : 0;
  const quarantineBytes = texts.quarantine !== undefined ? Buffer.byteLength(texts.quarantine, "utf8") : 0;
  const invokeBytes = texts.invoke !== undefined ? Buffer.byteLength(texts.invoke, "utf8") : 0;
  const payloadBytes = Buffer.byteLength(texts.payload, "utf8");
  const bytes = FRAME_HEADER_BYTES + planBytes + quarantineBytes + invokeBytes + payloadBytes;
  // SECURITY: the limit applies before the buffer exists; the receiver would refuse the frame anyway.
  if (bytes > limit) throw frameTooLarge(bytes, limit, what);
  const frame = Buffer.allocUnsafeSlow(bytes);
  writeHeader(frame, kind, id, key, planBytes, quarantineBytes, invokeBytes, bytes);
  let at = FRAME_HEADER_BYTES;
  if (texts.plan !== undefined) at += frame.write(texts.plan, at, "utf8");
  if (texts.quarantine !== undefined) at += frame.write(texts.quarantine, at, "utf8");
  if (texts.invoke !== undefined) at += frame.write(texts.invoke, at, "utf8");
  frame.write(texts.payload, at, "utf8");
  return frame;
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
  const view = new DataView(frame.buffer, frame.byteOffset, FRAME_HEADER_BYTES);
  const bytes = view.getUint32(0, true) + 4;
  const kind = frame[4] as FrameKind;
  if (frame[5] !== FRAME_MAGIC || view.getUint16(6, true) !== 0) return "bad magic or reserved bytes in a frame header";
  if (!accepts.has(kind)) return `unexpected frame kind ${kind}`;
  const id = view.getFloat64(8, true);
  if (!Number.isSafeInteger(id) || id < 0) return "a frame id that is not a non-negative integer";
  const planBytes = view.getUint32(20, true);
  const quarantineBytes = view.getUint32(24, true);
  const invokeBytes = view.getUint32(28, true);
  if (bytes < FRAME_HEADER_BYTES || FRAME_HEADER_BYTES + planBytes + quarantineBytes + invokeBytes > bytes) return "frame sections larger than the frame";
  return { kind, id, key: view.getUint32(16, true), planBytes, quarantineBytes, invokeBytes, bytes };
}

/** UTF-8 text of `frame[start, end)`, without copying the bytes first. */
export function frameText(frame: Uint8Array, start: number, end: number): string {
  return Buffer.from(frame.buffer, frame.byteOffset + start, end - start).toString("utf8");
}

/** The four sections of a frame's body as byte offsets into the frame. */
export function sections(header: FrameHeader): { plan: [number, number]; quarantine: [number, number]; invoke: [number, number]; payload: [number, number] } {
  const planEnd = FRAME_HEADER_BYTES + header.planBytes;
  const quarantineEnd = planEnd + header.quarantineBytes;
  const invokeEnd = quarantineEnd + header.invokeBytes;
  return { plan: [FRAME_HEADER_BYTES, planEnd], quarantine: [planEnd, quarantineEnd], invoke: [quarantineEnd, invokeEnd], payload: [invokeEnd, header.bytes] };
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
 * its own (`owned` true). After the first error nothing more is read: the stream cannot be trusted.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  /** Bytes of chunks[0] already consumed. */
  private head = 0;
  private buffered = 0;
  private checked = false;
  private failed = false;

  constructor(
    private readonly limit: number,
    private readonly accepts: ReadonlySet<FrameKind>,
    private readonly onFrame: (frame: Uint8Array, header: FrameHeader, owned: boolean) => void,
    private readonly onError: (err: VcpError) => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.failed || chunk.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (!this.failed && this.buffered >= 4) {
      const bytes = this.peekUint32() + 4;
      // SECURITY: before anything is kept or allocated for this frame.
      if (bytes > this.limit) return this.fail(frameTooLarge(bytes, this.limit, "incoming frame"));
      if (bytes < FRAME_HEADER_BYTES) return this.fail(protocolError(`a frame length of ${bytes} bytes is shorter than the header`));
      if (this.buffered < FRAME_HEADER_BYTES) return;
      if (!this.checked) {
        // The header alone, as soon as it is here: garbage is refused without waiting for its "body".
        const problem = readHeader(this.copyOut(FRAME_HEADER_BYTES, false), this.accepts);
        if (typeof problem === "string") return this.fail(protocolError(problem));
        this.checked = true;
      }
      if (this.buffered < bytes) return;
      const first = this.chunks[0]!;
      const owned = first.length - this.head < bytes;
      const frame = this.copyOut(bytes, true);
      this.checked = false;
      this.onFrame(frame, readHeader(frame, this.accepts) as FrameHeader, owned);
    }
  }

  /** The stream ended: bytes of an unfinished frame mean it was cut off. */
  end(): void {
    if (!this.failed && this.buffered > 0) this.fail(protocolError(`the stream ended inside a frame (${this.buffered} bytes of it received)`));
  }

  /** Bytes buffered for a frame not yet complete. */
  get pending(): number {
    return this.buffered;
  }

  private fail(err: VcpError): void {
    this.failed = true;
    this.chunks = [];
    this.buffered = 0;
    this.onError(err);
  }

  private peekUint32(): number {
    const first = this.chunks[0]!;
    if (first.length - this.head >= 4) return first.readUInt32LE(this.head);
    return Buffer.from(this.copyOut(4, false)).readUInt32LE(0);
  }

  /** The next `n` buffered bytes: a view when they lie in one chunk, else a new buffer; consumed when `consume`. */
  private copyOut(n: number, consume: boolean): Uint8Array {
    const first = this.chunks[0]!;
    if (first.length - this.head >= n) {
      const view = first.subarray(this.head, this.head + n);
      if (consume) this.advance(n);
      return view;
    }
    const out = Buffer.allocUnsafeSlow(n);
    let filled = 0;
    let index = 0;
    let offset = this.head;
    while (filled < n) {
      const chunk = this.chunks[index]!;
      const take = Math.min(n - filled, chunk.length - offset);
      chunk.copy(out, filled, offset, offset + take);
      filled += take;
      index++;
      offset = 0;
    }
    if (consume) this.advance(n);
    return out;
  }

  private advance(n: number): void {
    this.buffered -= n;
    while (n > 0) {
      const first = this.chunks[0]!;
      const left = first.length - this.head;
      if (n < left) {
        this.head += n;
        return;
      }
      n -= left;
      this.chunks.shift();
      this.head = 0;
    }
  }
}

/**
 * Writes frames to a stream: a 32-byte header and the sections as strings, encoded to UTF-8 once, by
 * the stream's writev, straight into the socket write. Every frame written before the event loop's
 * check phase leaves in one `writev` (one syscall under load instead of one per frame; at once when idle).
 */
export class FrameWriter {
  private corked = false;

  /** `undefined`: a channel that never opened (a failed spawn); writes go nowhere. */
  constructor(private readonly stream: Writable | undefined) {}

  /**
   * Queue one frame. Throws SANDBOX_FRAME_TOO_LARGE naming `limit` (nothing written) when it would be
   * larger. `done`: flush now and call back once the bytes are with the operating system.
   */
  write(kind: FrameKind, id: number, key: number, texts: FrameTexts, limit: number, what: string, done?: () => void): void {
    const planBytes = texts.plan !== undefined ? Buffer.byteLength(texts.plan, "utf8") : 0;
    const quarantineBytes = texts.quarantine !== undefined ? Buffer.byteLength(texts.quarantine, "utf8") : 0;
    const invokeBytes = texts.invoke !== undefined ? Buffer.byteLength(texts.invoke, "utf8") : 0;
    const bytes = FRAME_HEADER_BYTES + planBytes + quarantineBytes + invokeBytes + Buffer.byteLength(texts.payload, "utf8");
    // SECURITY: the limit applies before anything is written; the receiver would refuse the frame anyway.
    if (bytes > limit) throw frameTooLarge(bytes, limit, what);
    const stream = this.stream;
    if (stream === undefined || stream.destroyed || stream.writableEnded) {
      // The peer is gone; its exit is handled elsewhere.
      done?.();
      return;
    }
    // From Node's shared pool: the header is only written, never transferred.
    const header = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
    writeHeader(header, kind, id, key, planBytes, quarantineBytes, invokeBytes, bytes);
    if (!this.corked) {
      this.corked = true;
      stream.cork();
      setImmediate(this.flush);
    }
    stream.write(header);
    if (texts.plan !== undefined) stream.write(texts.plan, "utf8");
    if (texts.quarantine !== undefined) stream.write(texts.quarantine, "utf8");
    if (texts.invoke !== undefined) stream.write(texts.invoke, "utf8");
    if (done !== undefined) {
      stream.write(texts.payload, "utf8", () => done());
      this.flush();
    } else {
      stream.write(texts.payload, "utf8");
    }
  }

  private readonly flush = (): void => {
    if (!this.corked) return;
    this.corked = false;
    this.stream?.uncork();
  };
}
