import { EventEmitter } from "node:events";
import { emptyChainResult } from "../chain/contract.js";
import { vcpTypeOf } from "../chain/plan.js";
import type { InvokeOutcome, InvokeRequest } from "../model/chain.js";
import { VcpError } from "../errors.js";
import type { Logger } from "../observe/events.js";
import type { BundleCode } from "../sandbox-host/types.js";
import { shareAccount, SlowTracker, WorkerShareTracker } from "./admission.js";
import type { ChainTask, ChainTaskResult, Sandbox, SandboxOptions, SandboxStats } from "./api.js";
import { BundleRegistry, type QuarantineInfo } from "./bundle-registry.js";
import { ChainQueue, type PendingChain } from "./chain-queue.js";
import { CodeStore } from "./code-store.js";
import { profileChainValue, rebuildEvents } from "./events.js";
import { FrameKind, frameText, protocolError, sections, type FrameHeader } from "./frames.js";
import { HostCalls, type HostCallMessage, type PendingCall } from "./host-calls.js";
import { deathReport, settleHostDeath } from "./host-death.js";
import { resolveHostEntry } from "./host-entry.js";
import { HostKeeper, reloadBundles } from "./host-lifecycle.js";
import { forkHost, type HostHandle } from "./host-process.js";
import { hostConfig, resolveSandboxOptions, type SandboxSettings } from "./options.js";
import { OneActionTasks } from "./one-action.js";
import { PlanCache, type PlanEntry } from "./plan-cache.js";
import { fromWireError, type CallMessage, type ChainValue, type WireChainValue, type WirePlan, type WireReply } from "./protocol.js";
import { channelChain, WorkerChannels, type ChannelChain } from "./worker-channels.js";
import { monotonicMs, threadTime } from "./slots.js";
import { inspectHost, loadWatchdogMs, WatchdogTimer, type HostKill } from "./watchdog.js";

export type { ChainTask, ChainTaskResult, Sandbox, SandboxOptions, SandboxStats } from "./api.js";

/**
 * Start the sandbox host process and its worker pool. Resolves once the host is ready.
 *
 * @example
 * ```ts
 * const sandbox = await startSandbox({ threads: 2, onGuestLog: (line) => log.info(line) });
 * ```
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  // The host runs on process.execPath, so the caller's Node is the sandbox's Node (DESIGN §1).
  if (Number(process.versions.node.split(".")[0]) < 24) {
    throw new VcpError("UNSUPPORTED_NODE", `the sandbox needs Node.js >= 24 (isolated-vm 7), this is ${process.version}`);
  }
  const supervisor = new SandboxSupervisor(options);
  await supervisor.start();
  return supervisor;
}

/**
 * The main-process half of the sandbox (DESIGN §4.1), a facade: it wires parts that start no process
 * and are unit-tested alone, and carries out what they decide.
 *
 * ```
 *  loadBundle ─▶ code-store.ts (files) ─▶ host-calls.ts (load call) ─▶ bundle-registry.ts (loaded)
 *  runChain ──▶ plan-cache.ts (key) ─▶ chain-queue.ts (waiting, admission: suspect alone, slow lane,
 *               fair share) ─▶ worker-channels.ts (a free worker, batches; hook list sent once per key
 *               and worker) ─▶ chain frame on that worker's channel
 *  reply frame ─▶ worker-channels.ts ─▶ chain-queue.ts (settle, usage) ─▶ result + events rebuilt (events.ts)
 *  watchdog.ts (timer + pure decision over the slots) ─▶ kill ─┐
 *  host-lifecycle.ts: the host's start, death, restart with backoff and reloads, stop ◀──────┘
 *  host dies ─▶ host-death.ts (crash.ts attribution, recovery.ts plan): answer the culprit's chain
 *               crashed/timeout, requeue bystanders, quarantine, suspects ─▶ restart
 * ```
 */
