/**
 * A loopback TCP proxy that can stall its traffic, standing in for a network partition between one
 * replica and Redis: while stalled, connections stay open (the client sees no close, no reset) but
 * nothing crosses in either direction, as when packets are dropped; on `resume` what was sent is
 * delivered, as TCP retransmission would once the partition heals. No byte is ever lost or reordered,
 * so a client's request/reply stream stays in step.
 *
 * @example
 * ```ts
 * const proxy = await startTcpProxy(redis.port);   // redis://127.0.0.1:<proxy.port> reaches Redis
 * proxy.stall();                                   // the replica behind it is cut off
 * proxy.resume();
 * await proxy.close();
 * ```
 */
import { createConnection, createServer, type Socket } from "node:net";

export interface TcpProxy {
  port: number;
  url: string;
  stalled(): boolean;
  /** Stop forwarding (both directions, every connection, new ones too) without closing anything. */
  stall(): void;
  /** Forward again, starting with what waited. */
  resume(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, targetHost = "127.0.0.1"): Promise<TcpProxy> {
  /** Every direction of every connection: where its bytes go, and what waits while stalled. */
  const links = new Set<{ to: Socket; waiting: Buffer[] }>();
  const sockets = new Set<Socket>();
  let stalled = false;
  const link = (from: Socket, to: Socket): void => {
    const entry = { to, waiting: [] as Buffer[] };
    links.add(entry);
    from.on("data", (chunk: Buffer) => {
      if (stalled) entry.waiting.push(chunk);
      else to.write(chunk);
    });
    from.on("close", () => links.delete(entry));
  };
  const server = createServer((client) => {
    const upstream = createConnection({ host: targetHost, port: targetPort });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => undefined);
      socket.on("close", () => sockets.delete(socket));
    }
    link(client, upstream);
    link(upstream, client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address !== null ? address.port : 0;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stalled: () => stalled,
    stall() {
      stalled = true;
    },
    resume() {
      stalled = false;
      for (const entry of links) {
        for (const chunk of entry.waiting.splice(0)) entry.to.write(chunk);
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
