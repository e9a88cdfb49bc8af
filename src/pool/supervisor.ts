import { EventEmitter } from "node:events";
import type { ChainRequest, ChainResult, InvokeOutcome, InvokeRequest } from "../chain/types.js";
import { chainTimeBoundMs } from "../chain/deadline.js";
import { emptyChainResult } from "../chain/contract.js";
import { VcpError } from "../errors.js";
import type { HookType } from "../model/hook-type.js";
import type { ProfilePlanRef } from "../chain/plan.js";
import type { ResolvedHook } from "../model/hook.js";
import type { IntegrityOptions } from "../integrity/check.js";
import { silentLogger, type LifecycleEvent, type Logger } from "../observe/events.js";
import { assertSandboxLimits, DEFAULT_SANDBOX_LIMITS } from "../sandbox-host/index.js";
import type { BundleCode, FetchPolicy, GuestLogLine, SandboxLimits } from "../sandbox-host/types.js";
import { SlowTracker, WorkerShareTracker } from "./admission.js";
import { hostQueuePerThread } from "./batch.js";
import { CodeStore } from "./code-store.js";
import { attributeCrash, crashedChainValue, type HookIdentity, type PendingTaskView } from "./crash.js";
import { rebuildEvents } from "./events.js";
import { resolveHostEntry } from "./host-entry.js";
import { DEFAULT_FRAME_BYTES, FrameKind, frameText, MAX_FRAME_BYTES, MIN_FRAME_BYTES, protocolError, sections, type FrameHeader } from "./frames.js";
import { forkHost, type HostHandle } from "./host-process.js";
import { PlanCache, type PlanEntry } from "./plan-cache.js";
import {
  fromWireError,
  type BundleMeta,
  type CallMessage,
  type FromHost,
  type HostConfig,
  type WireChainValue,
  type WireError,
  type WirePlan,
  type WireReply,
} from "./protocol.js";
import { planRecovery } from "./recovery.js";
import { monotonicMs, threadCpu } from "./slots.js";
import { graceMs, inspectHost, WatchdogTimer, type HostKill, type WatchedChain } from "./watchdog.js";
import { DEFAULTS } from "../config/defaults.js";

/**
 * Options of {@link startSandbox}.
 *
 * @example
 * ```ts
 * const sandbox = await startSandbox({ threads: 4, maxQueue: 2048, limits: { isolateMemoryMb: 128 } });
 * ```
 */
export interface SandboxOptions {
  /** Worker threads in the sandbox host; one chain runs per thread at a time. Default 2. */
  threads?: number;
  /** Chains that may wait for a thread before runChain rejects with SANDBOX_OVERLOADED. Default 1024. */
  maxQueue?: number;
  limits?: Partial<SandboxLimits>;
  /** `vcp.fetch` policy for `system`-trust bundles. Default: no host allowed. */
  fetch?: FetchPolicy;
  logger?: Logger;
  /** Receives guest `vcp.log` lines in order; without it they go to `logger`. */
  onGuestLog?: (line: GuestLogLine) => void;
  /** A bundle with this many hook timeouts within `windowMs` is slow (one chain at a time). Default 3 in 60 000 ms. */
  slowBundle?: { timeouts: number; windowMs: number };
  /**
   * Fair share of worker time (admission.ts, WorkerShareTracker): a bundle whose hooks held more than
   * max(1 / active bundles, 1 / threads) of the workers' time over about `windowMs`, while chains
   * without it ran too, is capped at that share of the threads (at least one chain in flight) until
   * its share drops. `false` turns it off. Default `{ windowMs: 3000 }`.
   */
  fairShare?: { windowMs: number } | false;
  /** Content-addressed bundle files. Default: a fresh temporary directory, removed on close. */
  codeDir?: string;
  /**
   * Constitution integrity checks after every modifying hook (DESIGN §4.5, spec §8.2.4). Always on;
   * these settings add deployment-listed safety-critical rules, a runtime signing key and trusted keys.
   */
  integrity?: IntegrityOptions;
  /** Attach RFC 6902 diffs of each modification to hook results (for the audit log). Default false. */
  auditDiffs?: boolean;
  /** Module URLs of event profiles (default export) the workers register besides the built-in ones. */
  profileModules?: readonly string[];
  /**
   * Largest frame between the runtime and the sandbox host, bytes (frames.ts): a chain whose request
   * or reply would be larger fails with SANDBOX_FRAME_TOO_LARGE. Default 64 MiB.
   */
  frameBytes?: number;
}

/** One chain for the sandbox: the hooks in spec §5.1 order (as the registry snapshot lists them) and the request. */
export interface ChainTask {
  plan: { type: HookType; revision: number; hooks: readonly ResolvedHook[]; profile?: ProfilePlanRef };
  request: ChainRequest;
}

/** The chain result plus its lifecycle events, in emission order, for the caller to emit and audit. */
export interface ChainTaskResult {
  result: ChainResult;
  events: LifecycleEvent[];
  /** One-action tasks only (`invokeAction`): the action's raw outcome, absent when the host died first. */
  invoked?: InvokeOutcome;
}

/**
 * The sandbox as the runtime sees it: a supervised child process running a piscina pool of isolate
 * workers (DESIGN §4.1).
 *
 * @example
 * ```ts
 * const sandbox = await startSandbox();
 * await sandbox.loadBundle({ name: "pii", digest, code, trust: "deployment" });
 * const { result, events } = await sandbox.runChain({ plan: { type, revision, hooks }, request });
 * await sandbox.close();
 * ```
 */