export class SandboxSupervisor implements Sandbox {
  private readonly settings: SandboxSettings;
  private readonly logger: Logger;
  private readonly frameBytes: number;
  private readonly store: CodeStore;
  private readonly hosts: HostKeeper;
  private readonly chains: ChainQueue;
  private readonly calls = new HostCalls();
  private readonly bundles = new BundleRegistry();
  private readonly plans = new PlanCache();
  private readonly oneAction = new OneActionTasks();
  private readonly emitter = new EventEmitter();
  private readonly watchdog = new WatchdogTimer(
    () => this.chains.inFlight.size > 0 || this.calls.loadsInFlight(),
    () => this.watch(),
  );
  private nextId = 1;
  private restarts = 0;
  private plansSent = 0;
  private watchdogKills = 0;
  /** Set when the host cannot be restarted: every call fails with it. */
  private broken: VcpError | undefined;
  private closing = false;
  private closePromise: Promise<void> | undefined;
  private restarting: Promise<void> | undefined;
  private onDrained: (() => void) | undefined;
  /** The live host's worker channels (a new host starts with new ones: its workers have no plans). */
  private routes: { host: HostHandle; channels: WorkerChannels } | undefined;

  constructor(options: SandboxOptions) {
    const settings = resolveSandboxOptions(options);
    this.settings = settings;
    this.logger = settings.logger;
    this.frameBytes = settings.host.frameBytes;
    const threads = settings.host.threads;
    this.chains = new ChainQueue({
      threads,
      maxQueue: settings.host.maxQueue,
      slow: new SlowTracker(settings.slowBundle.timeouts, settings.slowBundle.windowMs),
      share: settings.fairShareWindowMs !== undefined ? new WorkerShareTracker(threads, settings.fairShareWindowMs) : undefined,
      isSuspect: (digest, now) => this.bundles.isSuspect(digest, now),
    });
    // Before the code directory exists: a missing or stale build leaves nothing behind.
    const entry = resolveHostEntry();
    this.store = new CodeStore(settings.codeDir);
    this.hosts = new HostKeeper(
      (generation) => hostConfig(settings, this.store, generation),
      {
        onFrame: (host, frame, header, channel) => this.onReplyFrame(host, frame, header, channel),
        onProtocolError: (host, err) => this.onProtocolError(host, err),
        onCrash: (host, exit) => this.recoverFromCrash(host, exit),
      },
      (config, listener) => forkHost(entry, config, listener),
      this.logger,
      settings.startTimeoutMs,
    );
  }

  async start(): Promise<void> {
    try {
      await this.hosts.start();
    } catch (err) {
      this.store.remove();
      throw err;
    }
  }

  // ── public API ─────────────────────────────────────────────────────────────────────────────────

  async loadBundle(bundle: BundleCode): Promise<{ exports: string[] }> {
    this.assertOpen();
    const meta = CodeStore.metaOf(bundle, this.settings.host.limits.codeBytes);
    await this.store.put(bundle, meta);
    let value: unknown;
    try {
      value = await this.call({ t: "load", id: this.nextId++, digest: bundle.digest });
    } catch (err) {
      if (err instanceof VcpError) throw err;
      throw new VcpError("INVALID_BUNDLE", `bundle ${bundle.name} (${bundle.digest}) failed to load: ${(err as Error).message}`, {
        bundle: bundle.name,
        digest: bundle.digest,
      });
    }
    if (this.bundles.loaded(meta)) {
      this.logger.info({ bundle: bundle.name, digest: bundle.digest }, "sandbox: bundle reloaded, quarantine lifted");
    }
    this.chains.resetUsage(bundle.digest);
    // Fair share is per signer, not per revision: every bundle one key signed draws on one share.
    this.chains.chargeTo(bundle.digest, shareAccount(bundle));
    return value as { exports: string[] };
  }

  async unloadBundle(digest: string): Promise<void> {
    this.assertOpen();
    const meta = this.bundles.unloaded(digest);
    this.chains.resetUsage(digest);
    this.chains.forgetRevision(digest);
    if (meta === undefined) return;
    // The files stay: content-addressed and immutable, they are harmless, and a chain already in
    // flight may still need them on a cold worker. A temporary code directory goes on close().
    await this.call({ t: "unload", id: this.nextId++, digest });
  }

