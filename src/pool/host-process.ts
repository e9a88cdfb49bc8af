import { fork, type ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import type { VcpError } from "../errors.js";
import { FrameKind, FrameReader, FrameWriter, protocolError, type FrameHeader } from "./frames.js";
import { processEnded } from "./slots.js";
import type { FromHost, HostStartConfig, ToHost } from "./protocol.js";
import type { HostKill } from "./watchdog.js";

const STDERR_TAIL_BYTES = 8192;

/** One sandbox host process (host-main.ts) and what the supervisor knows about its life. */
export interface HostHandle {
  child: ChildProcess;
  generation: number;
  ready: boolean;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  disconnected: boolean;
  /**
   * The frame channel and every worker channel reached their end (every reply the host wrote has been
   * read) or never existed.
   */
  framesClosed: boolean;
  gone: boolean;
  /** Call frames to the host's main thread, coalesced per event-loop turn (frames.ts). */
  writer: FrameWriter;
  /** Chain frames to worker i, on its own channel (protocol.ts); as many as the host has threads. */
  channels: FrameWriter[];
  /** The last STDERR_TAIL_BYTES of its stderr, for start failures and crash logs. */
  stderrTail: string;
  onReady?: () => void;
  onGoneBeforeReady?: (why: string) => void;
  /** Set when the watchdog killed this host, before the SIGKILL: recovery reads it. */
  killed?: HostKill;
}

/**
 * SECURITY: a wedged host cannot run its own "disconnect" handler, so the main process kills every
 * live host when it exits: no orphan keeps isolates (and their memory) after the runtime is gone.
 */
const liveHosts = new Set<ChildProcess>();
let exitHookInstalled = false;
function trackHost(child: ChildProcess): void {
  liveHosts.add(child);
  child.once("exit", () => liveHosts.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const host of liveHosts) {
      try {
        host.kill("SIGKILL");
      } catch {
        // already gone
      }
    }
  });
}

/** What the supervisor hears from one host. */
export interface HostListener {
  /** The IPC `ready` message (the frame channel is open on the host's side from then on). */
  onMessage(host: HostHandle, message: FromHost): void;
  /**
   * A whole reply frame; `frame` is valid only during the call. `channel`: the worker channel it came
   * on (a chain's reply), undefined for the host's own frame channel (a call's reply).
   */
  onFrame(host: HostHandle, frame: Uint8Array, header: FrameHeader, channel: number | undefined): void;
  /** The frame stream from the host is corrupt, cut off or over the limit: nothing more is read from it. */
  onProtocolError(host: HostHandle, err: VcpError): void;
  /**
   * Called once "exit", "disconnect" and the end of the frame channel all happened (replies still in
   * the pipes are read first, so a death is acted on only after the last reply), or when the fork
   * itself failed.
   */
  onGone(host: HostHandle, error?: string): void;
}

/**
 * Most young-generation semi-space of every isolate in a sandbox host, MiB (V8 grows it up to 16 on its
 * own). The host's main thread allocates ~14 KiB per chain, mostly piscina's per-task objects and the
 * request and reply texts, and 15–20% of it is promoted although already dead (issue 15, host-gc: heap
 * sampling finds piscina's per-task promise and TaskInfo and the worker's reply objects among what only a
 * mark-compact frees; a standalone piscina loop does the same, so it is not this project's code). A
 * scavenge therefore copies a share of everything allocated since the last one: with a 16 MiB
 * semi-space 1–3 MB at a time, a 2–4 ms pause on the thread every chain passes through, every ~400
 * chains. At 2 MiB it is ~0.45 ms every ~100 chains (bench tail-chain with the GC preload, quiet
 * machine: about the same scavenge time in total; on a loaded one each pause is still half as long, but
 * the total doubles, preemption landing inside more pauses). The sequential chain's p99 is what this
 * buys: a pause now fits under the 1 ms target. The flag holds for every isolate V8 creates in the
 * process: the pool's worker threads, on the same chains' path, get the same shorter scavenges, and so
 * do the guests' isolates, whose memory limit is their old space.
 */
export const HOST_SEMI_SPACE_MB = 2;

/** The host's Node flags. */
const HOST_EXEC_ARGV = [
  "--no-node-snapshot", // isolated-vm requires it, per process (DESIGN §1)
  `--max-semi-space-size=${HOST_SEMI_SPACE_MB}`,
];

const REPLIES: ReadonlySet<FrameKind> = new Set([FrameKind.reply]);