export interface Sandbox {
  /**
   * Store the code content-addressed in the code directory and load it in a real isolate of the
   * host. Rejects with INVALID_BUNDLE when it does not load. Loading a quarantined digest again
   * lifts its quarantine (and forgets its timeouts).
   */
  loadBundle(bundle: BundleCode): Promise<{ exports: string[] }>;
  /** Forget a revision and release its isolates in every worker. Chains that name it then fail with UNKNOWN_BUNDLE. */
  unloadBundle(digest: string): Promise<void>;
  /**
   * Run one chain in one worker. Rejects with UNKNOWN_BUNDLE (an enabled hook names a revision that
   * is not loaded), SANDBOX_OVERLOADED (more than `maxQueue` chains waiting), SANDBOX_CLOSED, or
   * SANDBOX_START_FAILED (the host cannot be restarted). Hooks of a quarantined bundle are not run:
   * they are recorded `crashed` with error "bundle quarantined…" (or abort the chain when fail_closed).
   */
  runChain(task: ChainTask): Promise<ChainTaskResult>;
  /**
   * Run ONE sandboxed action of an event-profile hook (`request.native`), for a chain whose executor
   * runs in the main process because it holds exec hooks (PROFILES §6). It is a chain task of one hook
   * to the supervisor (admission, watchdog, crash attribution and quarantine apply unchanged); the
   * worker invokes the action and answers its raw outcome. A host that dies meanwhile answers
   * `crashed` (or `timeout` when the watchdog stopped the hook).
   */
  invokeAction(request: InvokeRequest): Promise<InvokeOutcome>;
  stats(): SandboxStats;
  on(event: "restart" | "quarantine", listener: (info: Record<string, unknown>) => void): void;
  /** Graceful: refuse new work (SANDBOX_CLOSED), finish queued and in-flight chains, stop the host. */
  close(): Promise<void>;
}

export interface SandboxStats {
  /** Host processes started after the first one (crash recoveries). */
  restarts: number;
  /** Chains sent to the host and not answered yet. */
  inFlight: number;
  /** Chains waiting for a thread (in the supervisor or in the host's queue). */
  queued: number;
  /** Digests whose hooks are not run until the bundle is loaded again. */
  quarantined: string[];
  /** Digests admitted one chain at a time because their hooks keep timing out. */
  slowBundles: string[];
  /** Digests capped at their share of the threads because their hooks held more than their share of worker time. */
  demotedBundles: string[];
  /**
   * Digests that were running during a crash that could not be pinned on one bundle: their chains run
   * alone in the sandbox host (nothing else in flight) until they pass probation, so their next crash
   * is unambiguous. Never quarantined for being a suspect.
   */
  suspectBundles: string[];
  /** Chain messages that carried a hook list (once per plan and host generation; others name a key). */
  plansSent: number;
  /** Host processes the watchdog killed (a hook past its budget, a wedged host). */
  watchdogKills: number;
  /** Process id of the current sandbox host, if one is running. */
  hostPid: number | undefined;
  /** A host is up and its bundles are loaded: chains run now rather than wait (GET /readyz). */
  ready: boolean;
}

const DEFAULT_FETCH: FetchPolicy = Object.freeze({ allowHosts: [...DEFAULTS.fetch.allow_hosts], denyLlmHosts: [...DEFAULTS.fetch.deny_llm_hosts] });
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 10_000;
/** Consecutive failed host starts before the sandbox gives up (SANDBOX_START_FAILED). */
const MAX_START_FAILURES = 5;
/**
 * A crash-suspect bundle is on probation — its chains run alone — until it has completed this many
 * chains without a crash, or for SUSPECT_MS at most. Counted in chains, not time, so an innocent
 * bundle that was merely busy during someone else's crash is slowed for a few chains only.
 */
const PROBATION_CHAINS = 8;
const SUSPECT_MS = 10 * 60_000;
/** The moving average of chain durations (hostCap) follows about this many recent replies. */
const CHAIN_MS_WEIGHT = 16;
/** Per executed hook, time an invoke may spend (re)creating the bundle's isolate before the action runs. */
const HOOK_SETUP_MS = 2_000;

interface PendingChain {
  id: number;
  task: ChainTask;
  plan: PlanEntry;
  /** The hooks as sent (plan.hooks). */
  hooks: readonly ResolvedHook[];
  /** Digests of the enabled hooks (plan.digests). */
  digests: readonly string[];
  gated: boolean;
  /** Dispatched alone because it runs a crash suspect (see pump). */
  solo: boolean;
  dispatches: number;
  dispatchedAt: number;
  /** Counted in inFlightByDigest (from dispatch to settle). */
  counted: boolean;
  /** performance.now() after which the watchdog kills the host (see hardDeadline). */
  hardDeadline: number;
  /** A one-action task (invokeAction): sent as `inv`. */
  invoke?: { inputJson: string; budgetMs: number };
  resolve: (value: ChainTaskResult) => void;
  reject: (err: Error) => void;
}

interface PendingCall {
  id: number;
  message: Extract<CallMessage, { t: "load" | "unload" | "close" }>;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
}

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
 * The main-process half of the sandbox (DESIGN §4.1). A facade: the decisions live in parts that
 * start no process and are unit-tested alone — plan keys (plan-cache.ts), admission (admission.ts),
 * the watchdog (watchdog.ts), crash attribution and recovery (crash.ts, recovery.ts) — and the I/O in
 * host-process.ts (fork, host events) and code-store.ts (bundle files, slots). This class owns the
 * queue, the in-flight map and the host's life, and carries out what the parts decide.
 *
 * ```
 *  runChain ─▶ plan key (hook list sent once per key and host) ─▶ waiting (FIFO; slow/suspect
 *                 │ pump(): while inFlight < hostCap()                          one at a time)
 *                 ▼
 *              inFlight ──frames──▶ host process ──▶ piscina ──▶ worker: runChain
 *                 ▲   ▲                    │ dies, or the watchdog kills it (hook past budget + grace,
 *                 │   └─ reply: result + events rebuilt (events.ts)   wedged host, chain past hard deadline)
 *                 └── requeue (not started) ◀── slots: who was inside which hook, since when
 *                     crashed/timeout result (was inside a hook), culprit quarantined, host restarted
 * ```
 */
export class SandboxSupervisor implements Sandbox {
  private readonly threads: number;
  private readonly maxQueue: number;
  /** Recent chain duration in the worker, ms (moving average of replies; hostCap). */
  private chainMs: number | undefined;
  private readonly limits: SandboxLimits;
  private readonly fetchPolicy: FetchPolicy;
  private readonly integrity: IntegrityOptions;
  private readonly auditDiffs: boolean;
  private readonly profileModules: string[];
  private readonly frameBytes: number;
  private readonly logger: Logger;
  private readonly onGuestLog: ((line: GuestLogLine) => void) | undefined;
  private readonly store: CodeStore;
  /** The compiled host-main.js to fork (host-entry.ts): resolved once, before anything is created. */
  private readonly hostEntry: string;
  private readonly slow: SlowTracker;
  private readonly share: WorkerShareTracker | undefined;
  private readonly emitter = new EventEmitter();

