import { VcpError } from "../errors.js";
import { fromWireError, type CallMessage, type WireReply } from "./protocol.js";

/** A call to the host that someone waits for (forget needs no answer). */
export type HostCallMessage = Extract<CallMessage, { t: "load" | "unload" | "close" }>;

export interface PendingCall {
  readonly id: number;
  readonly message: HostCallMessage;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

/**
 * The supervisor's calls to the host — bundle loads, unloads, close — from the moment they are made
 * until the host answers them or dies. Starts no process: the supervisor sends what it is handed.
 *
 * ```
 *  make(message) ─ host can take it ─▶ sent ─ reply ─▶ answer(id)
 *        └─ restart / reload going on ─▶ held ─ takeHeld() once the host is ready ─▶ sent
 *  host died ─▶ hostDied(): a load fails INVALID_BUNDLE (`sole` when its bundle alone ran), the rest resolve
 * ```
 */
export class HostCalls {
  private readonly sent = new Map<number, PendingCall>();
  private readonly held: PendingCall[] = [];

  /** A call: handed to `send` now when the host can take it, else held until {@link takeHeld}. */
  make(message: HostCallMessage, canSend: boolean, send: (call: PendingCall) => void): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const call: PendingCall = { id: message.id, message, resolve, reject };
      if (canSend) send(call);
      else this.held.push(call);
    });
  }

  /** The call is being written to the host: from now on its answer (or the host's death) settles it. */
  sending(call: PendingCall): void {
    this.sent.set(call.id, call);
  }

  /** The host answered task `id`; false when it is not a call of ours (a chain, or already answered). */
  answer(id: number, reply: WireReply): boolean {
    const call = this.sent.get(id);
    if (call === undefined) return false;
    this.sent.delete(id);
    if (reply.ok) call.resolve(reply.value);
    else call.reject(fromWireError(reply.error));
    return true;
  }

  /** Calls held while no host could take them, in the order they were made. */
  takeHeld(): PendingCall[] {
    return this.held.splice(0);
  }

  /** The sandbox gave up: held calls fail with `err`. */
  rejectHeld(err: Error): void {
    for (const call of this.held.splice(0)) call.reject(err);
  }

  /** Digest of the bundle task `id` is loading, when it is a pending load. */
  loadDigest(id: number): string | undefined {
    const call = this.sent.get(id);
    return call?.message.t === "load" ? call.message.digest : undefined;
  }

  /** A bundle load is running in the host (its top-level code is guest code: a suspect waits for it). */
  loadsInFlight(): boolean {
    for (const call of this.sent.values()) if (call.message.t === "load") return true;
    return false;
  }

  /** No call is sent or held. */
  get idle(): boolean {
    return this.sent.size === 0 && this.held.length === 0;
  }

  /**
   * The host died (`how`): every call sent to it is answered. A load fails INVALID_BUNDLE, with `sole`
   * when `isSole(id)` says its bundle's code was the only code running (so that bundle killed the
   * host); an unload has nothing left to release and a close nothing left to stop, so they resolve.
   */
  hostDied(how: string, isSole: (id: number) => boolean): void {
    const calls = [...this.sent.values()];
    this.sent.clear();
    for (const call of calls) {
      if (call.message.t === "load") {
        const { digest } = call.message;
        call.reject(new VcpError("INVALID_BUNDLE", `the sandbox host died (${how}) while loading bundle ${digest}`, { digest, sole: isSole(call.id) }));
      } else {
        call.resolve(null);
      }
    }
  }
}