  runChain(task: ChainTask): Promise<ChainTaskResult> {
    return this.enqueue(task, undefined);
  }

  async invokeAction(request: InvokeRequest): Promise<InvokeOutcome> {
    const { task, invoke } = this.oneAction.task(request);
    return OneActionTasks.outcome(await this.enqueue(task, invoke));
  }

  stats(): SandboxStats {
    const host = this.hosts.host;
    const now = performance.now();
    return {
      restarts: this.restarts,
      inFlight: this.chains.inFlight.size,
      queued: this.chains.queuedCount(),
      quarantined: this.bundles.quarantinedDigests(),
      slowBundles: this.chains.slowDigests(now),
      demotedBundles: this.chains.demotedDigests(now),
      demotedAccounts: this.chains.demotedAccounts(now),
      suspectBundles: this.bundles.suspectDigests(now),
      plansSent: this.plansSent,
      watchdogKills: this.watchdogKills,
      hostPid: host?.gone === false ? host.child.pid : undefined,
      ready: this.hosts.open !== undefined && !this.hosts.stopping,
    };
  }

  on(event: "restart" | "quarantine", listener: (info: Record<string, unknown>) => void): void {
    this.emitter.on(event, listener);
  }

  close(): Promise<void> {
    this.closePromise ??= this.closeGracefully();
    return this.closePromise;
  }

  // ── chains ─────────────────────────────────────────────────────────────────────────────────────

  private enqueue(task: ChainTask, invoke: PendingChain["invoke"]): Promise<ChainTaskResult> {
    if (this.closing) return Promise.reject(closedError());
    if (this.broken) return Promise.reject(this.broken);
    if (task.plan.hooks.length === 0) {
      // The runtime short-circuits empty chains before they get here (DESIGN §4.1); answer the same way.
      return Promise.resolve({ result: emptyChainResult(vcpTypeOf(task.plan), task.request), events: [] });
    }
    let plan: PlanEntry;
    try {
      plan = this.planFor(task);
    } catch (err) {
      return Promise.reject(err);
    }
    const accounts = this.chains.accountsOf(plan.digests);
    const overloaded = this.chains.overloaded(plan.digests, accounts, this.hosts.host?.ready === true, performance.now());
    if (overloaded !== undefined) return Promise.reject(overloaded);
    const answer = this.chains.enqueue(this.nextId++, task, plan, accounts, invoke);
    this.pump();
    return answer;
  }

  /** The plan entry of a task's hook list (plan-cache.ts); the worker channels forget the keys it evicts. */
  private planFor(task: ChainTask): PlanEntry {
    const { entry, evicted } = this.plans.lookup(task.plan, (digest) => this.bundles.isLoaded(digest));
    if (evicted.length > 0) this.routes?.channels.forget(evicted);
    return entry;
  }

  /** Send every chain admission (chain-queue.ts) lets go now; nothing starts while a restarted host reloads. */
  private pump(): void {
    const host = this.hosts.open;
    if (host === undefined) return;
    this.chains.admit(performance.now(), () => this.calls.loadsInFlight(), (entry) => this.dispatch(host, entry));
  }

  /** An admitted chain (admission counted it in flight) to the host's next free worker. */
  private dispatch(host: HostHandle, entry: PendingChain): void {
    let payload: string;
    try {
      // Serialized here once, parsed once in the worker.
      payload = entry.task.requestText ?? JSON.stringify(entry.task.request);
    } catch (err) {
      this.failUnsendable(entry, err);
      return;
    }
    this.channelsOf(host).submit(channelChain(entry, payload));
    this.watchdog.arm();
  }