  private host: HostHandle | undefined;
  private generation = 0;
  private restarts = 0;
  private startFailures = 0;
  private broken: VcpError | undefined;
  private nextId = 1;
  private readonly waiting: PendingChain[] = [];
  private readonly inFlight = new Map<number, PendingChain>();
  private gatedInFlight = 0;
  private readonly calls = new Map<number, PendingCall>();
  private readonly callQueue: PendingCall[] = [];
  private readonly loaded = new Map<string, BundleMeta>();
  private readonly quarantined = new Map<string, Record<string, unknown>>();
  /** Crash-suspect digest → when it became one and the chains it has completed alone since. */
  private readonly suspects = new Map<string, { since: number; cleanChains: number }>();
  private soloInFlight = false;
  /** In-flight chains per revision, for the fair-share cap. */
  private readonly inFlightByDigest = new Map<string, number>();
  /** Worker time per revision of the chain being recorded (recordUsage). */
  private readonly hookMsScratch = new Map<string, number>();
  /** True while a restarted host reloads bundles: nothing else may run, so a crash names the reload. */
  private reloading = false;
  /** Identifies the latest restartHost run; an older one that was overtaken by a new crash stops. */
  private restartToken = 0;
  private closing = false;
  private stopping = false;
  private closePromise: Promise<void> | undefined;
  private restarting: Promise<void> | undefined;
  private onDrained: (() => void) | undefined;
  private onStopped: (() => void) | undefined;
  private readonly plans = new PlanCache();
  private plansSent = 0;
  private watchdogKills = 0;
  private readonly watchdog = new WatchdogTimer(
    () => this.inFlight.size > 0 || this.loadsInFlight(),
    () => this.watch(),
  );

  constructor(options: SandboxOptions) {
    this.threads = positiveInt(options.threads ?? DEFAULTS.pool.threads, "threads");
    this.maxQueue = nonNegativeInt(options.maxQueue ?? DEFAULTS.pool.max_queue, "maxQueue");
    this.limits = Object.freeze({ ...DEFAULT_SANDBOX_LIMITS, ...options.limits });
    // Refused here, at start, rather than by every worker thread of the host.
    assertSandboxLimits(this.limits);
    this.fetchPolicy = options.fetch ?? DEFAULT_FETCH;
    this.integrity = options.integrity ?? { safetyCriticalRuleIds: [] };
    this.auditDiffs = options.auditDiffs === true;
    this.profileModules = [...(options.profileModules ?? [])];
    this.frameBytes = options.frameBytes ?? DEFAULT_FRAME_BYTES;
    if (!Number.isSafeInteger(this.frameBytes) || this.frameBytes < MIN_FRAME_BYTES || this.frameBytes > MAX_FRAME_BYTES) {
      throw new VcpError("INVALID_CONFIG", `sandbox option frameBytes must be an integer from ${MIN_FRAME_BYTES} to ${MAX_FRAME_BYTES}, got ${String(options.frameBytes)}`, {
        field: "frameBytes",
      });
    }
    this.logger = options.logger ?? silentLogger;
    this.onGuestLog = options.onGuestLog;
    const slowBundle = options.slowBundle ?? { timeouts: 3, windowMs: 60_000 };
    this.slow = new SlowTracker(
      positiveInt(slowBundle.timeouts, "slowBundle.timeouts"),
      positiveInt(slowBundle.windowMs, "slowBundle.windowMs"),
    );
    this.share =
      options.fairShare === false ? undefined : new WorkerShareTracker(this.threads, positiveInt(options.fairShare?.windowMs ?? 3000, "fairShare.windowMs"));
    // Before the code directory exists: a missing or stale build leaves nothing behind.
    this.hostEntry = resolveHostEntry();
    this.store = new CodeStore(options.codeDir);
  }

  async start(): Promise<void> {
    try {
      await this.startHost();
    } catch (err) {
      this.store.remove();
      throw err;
    }
  }

  // ── public API ─────────────────────────────────────────────────────────────────────────────────

  async loadBundle(bundle: BundleCode): Promise<{ exports: string[] }> {
    this.assertOpen();
    const meta = CodeStore.metaOf(bundle, this.limits.codeBytes);
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
    this.loaded.set(bundle.digest, meta);
    if (this.quarantined.delete(bundle.digest)) {
      this.logger.info({ bundle: bundle.name, digest: bundle.digest }, "sandbox: bundle reloaded, quarantine lifted");
    }
    this.suspects.delete(bundle.digest);
    this.slow.reset(bundle.digest);
    this.share?.reset(bundle.digest);
    return value as { exports: string[] };
  }

  async unloadBundle(digest: string): Promise<void> {
    this.assertOpen();
    const meta = this.loaded.get(digest);
    this.quarantined.delete(digest);
    this.suspects.delete(digest);
    this.slow.reset(digest);
    this.share?.reset(digest);
    if (meta === undefined) return;
    this.loaded.delete(digest);
    // The files stay: content-addressed and immutable, they are harmless, and a chain already in
    // flight may still need them on a cold worker. A temporary code directory goes on close().
    await this.call({ t: "unload", id: this.nextId++, digest });
  }

  runChain(task: ChainTask): Promise<ChainTaskResult> {
    return this.enqueue(task, undefined);
  }

  async invokeAction(request: InvokeRequest): Promise<InvokeOutcome> {
    const { result, invoked } = await this.enqueue(
      {
        // One frozen one-hook list per hook object: the plan key (and the worker's compiled plan) is reused.
        plan: { type: "pre_inject", revision: 0, hooks: this.oneHookList(request.hook) },
        request: { chainId: request.chainId, context: {}, constitution: ONE_ACTION_CONSTITUTION, event: {}, session: { id: request.sessionId } },
      },
      { inputJson: request.inputJson, budgetMs: request.budgetMs },
    );
    if (invoked !== undefined) return invoked;
    // The host died (or the watchdog killed it) while the action ran: crash.ts answered for it.
    const execution = result.hook_results[0];
    if (execution?.outcome === "timeout") return { kind: "timeout", elapsedMs: execution.duration_ms };
    return { kind: "crashed", message: execution?.error ?? "the sandbox host died while the hook ran" };
  }

