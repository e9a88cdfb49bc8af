/**
 * Server-sent events read from a fetch() body (EventSource cannot send an Authorization header, and
 * the token must not go into a URL). The text/event-stream parsing is eventsource-parser's; this
 * wrapper hands back whole events per chunk and counts comment lines (the server's heartbeats).
 */
import { createParser, type EventSourceParser } from "eventsource-parser";

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