  private channelsOf(host: HostHandle): WorkerChannels {
    if (this.routes?.host !== host) {
      this.routes = { host, channels: new WorkerChannels(host.channels.length, (channel, chain, withPlan) => this.sendChain(host, channel, chain, withPlan)) };
    }
    return this.routes.channels;
  }

  /** One chain frame on worker channel `channel`; false when it could not be sent (the chain was answered). */
  private sendChain(host: HostHandle, channel: number, chain: ChannelChain, withPlan: boolean): boolean {
    const entry = chain.entry;
    const plan = entry.plan;
    try {
      const wirePlan: WirePlan | undefined = withPlan ? { profile: plan.profile, revision: plan.revision, hooks: plan.hooks } : undefined;
      // Quarantines as they stand when the chain leaves: a bundle quarantined while it waited is not run.
      const q = this.bundles.quarantinedAmong(entry.digests);
      host.channels[channel]!.write(
        FrameKind.chain,
        entry.id,
        plan.key,
        {
          plan: wirePlan !== undefined ? JSON.stringify(wirePlan) : undefined,
          quarantine: q !== undefined ? JSON.stringify(q) : undefined,
          // The hook input as it is, behind its budget: no JSON around it (protocol.ts ChainTask.inv).
          invoke: entry.invoke !== undefined ? `${entry.invoke.budgetMs}\n${entry.invoke.inputJson}` : undefined,
          payload: chain.payload,
        },
        this.frameBytes,
        "chain request",
      );
    } catch (err) {
      // Nothing was written: over the frame limit.
      this.failUnsendable(entry, err);
      return false;
    }
    if (withPlan) this.plansSent++;
    return true;
  }

  /**
   * SECURITY: the runtime bounds inputs before they get here (model/json-bounds.ts); should a request
   * still not serialize, it fails alone: not in flight, and its plan not recorded as sent to a host
   * that never received it (every later chain of the plan would fail on the missing plan).
   */
  private failUnsendable(entry: PendingChain, err: unknown): void {
    this.chains.settle(entry);
    // SANDBOX_FRAME_TOO_LARGE names the limit; anything else is an input that is not JSON.
    if (err instanceof VcpError) {
      entry.reject(err);
      return;
    }
    entry.reject(
      new VcpError("INVALID_INPUT", `the chain input could not be sent to the sandbox: ${err instanceof Error ? err.message : String(err)}`, { field: "input", rule: "json" }),
    );
  }

  /**
   * A reply frame of the live host: a chain's on its worker's channel, a call's on the host's own. Its
   * payload is parsed here once (chain values included, protocol.ts).
   */
  private onReplyFrame(host: HostHandle, frame: Uint8Array, header: FrameHeader, channel: number | undefined): void {
    let chain: PendingChain | undefined;
    if (channel !== undefined) {
      const routed = this.routes?.host === host ? this.routes.channels.reply(channel, header.id, header.key) : undefined;
      if (routed === undefined || routed.kind === "protocol") {
        this.onProtocolError(host, protocolError(routed?.detail ?? `a reply on worker channel ${channel} before any chain was sent`));
        return;
      }
      // Nothing ran (not started, or its plan was missing and goes with it now): worker-channels.ts sends
      // it again to the next free worker; it stays in flight, so admission has nothing new to let go.
      if (routed.kind === "again") return;
      chain = routed.chain.entry;
    }
    let reply: WireReply;
    try {
      const { payload } = sections(header);
      reply = JSON.parse(frameText(frame, payload[0], payload[1])) as WireReply;
    } catch (err) {
      this.onProtocolError(host, protocolError(`a reply that does not parse (${(err as Error).message})`));
      return;
    }
    if (!reply.ok && reply.error.code === "SANDBOX_PROTOCOL_ERROR") {
      // The host or a worker found a frame from this side corrupt: the channel cannot be trusted.
      this.onProtocolError(host, fromWireError(reply.error) as VcpError);
      return;
    }
    if (reply.logs !== undefined) this.settings.deliverLogs(reply.logs);
    if (chain !== undefined) this.onChainReply(chain, reply);
    else if (!this.calls.answer(header.id, reply)) return;
    this.pump(); // a freed thread, or a finished load a suspect's chain waited for
    this.checkDrained();
  }