  private readonly oneHookLists = new WeakMap<ResolvedHook, readonly ResolvedHook[]>();
  private oneHookList(hook: ResolvedHook): readonly ResolvedHook[] {
    let list = this.oneHookLists.get(hook);
    if (list === undefined) {
      list = Object.freeze([hook]);
      this.oneHookLists.set(hook, list);
    }
    return list;
  }

  private enqueue(task: ChainTask, invoke: PendingChain["invoke"]): Promise<ChainTaskResult> {
    if (this.closing) return Promise.reject(closedError());
    if (this.broken) return Promise.reject(this.broken);
    if (task.plan.hooks.length === 0) {
      // The runtime short-circuits empty chains before they get here (DESIGN §4.1); answer the same way.
      return Promise.resolve({ result: emptyChainResult(task.plan.type, task.request), events: [] });
    }
    let plan: PlanEntry;
    try {
      plan = this.planFor(task);
    } catch (err) {
      return Promise.reject(err);
    }
    const digests = plan.digests;
    const now = performance.now();
    const gated = digests.some((d) => this.isGated(d, now));
    const startsNow =
      this.host?.ready === true && this.inFlight.size < this.threads && (!gated || this.gatedInFlight === 0);
    if (!startsNow && this.queuedCount() >= this.maxQueue) {
      return Promise.reject(
        new VcpError(
          "SANDBOX_OVERLOADED",
          `sandbox queue is full: ${this.queuedCount()} chains already wait (maxQueue ${this.maxQueue}); retry later`,
          { maxQueue: this.maxQueue, queued: this.queuedCount(), inFlight: this.inFlight.size },
        ),
      );
    }
    return new Promise<ChainTaskResult>((resolve, reject) => {
      this.waiting.push({
        id: this.nextId++,
        task,
        plan,
        hooks: plan.hooks,
        digests,
        gated: false,
        solo: false,
        dispatches: 0,
        dispatchedAt: 0,
        counted: false,
        hardDeadline: Number.POSITIVE_INFINITY,
        ...(invoke !== undefined ? { invoke } : {}),
        resolve,
        reject,
      });
      this.pump();
    });
  }