/** The host's fd of its frame channel; its worker channels follow (protocol.ts). */
const FRAME_FD = 4;

/**
 * A worker channel that closes while its host keeps running lost its worker thread (piscina starts
 * another, which has no channel): the host is killed as a protocol failure if it has not died on its
 * own this long after (a dying host closes its channels before its exit is reported; an event loop
 * that was blocked may run this timer before it hears of the exit, hence also the /proc check).
 */
const CHANNEL_LOSS_GRACE_MS = 1000;

/**
 * Fork a sandbox host with its frame channel (fd 4, a socketpair) and one channel per worker thread
 * (fd 5, 6, …), and send it its configuration. Throws when the fork throws synchronously.
 */
export function forkHost(entry: string, config: HostStartConfig, listener: HostListener): HostHandle {
  const channelFds = Array.from({ length: config.threads }, (_, i) => FRAME_FD + 1 + i);
  // process.execPath: the same Node 24 that runs the caller (npm scripts put it first on PATH).
  const child = fork(entry, [], {
    execPath: process.execPath,
    execArgv: HOST_EXEC_ARGV,
    serialization: "json", // carries init and ready only; calls and chains travel as frames
    stdio: ["ignore", "ignore", "pipe", "ipc", "pipe", ...channelFds.map(() => "pipe" as const)],
  });
  const socket = child.stdio[FRAME_FD] as Socket | null | undefined;
  const channelSockets = channelFds.map((fd) => child.stdio[fd] as Socket | null | undefined);
  const host: HostHandle = {
    child,
    generation: config.generation,
    ready: false,
    disconnected: false,
    framesClosed: socket == null,
    gone: false,
    stderrTail: "",
    writer: new FrameWriter(socket ?? undefined),
    channels: channelSockets.map((channel) => new FrameWriter(channel ?? undefined)),
  };
  trackHost(child);
  let open = (socket != null ? 1 : 0) + channelSockets.filter((channel) => channel != null).length;
  const maybeGone = (): void => {
    if (host.exit !== undefined && host.disconnected && host.framesClosed) listener.onGone(host);
  };
  const readReplies = (stream: Socket, channel: number | undefined): void => {
    const reader = new FrameReader(
      config.frameBytes,
      REPLIES,
      (frame, header) => listener.onFrame(host, frame, header, channel),
      (err) => listener.onProtocolError(host, err),
    );
    stream.on("data", (chunk: Buffer) => reader.push(chunk));
    // No reader.end() on "end": the host closes its end only by dying (its exit may be reported after
    // the end of the stream), and a reply cut off by a death is the crash path's to answer, with
    // attribution, not a protocol error. A frame cut short inside a live stream shows as corruption
    // when the next frame's bytes are read as its rest.
    stream.on("error", () => {
      // EPIPE/ECONNRESET after the host died; its exit is what the supervisor acts on.
    });
    stream.on("close", () => {
      if (channel !== undefined && host.exit === undefined) {
        // SECURITY: chains sent to a worker that is gone would wait forever; the host's death answers them.
        setTimeout(() => {
          if (host.exit !== undefined || host.gone || (child.pid !== undefined && processEnded(child.pid))) return;
          listener.onProtocolError(host, protocolError(`worker channel ${channel} closed while the host runs (its worker thread ended)`));
        }, CHANNEL_LOSS_GRACE_MS).unref();
      }
      open--;
      if (open > 0) return;
      host.framesClosed = true;
      maybeGone();
    });
  };
  if (socket != null) readReplies(socket, undefined);
  channelSockets.forEach((channel, i) => {
    if (channel != null) readReplies(channel, i);
  });
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    host.stderrTail = (host.stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
  });
  child.on("message", (message: FromHost) => listener.onMessage(host, message));
  child.on("error", (err) => {
    // Spawn failure (no exit follows) or a failed send to a dying child (exit follows).
    if (child.pid === undefined) {
      host.exit = { code: null, signal: null };
      host.disconnected = true;
      host.framesClosed = true;
      listener.onGone(host, err.message);
    }
  });
  child.on("exit", (code, signal) => {
    host.exit = { code, signal };
    if (!child.connected) host.disconnected = true;
    maybeGone();
  });
  child.on("disconnect", () => {
    host.disconnected = true;
    maybeGone();
  });
  child.send({ t: "init", config: { ...config, channelFds } } satisfies ToHost);
  return host;
}
