/**
 * Server-sent events read from a fetch() body (EventSource cannot send an Authorization header, and
 * the token must not go into a URL). The text/event-stream parsing is eventsource-parser's; this
 * wrapper hands back whole events per chunk and counts comment lines (the server's heartbeats).
 */
import { createParser, type EventSourceParser } from "eventsource-parser";
import { ApiError, errorText } from "./api.js";

export interface SseEvent {
  event: string;
  data: string;
  id: string | null;
}

/** A line longer than this is not an event of ours (the server caps one at 64 KiB of JSON). */
const MAX_BUFFER = 1024 * 1024;

export class SseParser {
  /** Comment lines seen (the server's heartbeats). */
  comments = 0;
  private readonly out: SseEvent[] = [];
  private readonly parser: EventSourceParser = createParser({
    onEvent: (e) => void this.out.push({ event: e.event ?? "message", data: e.data, id: e.id ?? null }),
    onComment: () => void this.comments++,
    maxBufferSize: MAX_BUFFER,
  });

  feed(chunk: string): SseEvent[] {
    this.parser.feed(chunk);
    return this.out.splice(0, this.out.length);
  }
}

/** Reconnect delay after `attempt` failures in a row: 1 s, 2 s, 4 s … capped at 30 s. */
export function backoffMs(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, attempt - 1));
}

/** No byte (not even a heartbeat) for this long: the stream is dead, reconnect. */
const SILENCE_MS = 45_000;

export type StreamStateKind = "ok" | "warn" | "bad";

export interface LiveStreamOptions {
  /**
   * Opens the stream. Resolves to the (status-checked) response, or `undefined` when the page has shown
   * why it will not stream (a server without the route) and no reconnect should follow.
   */
  open(signal: AbortSignal): Promise<Response | undefined>;
  /** Every event, in order; a `hello` event also resets the reconnect count. */
  onEvent(event: SseEvent): void;
  /** After each chunk's events (e.g. to refresh counters once per chunk, not per event). */
  afterChunk?(): void;
  setState(text: string, kind: StreamStateKind): void;
}

export interface LiveStream {
  /** Drop the current connection and connect again from attempt 0 (e.g. new filters). */
  restart(): void;
  stop(): void;
}

/**
 * One live SSE subscription with the console's reconnect rules: a stream silent for 45 s is dead;
 * a dropped stream reconnects with `backoffMs`; a 401/403 stops quietly (the login form is back).
 */
export function liveStream(opts: LiveStreamOptions): LiveStream {
  let controller: AbortController | undefined;
  let reconnectTimer: number | undefined;
  let attempt = 0;
  let stopped = false;

  async function connect(): Promise<void> {
    controller?.abort();
    const ac = new AbortController();
    controller = ac;
    opts.setState(attempt === 0 ? "Connecting…" : `Reconnecting (attempt ${attempt + 1})…`, "warn");
    let silence: number | undefined;
    const arm = () => {
      window.clearTimeout(silence);
      silence = window.setTimeout(() => ac.abort(new Error("no data or heartbeat for 45 s")), SILENCE_MS);
    };
    try {
      const res = await opts.open(ac.signal);
      if (res === undefined) return;
      if (res.body === null) throw new Error("the stream has no body");
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      arm();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        arm();
        for (const event of parser.feed(value)) {
          if (event.event === "hello") attempt = 0;
          opts.onEvent(event);
        }
        opts.afterChunk?.();
      }
      throw new Error("the server ended the stream");
    } catch (err) {
      window.clearTimeout(silence);
      if (stopped || (ac.signal.aborted && controller !== ac)) return;
      if (err instanceof ApiError && (err.status === 401 || err.status === 403)) return; // back at the login form
      attempt++;
      const wait = backoffMs(attempt);
      const why = errorText(err);
      opts.setState(`Stream dropped (${why}). Reconnecting in ${Math.round(wait / 1000)} s (attempt ${attempt})…`, "bad");
      reconnectTimer = window.setTimeout(() => void connect(), wait);
    }
  }

  void connect();
  return {
    restart() {
      window.clearTimeout(reconnectTimer);
      attempt = 0;
      void connect();
    },
    stop() {
      stopped = true;
      controller?.abort();
      window.clearTimeout(reconnectTimer);
    },
  };
}