  stats(): SandboxStats {
    return {
      restarts: this.restarts,
      inFlight: this.inFlight.size,
      queued: this.queuedCount(),
      quarantined: [...this.quarantined.keys()],
      slowBundles: this.slow.slowDigests(performance.now()),
      demotedBundles: this.share?.demotedDigests(performance.now()) ?? [],
      suspectBundles: [...this.suspects.keys()].filter((d) => this.isSuspect(d, performance.now())),
      plansSent: this.plansSent,
      watchdogKills: this.watchdogKills,
      hostPid: this.host?.gone === false ? this.host.child.pid : undefined,
      ready: this.host?.ready === true && !this.host.gone && !this.reloading && !this.stopping,
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

  /** The plan entry of a task's hook list (plan-cache.ts); evicted keys the host holds are forgotten there too. */
  private planFor(task: ChainTask): PlanEntry {
    const { entry, evicted } = this.plans.lookup(task.plan, (digest) => this.loaded.has(digest), this.host?.generation ?? 0);
    const host = this.host;
    if (evicted.length > 0 && host?.ready && !host.gone) this.sendCallFrame(host, { t: "forget", id: 0, keys: evicted });
    return entry;
  }

  private isGated(digest: string, now: number): boolean {
    return this.slow.isSlow(digest, now) || this.isSuspect(digest, now) || this.share?.isDemoted(digest, now) === true;
  }

  /** A revision of the chain is demoted for its worker-time share and already has its cap of chains in flight. */
  private atShareCap(entry: PendingChain, now: number): boolean {
    const share = this.share;
    if (share === undefined) return false;
    for (const digest of entry.digests) {
      if (share.isDemoted(digest, now) && (this.inFlightByDigest.get(digest) ?? 0) >= share.cap()) return true;
    }
    return false;
  }

  private isSuspect(digest: string, now: number): boolean {
    const probation = this.suspects.get(digest);
    if (probation === undefined) return false;
    if (now - probation.since > SUSPECT_MS || probation.cleanChains >= PROBATION_CHAINS) {
      this.suspects.delete(digest);
      return false;
    }
    return true;
  }

  /**
   * Chains in flight at most: one running per thread, plus up to min(threads × hostQueuePerThread,
   * maxQueue) waiting inside the host, so a freed worker starts the next chains without an IPC round
   * trip and, under load, takes several of them in one task (batch.ts: one thread crossing each way
   * per batch instead of per chain). How many wait there follows the recent chain duration: about
   * HOST_QUEUE_MS of work per thread, because chains in the host are past admission and a chain
   * admitted later (or a bundle demoted meanwhile) cannot overtake them. The rest wait here, where
   * admission and crash recovery see them. A chain waiting in the host counts as in flight.
   * SECURITY: on a host death it is a bystander without a slot record (requeued once, never blamed),
   * and admission caps (slow lane, fair share, suspects) count it as running.
   */
  private hostCap(): number {
    return this.threads + Math.min(this.threads * hostQueuePerThread(this.chainMs), this.maxQueue);
  }

  /** Chains waiting for a thread: here, plus those the host holds beyond its threads. */
  private queuedCount(): number {
    return this.waiting.length + Math.max(0, this.inFlight.size - this.threads);
  }

  /**
   * Admission, in queue order:
   *
   * ```
   *  a chain with a crash suspect   → runs alone: waits until nothing is in flight (nothing behind it
   *                                   overtakes it meanwhile), and nothing starts until it ends
   *  a chain with a slow bundle     → at most one such chain in flight (the slow lane); others
   *                                   overtake it
   *  a chain with a demoted bundle  → at most share.cap() chains with that bundle in flight (its
   *                                   share of the threads); others overtake it
   *  anything else                  → up to hostCap() in flight
   * ```
   *
   * SECURITY: a suspect runs alone so that, if it kills the host again, it is the only code that was
   * running and attribution is certain; no bystander is ever blamed for its crash.
   */
  private pump(): void {
    const host = this.host;
    if (host === undefined || !host.ready || this.reloading) return;
    const now = performance.now();
    let i = 0;
    const hostCap = this.hostCap();
    while (i < this.waiting.length && this.inFlight.size < hostCap && !this.soloInFlight) {
      const entry = this.waiting[i]!;
      if (entry.digests.some((d) => this.isSuspect(d, now))) {
        if (this.inFlight.size > 0 || this.loadsInFlight()) return; // drain first; keep its place
        this.waiting.splice(i, 1);
        entry.solo = true;
        this.soloInFlight = true;
        this.dispatch(host, entry);
        return;
      }
      const gated = entry.digests.some((d) => this.slow.isSlow(d, now));
      if ((gated && this.gatedInFlight > 0) || this.atShareCap(entry, now)) {
        i++; // one slow chain at a time, demoted bundles up to their cap; chains of other bundles go ahead
        continue;
      }
      this.waiting.splice(i, 1);
      entry.gated = gated;
      if (gated) this.gatedInFlight++;
      this.dispatch(host, entry);
    }
  }

  private loadsInFlight(): boolean {
    for (const call of this.calls.values()) if (call.message.t === "load") return true;
    return false;
  }

  private dispatch(host: HostHandle, entry: PendingChain): void {
    entry.dispatches++;
    const now = performance.now();
    entry.dispatchedAt = now;
    entry.hardDeadline = this.hardDeadline(entry, now);
    this.inFlight.set(entry.id, entry);
    entry.counted = true;
    for (const digest of entry.digests) this.inFlightByDigest.set(digest, (this.inFlightByDigest.get(digest) ?? 0) + 1);
    let q: string[] | undefined;
    for (const digest of entry.digests) if (this.quarantined.has(digest)) (q ??= []).push(digest);
    const plan = entry.plan;
    // First chain of this plan for this host (a restarted host starts with none).
    const carriesPlan = plan.sentTo !== host.generation;
    try {
      // Serialized here once, parsed once in the worker; the host routes the frame by its header (protocol.ts).
      const wirePlan: WirePlan | undefined = carriesPlan
        ? { type: plan.type, revision: plan.revision, hooks: plan.hooks, ...(plan.profile !== undefined ? { profile: plan.profile } : {}) }
        : undefined;
      host.writer.write(
        FrameKind.chain,
        entry.id,
        plan.key,
        {
          plan: wirePlan !== undefined ? JSON.stringify(wirePlan) : undefined,
          quarantine: q !== undefined ? JSON.stringify(q) : undefined,
          // The hook input as it is, behind its budget: no JSON around it (protocol.ts ChainTask.inv).
          invoke: entry.invoke !== undefined ? `${entry.invoke.budgetMs}\n${entry.invoke.inputJson}` : undefined,
          payload: JSON.stringify(entry.task.request),
        },
        this.frameBytes,
        "chain request",
      );
    } catch (err) {
      // Nothing was written: over the frame limit, or an input that is not JSON.
      this.failUnsendable(entry, err);
      return;
    }
    if (carriesPlan) {
      plan.sentTo = host.generation;
      this.plansSent++;
    }
    this.watchdog.arm();
  }

  /**
   * SECURITY: the runtime bounds inputs before they get here (model/json-bounds.ts); should a request
   * still not serialize, it fails alone: not in flight, and its plan not recorded as sent to a host
   * that never received it (every later chain of the plan would fail on the missing plan).
   */
  private failUnsendable(entry: PendingChain, err: unknown): void {
    this.settleChain(entry);
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
   * The latest moment a chain can legitimately still run: its hooks' budgets (chainTimeBoundMs: the
   * sum of timeout_ms, or with a chain deadline its policy and observer shares), time to
   * (re)create isolates, and a grace; started after the chains it may queue behind in the host have
   * had theirs. The slot watchdog normally acts long before: this catches a host wedged outside hooks.
   */
  private hardDeadline(entry: PendingChain, now: number): number {
    const plan = entry.plan;
    const deadlineMs = entry.task.request.deadlineMs;
    const budget = deadlineMs !== undefined ? chainTimeBoundMs(plan.enabled, deadlineMs) : plan.timeoutSum;
    const own = budget + plan.enabled.length * HOOK_SETUP_MS + graceMs(budget);
    let start = now;
    if (this.inFlight.size >= this.threads) {
      // Queued in the host behind running chains: it starts at the latest when one of them ends.
      for (const other of this.inFlight.values()) if (other !== entry && other.hardDeadline > start) start = other.hardDeadline;
    }
    return start + own;
  }

  private settleChain(entry: PendingChain): void {
    this.inFlight.delete(entry.id); // a no-op during crash recovery, which has cleared the map
    if (entry.counted) {
      entry.counted = false;
      for (const digest of entry.digests) {
        const left = (this.inFlightByDigest.get(digest) ?? 1) - 1;
        if (left === 0) this.inFlightByDigest.delete(digest);
        else this.inFlightByDigest.set(digest, left);
      }
    }
    if (entry.gated) {
      entry.gated = false;
      this.gatedInFlight--;
    }
    if (entry.solo) {
      entry.solo = false;
      this.soloInFlight = false;
    }
  }

  private onChainReply(entry: PendingChain, reply: WireReply): void {
    this.settleChain(entry);
    if (reply.ok) {
      // A suspect that ran alone and did not kill the host has served one chain of its probation.
      for (const digest of entry.digests) {
        const probation = this.suspects.get(digest);
        if (probation !== undefined) probation.cleanChains++;
      }
      const wire = reply.value as WireChainValue;
      const ms = wire.result.duration_ms;
      if (ms >= 0) this.chainMs = this.chainMs === undefined ? ms : this.chainMs + (ms - this.chainMs) / CHAIN_MS_WEIGHT;
      const value = rebuildEvents(wire, entry.task.request);
      this.recordUsage(entry, value.result);
      entry.resolve(wire.invoked !== undefined ? { ...value, invoked: wire.invoked } : value);
    } else {
      entry.reject(fromWireError(reply.error));
    }
  }

  /** Charge each executed hook's time to its revision (fair share) and count its timeouts (slow bundles). */
  private recordUsage(entry: PendingChain, result: ChainResult): void {
    let now: number | undefined;
    const deadlineMs = entry.task.request.deadlineMs;
    // One reused map: this runs for every chain reply.
    const hookMs = this.share !== undefined ? this.hookMsScratch : undefined;
    hookMs?.clear();
    for (const execution of result.hook_results) {
      if (!(execution.duration_ms > 0) && execution.outcome !== "timeout") continue; // skipped hooks
      // Names are unique within a scope of one plan (its deployment hooks and one session's hooks).
      const hook = entry.hooks.find((h) => h.name === execution.hook && h.scope === execution.scope && h.action.bundle === execution.bundle);
      const digest = hook?.action.digest;
      if (digest === undefined) continue;
      now ??= performance.now();
      hookMs?.set(digest, (hookMs.get(digest) ?? 0) + execution.duration_ms);
      // A hook the chain deadline stopped is slow only if it used at least half the deadline itself:
      // time other hooks spent must not get its bundle throttled.
      const slow = execution.outcome === "timeout" || (execution.outcome === "deadline_exceeded" && deadlineMs !== undefined && execution.duration_ms * 2 >= deadlineMs);
      if (!slow) continue;
      const wasSlow = this.slow.isSlow(digest, now);
      this.slow.record(digest, now);
      if (!wasSlow && this.slow.isSlow(digest, now)) {
        this.logger.warn({ bundle: hook!.action.bundle, digest }, "sandbox: bundle keeps timing out; admitting one chain at a time");
      }
    }
    if (hookMs !== undefined) this.share!.recordChain(entry.digests, hookMs, now ?? performance.now());
  }

  private deliverLogs(lines: GuestLogLine[] | undefined): void {
    if (lines === undefined) return;
    for (const line of lines) {
      if (this.onGuestLog) {
        try {
          this.onGuestLog(line);
        } catch (err) {
          this.logger.error({ err }, "sandbox: onGuestLog threw");
        }
      } else if (this.logger.isLevelEnabled(line.level)) {
        this.logger[line.level]({ bundle: line.bundle, hook: line.hook, ...(line.fields ? { fields: line.fields } : {}) }, line.message);
      }
    }
  }

  // ── watchdog ───────────────────────────────────────────────────────────────────────────────────

  /**
   * While work is in flight the watchdog (watchdog.ts) reads the live host's slots and decides; a kill
   * goes through the crash path, which answers every in-flight chain, quarantines the culprit and
   * restarts the host.
   */
  private watch(): void {
    const host = this.host;
    if (host === undefined || !host.ready || host.gone || host.killed !== undefined || this.stopping) return;
    const pid = host.child.pid;
    const kill = inspectHost(
      {
        records: this.store.slots(host.generation),
        monoMs: monotonicMs(),
        nowMs: performance.now(),
        chain: (taskId) => this.watchedChain(taskId),
        chains: [...this.inFlight.keys()].map((id) => this.watchedChain(id)!),
        isLoad: (taskId) => this.calls.get(taskId)?.message.t === "load",
        threadTicks: (tid) => (pid !== undefined ? threadCpu(pid, tid)?.ticks : undefined),
      },
      this.watchdog.samples,
    );
    if (kill !== undefined) this.killHost(host, kill);
  }

  private watchedChain(taskId: number): WatchedChain | undefined {
    const entry = this.inFlight.get(taskId);
    if (entry === undefined) return undefined;
    return {
      id: entry.id,
      chainId: entry.task.request.chainId,
      dispatchedAt: entry.dispatchedAt,
      hardDeadline: entry.hardDeadline,
      hookAt: (position, name) => hookIdentityAt(entry, position, name),
    };
  }

  private killHost(host: HostHandle, kill: HostKill): void {
    host.killed = kill;
    if (kill.kind !== "protocol") this.watchdogKills++;
    this.watchdog.samples.clear();
    this.logger.error(
      { generation: host.generation, pid: host.child.pid, ...kill },
      kill.kind === "protocol" ? "sandbox: corrupt frame stream from the sandbox host; killing it" : "sandbox: watchdog kills the sandbox host",
    );
    // SECURITY: SIGKILL, not a request: a wedged or busy host cannot be asked to stop.
    host.child.kill("SIGKILL");
  }

  // ── host calls (load / unload / close) ────────────────────────────────────────────────────────

  private call(message: PendingCall["message"]): Promise<unknown> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => {
      const call: PendingCall = { id: message.id, message, resolve, reject };
      if (this.host?.ready && !this.reloading) this.sendCall(this.host, call);
      else this.callQueue.push(call);
    });
  }