  private onChainReply(entry: PendingChain, reply: WireReply): void {
    this.chains.settle(entry);
    if (!reply.ok) {
      entry.reject(fromWireError(reply.error));
      return;
    }
    // A suspect that ran alone and did not kill the host has served one chain of its probation.
    this.bundles.chainCompleted(entry.digests);
    const wire = reply.value as WireChainValue;
    // An agent-profile chain reports through its result and answer: no lifecycle events are rebuilt for it.
    let value: ChainValue;
    try {
      const hooks = entry.task.plan.hooks;
      value = vcpTypeOf(entry.task.plan) !== undefined ? rebuildEvents(wire, entry.task.request, hooks, entry.task.firedAndCompleted !== false) : profileChainValue(wire, entry.task.request, hooks);
    } catch (err) {
      // A reply that does not fit the hook list it answers: this chain fails with the protocol error.
      entry.reject(err instanceof Error ? err : new Error(String(err)));
      return;
    }
    for (const slow of this.chains.recordUsage(entry, value.result, performance.now()) ?? []) {
      this.logger.warn(slow, "sandbox: bundle keeps timing out; admitting one chain at a time");
    }
    entry.resolve(wire.invoked !== undefined ? { ...value, invoked: wire.invoked } : value);
  }

  // ── watchdog ───────────────────────────────────────────────────────────────────────────────────

  /**
   * While work is in flight the watchdog (watchdog.ts) reads the live host's slots and decides; a kill
   * goes through the crash path, which answers every in-flight chain, quarantines the culprit and
   * restarts the host.
   */
  private watch(): void {
    const host = this.hosts.host;
    if (host === undefined || !host.ready || host.gone || host.killed !== undefined || this.hosts.stopping) return;
    const pid = host.child.pid;
    const kill = inspectHost(
      {
        records: this.store.slots(host.generation),
        monoMs: monotonicMs(),
        nowMs: performance.now(),
        chain: (taskId) => this.chains.inFlight.get(taskId),
        chains: this.chains.inFlight.values(),
        isLoad: (taskId) => this.calls.loadDigest(taskId) !== undefined,
        loadLimitMs: loadWatchdogMs(this.settings.host.limits.loadTimeoutMs),
        threadTime: (tid) => (pid !== undefined ? threadTime(pid, tid) : undefined),
      },
      this.watchdog.memory,
    );
    if (kill !== undefined) this.killHost(host, kill);
  }

  /**
   * SECURITY: a corrupt, cut-off or oversized frame stream cannot be resynchronized, and whatever it
   * carried cannot be trusted: the host is killed, and recovery answers every chain in flight `crashed`
   * (an abort for a fail_closed hook) and restarts it (recovery.ts). Nothing waits on the stream.
   */
  private onProtocolError(host: HostHandle, err: VcpError): void {
    if (host.gone || host.killed !== undefined) return;
    this.killHost(host, { kind: "protocol", taskId: 0, detail: err.message });
  }

  private killHost(host: HostHandle, kill: HostKill): void {
    if (kill.kind !== "protocol") this.watchdogKills++;
    this.watchdog.memory.clear();
    this.logger.error(
      { generation: host.generation, pid: host.child.pid, ...kill },
      kill.kind === "protocol" ? "sandbox: corrupt frame stream from the sandbox host; killing it" : "sandbox: watchdog kills the sandbox host",
    );
    this.hosts.kill(host, kill);
  }

  // ── host calls (load / unload / close) ────────────────────────────────────────────────────────

  private call(message: HostCallMessage): Promise<unknown> {
    if (this.broken) return Promise.reject(this.broken);
    const host = this.hosts.open;
    return this.calls.make(message, host !== undefined, (call) => this.sendCall(host!, call));
  }

