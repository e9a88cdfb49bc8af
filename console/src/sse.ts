/**
 * Server-sent events read from a fetch() body (EventSource cannot send an Authorization header, and
 * the token must not go into a URL). A pure, incremental parser of the text/event-stream format:
 * feed it decoded chunks as they arrive, get whole events back.
 */
export interface SseEvent {
  event: string;
  data: string;
  id: string | null;
}

export class SseParser {
  private buffer = "";
  private data: string[] = [];
  private event = "";
  private id: string | null = null;
  /** Comment lines seen (the server's heartbeats). */
  comments = 0;

  feed(chunk: string): SseEvent[] {
    this.buffer += chunk;
    const out: SseEvent[] = [];
    for (;;) {
      const nl = this.buffer.search(/\r\n|\r|\n/);
      if (nl < 0) break;
      const line = this.buffer.slice(0, nl);
      this.buffer = this.buffer.slice(nl + (this.buffer.startsWith("\r\n", nl) ? 2 : 1));
      if (line === "") {
        if (this.data.length > 0) out.push({ event: this.event || "message", data: this.data.join("\n"), id: this.id });
        this.data = [];
        this.event = "";
        continue;
      }
      if (line.startsWith(":")) {
        this.comments++;
        continue;
      }
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") this.data.push(value);
      else if (field === "event") this.event = value;
      else if (field === "id") this.id = value;
    }
    return out;
  }
}

/** Reconnect delay after `attempt` failures in a row: 1 s, 2 s, 4 s … capped at 30 s. */
export function backoffMs(attempt: number): number {
  return Math.min(30_000, 1000 * 2 ** Math.max(0, attempt - 1));
}