  private sendCall(host: HostHandle, call: PendingCall): void {
    this.calls.set(call.id, call);
    this.sendCallFrame(host, call.message);
    if (call.message.t === "load") this.watchdog.arm();
  }

  /** Calls are rare and small; their frames carry the message as JSON. */
  private sendCallFrame(host: HostHandle, message: CallMessage, then?: () => void): void {
    host.writer.write(FrameKind.call, message.id, 0, { payload: JSON.stringify(message) }, this.frameBytes, `${message.t} call`, then);
  }

  private onCallReply(call: PendingCall, reply: WireReply): void {
    this.calls.delete(call.id);
    if (reply.ok) call.resolve(reply.value);
    else call.reject(fromWireError(reply.error as WireError));
  }

  // ── host process lifecycle ──────────────────────────────────────────────────────────────────────

  private startHost(): Promise<void> {
    const generation = ++this.generation;
    const config: HostConfig = {
      threads: this.threads,
      maxQueue: this.maxQueue,
      limits: this.limits,
      fetch: this.fetchPolicy,
      codeDir: this.store.dir,
      slotDir: this.store.slotDir,
      generation,
      integrity: this.integrity,
      auditDiffs: this.auditDiffs,
      ...(this.profileModules.length > 0 ? { profileModules: this.profileModules } : {}),
      frameBytes: this.frameBytes,
    };
    return new Promise<void>((resolve, reject) => {
      let host: HostHandle;
      try {
        host = forkHost(this.hostEntry, config, {
          onMessage: (from, message) => this.onHostMessage(from, message),
          onFrame: (from, frame, header) => this.onReplyFrame(from, frame, header),
          onProtocolError: (from, err) => this.onProtocolError(from, err),
          onGone: (from, error) => this.onHostGone(from, error),
        });
      } catch (err) {
        reject(startError(`could not fork the sandbox host: ${(err as Error).message}`));
        return;
      }
      this.host = host;
      const timer = setTimeout(() => {
        const fail = host.onGoneBeforeReady;
        host.gone = true; // this death is a failed start, not a crash to recover from
        if (this.host === host) this.host = undefined;
        host.child.kill("SIGKILL");
        fail?.(`no ready message within ${START_TIMEOUT_MS} ms`);
      }, START_TIMEOUT_MS);
      host.onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      host.onGoneBeforeReady = (why) => {
        clearTimeout(timer);
        host.onReady = undefined;
        host.onGoneBeforeReady = undefined;
        reject(startError(`sandbox host failed to start: ${why}${host.stderrTail ? `\n${host.stderrTail.trim()}` : ""}`));
      };
    });
  }