  private sendCall(host: HostHandle, call: PendingCall): void {
    this.calls.sending(call);
    this.sendCallFrame(host, call.message);
    if (call.message.t === "load") this.watchdog.arm();
  }

  /** Calls are rare and small; their frames carry the message as JSON. */
  private sendCallFrame(host: HostHandle, message: CallMessage, then?: () => void): void {
    host.writer.write(FrameKind.call, message.id, 0, { payload: JSON.stringify(message) }, this.frameBytes, `${message.t} call`, then);
  }

  // ── crash and restart ──────────────────────────────────────────────────────────────────────────

  /**
   * The host died with work in flight (DESIGN §4.1): host-death.ts answers, requeues, quarantines and
   * marks suspects; then the host is restarted.
   */
  private recoverFromCrash(host: HostHandle, exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    const death = { records: this.store.slots(host.generation), kill: host.killed, exit, now: performance.now() };
    this.store.removeSlots(host.generation);
    const outcome = settleHostDeath(death, { chains: this.chains, calls: this.calls, bundles: this.bundles });
    for (const culprit of outcome.culprits) this.announceQuarantine(culprit);
    this.restarts++;
    const info = deathReport(host, death, outcome);
    this.logger.error(info, "sandbox: host process died; restarting");
    this.emitter.emit("restart", info);
    // A reload can kill the new host and start another restart; only the latest one clears the field.
    const restart: Promise<void> = this.restartHost().finally(() => {
      if (this.restarting === restart) this.restarting = undefined;
    });
    this.restarting = restart;
  }

  private async restartHost(): Promise<void> {
    const outcome = await this.hosts.restart((host) =>
      reloadBundles(
        this.bundles,
        (digest) => this.calls.make({ t: "load", id: this.nextId++, digest }, true, (call) => this.sendCall(host, call)),
        () => this.hosts.host === host && host.ready,
        {
          quarantine: (info) => this.quarantine(info),
          loadsOnFirstUse: (meta) => this.logger.warn({ digest: meta.digest, bundle: meta.name }, "sandbox: bundle reload ran past its load budget after a restart; it loads on first use"),
        },
      ),
    );
    if (outcome instanceof VcpError) this.giveUp(outcome);
    if (outcome !== "ready") return;
    const host = this.hosts.open;
    if (host !== undefined) for (const call of this.calls.takeHeld()) this.sendCall(host, call);
    this.pump();
    this.checkDrained();
  }

  private quarantine(info: QuarantineInfo): void {
    this.bundles.quarantine(info);
    this.announceQuarantine(info);
  }

  private announceQuarantine(info: QuarantineInfo): void {
    this.logger.error(info, "sandbox: bundle quarantined");
    this.emitter.emit("quarantine", info);
  }

  private giveUp(err: VcpError): void {
    this.broken = err;
    this.chains.rejectWaiting(err);
    this.calls.rejectHeld(err);
    this.checkDrained();
  }

  // ── close ──────────────────────────────────────────────────────────────────────────────────────

  private assertOpen(): void {
    if (this.closing) throw closedError();
    if (this.broken) throw this.broken;
  }

  private checkDrained(): void {
    if (this.onDrained && this.chains.idle && this.calls.idle) {
      const done = this.onDrained;
      this.onDrained = undefined;
      done();
    }
  }

  private async closeGracefully(): Promise<void> {
    this.closing = true;
    // The watchdog keeps running while close() waits for in-flight chains: a wedged host must still be
    // killed so they are answered and close() ends.
    await new Promise<void>((resolve) => {
      this.onDrained = resolve;
      this.checkDrained();
    });
    // A restart in progress finishes first (its reloads are calls); then the host is stopped.
    while (this.restarting) await this.restarting;
    await this.hosts.stop((host) => this.sendCallFrame(host, { t: "close", id: this.nextId++ }));
    this.watchdog.stop();
    this.store.remove();
  }
}

function closedError(): VcpError {
  return new VcpError("SANDBOX_CLOSED", "the sandbox was closed; no more work is accepted");
}