  private onHostMessage(host: HostHandle, message: FromHost): void {
    if (host !== this.host || message.t !== "ready") return;
    host.ready = true;
    this.startFailures = 0;
    host.onGoneBeforeReady = undefined;
    const onReady = host.onReady;
    host.onReady = undefined;
    onReady?.();
  }

  /** A reply frame: its payload is parsed here once (chain values included, protocol.ts). */
  private onReplyFrame(host: HostHandle, frame: Uint8Array, header: FrameHeader): void {
    if (host !== this.host || host.killed !== undefined) return;
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
    this.deliverLogs(reply.logs);
    const chain = this.inFlight.get(header.id);
    if (chain !== undefined) {
      this.onChainReply(chain, reply);
      this.pump();
      this.checkDrained();
      return;
    }
    const call = this.calls.get(header.id);
    if (call !== undefined) {
      this.onCallReply(call, reply);
      this.pump(); // a suspect's chain may have been waiting for a load to finish (see pump)
      this.checkDrained();
    }
  }

  /**
   * SECURITY: a corrupt, cut-off or oversized frame stream cannot be resynchronized, and whatever it
   * carried cannot be trusted: the host is killed, and recovery answers every chain in flight `crashed`
   * (an abort for a fail_closed hook) and restarts it (recovery.ts). Nothing waits on the stream.
   */
  private onProtocolError(host: HostHandle, err: VcpError): void {
    if (host !== this.host || host.gone || host.killed !== undefined) return;
    this.killHost(host, { kind: "protocol", taskId: 0, detail: err.message });
  }

  private onHostGone(host: HostHandle, error?: string): void {
    if (host.gone) return;
    host.gone = true;
    if (host !== this.host) return;
    this.host = undefined;
    const exit = host.exit ?? { code: null, signal: null };
    if (host.onGoneBeforeReady) {
      host.onGoneBeforeReady(error ?? `exited (code ${exit.code}, signal ${exit.signal})`);
      return;
    }
    if (this.stopping) {
      this.onStopped?.();
      return;
    }
    this.recoverFromCrash(host, exit);
  }

  /**
   * The host died with work in flight (DESIGN §4.1): attribute (crash.ts), decide (recovery.ts), then
   * carry it out here: answer the culprit's chain, requeue the bystanders, quarantine, restart.
   */
  private recoverFromCrash(host: HostHandle, exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    const now = performance.now();
    const records = this.store.slots(host.generation);
    this.store.removeSlots(host.generation);
    const attribution = attributeCrash(records, (taskId) => this.pendingTaskView(taskId));
    const kill = host.killed;
    const entries = [...this.inFlight.values()];
    const inFlight = entries.map((entry) => ({ id: entry.id, chainId: entry.task.request.chainId, dispatches: entry.dispatches, hooks: entry.hooks, entry }));
    const plan = planRecovery(inFlight, attribution, kill, exit);
    this.inFlight.clear();
    for (const entry of entries) this.settleChain(entry);
    for (const { chain, hook, outcome, error } of plan.answers) {
      const entry = chain.entry;
      entry.resolve(crashedChainValue(entry.task.plan, entry.task.request, hook, now - entry.dispatchedAt, error, outcome));
    }
    const requeue = plan.requeue.map((chain) => chain.entry);
    this.waiting.unshift(...requeue);
    for (const call of this.calls.values()) {
      if (call.message.t === "load") {
        // `sole`: the load was the only code running, so its bundle is what killed the host.
        const sole = plan.soleLoad === call.id || (kill?.kind === "load" && kill.taskId === call.id);
        call.reject(
          new VcpError("INVALID_BUNDLE", `the sandbox host died (${plan.how}) while loading bundle ${call.message.digest}`, {
            digest: call.message.digest,
            sole,
          }),
        );
      } else {
        call.resolve(null); // an unload has nothing left to release; a close has nothing left to stop
      }
    }
    this.calls.clear();

    const culprits: Record<string, unknown>[] = [];
    for (const culprit of plan.culprits) {
      const info = {
        digest: culprit.digest,
        bundle: this.loaded.get(culprit.digest)?.name,
        hook: culprit.hook.hook,
        scope: culprit.hook.scope,
        ...(culprit.hook.sessionId !== undefined ? { session_id: culprit.hook.sessionId } : {}),
        reason: `was running when the sandbox host died (${plan.how}; ${culprit.why})`,
        ...(culprit.chainId !== undefined ? { chain_id: culprit.chainId } : {}),
      };
      this.quarantine(culprit.digest, info);
      culprits.push(info);
    }
    for (const digest of plan.suspects) {
      if (!this.quarantined.has(digest)) this.suspects.set(digest, { since: now, cleanChains: 0 });
    }

    this.restarts++;
    const info = {
      ...(kill !== undefined ? { watchdog: kill.kind } : {}),
      generation: host.generation,
      pid: host.child.pid,
      code: exit.code,
      signal: exit.signal,
      crashedChains: plan.answers.length,
      requeuedChains: requeue.length,
      culprits,
      suspects: plan.suspects,
      stderrTail: host.stderrTail.slice(-2048),
    };
    this.logger.error(info, "sandbox: host process died; restarting");
    this.emitter.emit("restart", info);
    // A reload can kill the new host and start another restart; only the latest one clears the field.
    const restart: Promise<void> = this.restartHost().finally(() => {
      if (this.restarting === restart) this.restarting = undefined;
    });
    this.restarting = restart;
  }

  /** What attribution may know about a task named in a slot record; undefined once it is answered. */
  private pendingTaskView(taskId: number): PendingTaskView | undefined {
    const entry = this.inFlight.get(taskId);
    if (entry !== undefined) {
      return { digests: entry.digests, hookAt: (position, name) => hookIdentityAt(entry, position, name) };
    }
    const call = this.calls.get(taskId);
    if (call?.message.t === "load") return { digests: [], loadDigest: call.message.digest, hookAt: () => undefined };
    return undefined;
  }

  private quarantine(digest: string, info: Record<string, unknown>): void {
    this.quarantined.set(digest, info);
    this.suspects.delete(digest);
    this.logger.error(info, "sandbox: bundle quarantined");
    this.emitter.emit("quarantine", info);
  }

  private async restartHost(): Promise<void> {
    // SECURITY: no chain and no other load starts until the reloads are done (pump and call check
    // `reloading`), so a reload that kills the host is the only code that was running.
    const token = ++this.restartToken;
    this.reloading = true;
    for (;;) {
      if (this.stopping) return;
      try {
        await this.startHost();
        break;
      } catch (err) {
        this.startFailures++;
        this.logger.error({ err, failures: this.startFailures }, "sandbox: host restart failed");
        if (this.startFailures >= MAX_START_FAILURES) {
          this.giveUp(err instanceof VcpError ? err : startError(String(err)));
          return;
        }
        await new Promise((r) => setTimeout(r, 100 * 2 ** this.startFailures));
      }
    }
    await this.reloadBundles();
    if (token !== this.restartToken) return; // a reload killed the host; a newer restart took over
    this.reloading = false;
    const host = this.host;
    if (host?.ready) {
      for (const call of this.callQueue.splice(0)) this.sendCall(host, call);
    }
    this.pump();
    this.checkDrained();
  }

  /**
   * Load every loaded, non-quarantined bundle into the new host, one at a time: if a reload kills the
   * host, the culprit is that bundle and nothing else.
   */
  private async reloadBundles(): Promise<void> {
    for (const [digest, meta] of [...this.loaded]) {
      if (this.quarantined.has(digest)) continue;
      const host = this.host;
      if (!host?.ready) return;
      const id = this.nextId++;
      try {
        await new Promise((resolve, reject) => {
          this.sendCall(host, { id, message: { t: "load", id, digest }, resolve, reject });
        });
      } catch (err) {
        const hostDied = this.host !== host;
        if (!hostDied && err instanceof VcpError && err.details?.["timed_out"] === true) {
          // Its top-level code ran past the load budget on a busy machine (it loaded within it at
          // install): not a crash and not a refusal. It stays loaded; a worker loads it on first use
          // within the hook's own budget (isolate-host.ts), where a slow start is that hook's timeout.
          this.logger.warn({ digest, bundle: meta.name }, "sandbox: bundle reload ran past its load budget after a restart; it loads on first use");
          continue;
        }
        // SECURITY: a host death is this bundle's doing only when its load was the only code running.
        if (!hostDied || (err instanceof VcpError && err.details?.["sole"] === true)) {
          this.quarantine(digest, {
            digest,
            bundle: meta.name,
            reason: `failed to reload after a sandbox restart: ${(err as Error).message}`,
          });
        }
        if (hostDied) return; // that recovery takes over
      }
    }
  }

  private giveUp(err: VcpError): void {
    this.broken = err;
    for (const entry of this.waiting.splice(0)) entry.reject(err);
    for (const call of this.callQueue.splice(0)) call.reject(err);
    this.checkDrained();
  }

  // ── close ──────────────────────────────────────────────────────────────────────────────────────

  private assertOpen(): void {
    if (this.closing) throw closedError();
    if (this.broken) throw this.broken;
  }

  private checkDrained(): void {
    if (this.onDrained && this.waiting.length === 0 && this.inFlight.size === 0 && this.calls.size === 0 && this.callQueue.length === 0) {
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
    this.stopping = true;
    const host = this.host;
    if (host !== undefined && !host.gone) {
      const stopped = new Promise<void>((resolve) => {
        this.onStopped = resolve;
      });
      const timer = setTimeout(() => host.child.kill("SIGKILL"), STOP_TIMEOUT_MS);
      if (host.ready && !host.gone) {
        this.sendCallFrame(host, { t: "close", id: this.nextId++ });
      } else {
        host.child.kill("SIGKILL");
      }
      await stopped;
      clearTimeout(timer);
    }
    this.host = undefined;
    this.watchdog.stop();
    this.store.remove();
  }
}

/**
 * The hook a slot record names: the one at `position` of the list sent with the chain, provided its
 * name matches the record's (a cross-check, never a lookup). Undefined when they disagree or the hook
 * has no revision: such a record stays anonymous and can make a crash ambiguous, never blame a bundle.
 */
function hookIdentityAt(entry: PendingChain, position: number | undefined, name: string): HookIdentity | undefined {
  if (position === undefined) return undefined;
  const hook = entry.hooks[position];
  const digest = hook?.action.digest;
  if (hook === undefined || hook.name !== name || digest === undefined) return undefined;
  return {
    digest,
    bundle: hook.action.bundle,
    hook: hook.name,
    scope: hook.scope,
    ...(hook.session_id !== undefined ? { sessionId: hook.session_id } : {}),
    position,
  };
}

/** The request of a one-action task carries no VCP context: the worker reads only the hook's input text. */
const ONE_ACTION_CONSTITUTION = Object.freeze({ id: "(one-action)", version: "0", rules: [] }) as unknown as ChainRequest["constitution"];

function closedError(): VcpError {
  return new VcpError("SANDBOX_CLOSED", "the sandbox was closed; no more work is accepted");
}

function startError(message: string): VcpError {
  return new VcpError("SANDBOX_START_FAILED", message);
}

function positiveInt(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new VcpError("INVALID_CONFIG", `sandbox option ${field} must be a positive integer, got ${String(value)}`, { field });
  }
  return value;
}

function nonNegativeInt(value: number, field: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new VcpError("INVALID_CONFIG", `sandbox option ${field} must be a non-negative integer, got ${String(value)}`, { field });
  }
  return value;
}
