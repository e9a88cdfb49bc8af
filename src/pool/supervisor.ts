import { fork, type ChildProcess } from "node:child_process";
import { EventEmitter } from "node:events";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, unlinkSync } from "node:fs";
import { readFile, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChainRequest, ChainResult } from "../chain/types.js";
import { chainTimeBoundMs } from "../chain/deadline.js";
import { emptyChainResult } from "../chain/contract.js";
import { VcpError } from "../errors.js";
import type { HookType } from "../model/hook-type.js";
import type { ResolvedHook } from "../model/hook.js";
import type { IntegrityOptions } from "../integrity/check.js";
import { silentLogger, type LifecycleEvent, type Logger } from "../observe/events.js";
import { assertSandboxLimits, DEFAULT_SANDBOX_LIMITS } from "../sandbox-host/index.js";
import type { BundleCode, FetchPolicy, GuestLogLine, SandboxLimits } from "../sandbox-host/types.js";
import { SlowTracker, WorkerShareTracker } from "./admission.js";
import { attributeCrash, crashedChainValue, type CrashAttribution, type HookIdentity, type PendingTaskView } from "./crash.js";
import { rebuildEvents } from "./events.js";
import { resolveHostEntry } from "./host-entry.js";
import {
  digestFileStem,
  fromWireError,
  type BundleMeta,
  type ChainMessage,
  type FromHost,
  type HostConfig,
  type ToHost,
  type WireChainValue,
  type WireError,
} from "./protocol.js";
import { monotonicMs, readSlots, threadCpu } from "./slots.js";
import { BUNDLE_NAME } from "../model/names.js";
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
}

/** One chain for the sandbox: the hooks in spec §5.1 order (as the registry snapshot lists them) and the request. */
export interface ChainTask {
  plan: { type: HookType; revision: number; hooks: readonly ResolvedHook[] };
  request: ChainRequest;
}

/** The chain result plus its lifecycle events, in emission order, for the caller to emit and audit. */
export interface ChainTaskResult {
  result: ChainResult;
  events: LifecycleEvent[];
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
  /** Chains waiting for a thread (in the supervisor or in the host's pool queue). */
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
const STDERR_TAIL_BYTES = 8192;
const TRUST = new Set(["system", "deployment", "session"]);
/** Plan keys the supervisor remembers (and the host holds); the least recently used is forgotten. */
const PLAN_KEYS = 1024;
/** How often the watchdog reads the slots while work is in flight. */
const WATCHDOG_INTERVAL_MS = 250;
/**
 * A bundle load (compile, top-level code, export listing; the host bounds each run phase by
 * LOAD_TIMEOUT_MS) that has not finished after this long has wedged its worker.
 */
const LOAD_WATCHDOG_MS = 10_000;
/** Per executed hook, time an invoke may spend (re)creating the bundle's isolate before the action runs. */
const HOOK_SETUP_MS = 2_000;
/**
 * While a hook overruns, its worker thread must use at least this share of one core to count as busy
 * (outcome `timeout`: it ignores termination); below it the thread is wedged (outcome `crashed`: e.g.
 * isolated-vm's fatal-OOM handler sleeps forever on the worker thread). Linux clock ticks are 10 ms.
 */
const BUSY_SHARE = 0.25;
const CLOCK_TICK_MS = 10;
/** Overrun observed for at least this long before the thread's CPU share is trusted. */
const MIN_SAMPLE_MS = 500;

/**
 * Time past a hook's budget before the watchdog kills the host. Must stay under isolated-vm's own
 * 5 s "Script failed to terminate" give-up, whose catastrophic-error path can crash the host itself.
 */
function graceMs(budgetMs: number): number {
  return Math.min(4000, Math.max(1500, Math.ceil(budgetMs / 2)));
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

interface HostHandle {
  child: ChildProcess;
  generation: number;
  ready: boolean;
  exit?: { code: number | null; signal: NodeJS.Signals | null };
  disconnected: boolean;
  gone: boolean;
  stderrTail: string;
  onReady?: () => void;
  onGoneBeforeReady?: (why: string) => void;
  /** Set when the watchdog killed this host, before the SIGKILL: recovery reads it. */
  killed?: HostKill;
}

/** Why the watchdog killed a host, and whom to blame. */
interface HostKill {
  /**
   * overrun: a hook ran past budget + grace while its thread kept busy (ignoring termination);
   * wedged: a hook ran past budget + grace while its thread did nothing (a fatal error inside V8);
   * deadline: a chain outlived its whole hard deadline; load: a bundle load never finished.
   */
  kind: "overrun" | "wedged" | "deadline" | "load";
  taskId: number;
  /** The overrunning hook, named by its position in the task's hook list (overrun, wedged). */
  hook?: HookIdentity;
  /** Human-readable, for error texts and logs. */
  detail: string;
}

/**
 * One hook list as the supervisor knows it: a key that names it to the host for the life of the
 * supervisor, and what admission and the watchdog need, computed once per plan instead of per chain.
 */
interface PlanEntry {
  key: number;
  type: HookType;
  revision: number;
  /** Shallow copy of the caller's list: a later chain reuses the key only if every element is the same object. */
  source: readonly ResolvedHook[];
  /** The hooks as sent: `action.digest` filled in where the caller left it out. */
  hooks: readonly ResolvedHook[];
  /** Hooks without a digest, and the revision they were pinned to (if any) when the entry was made. */
  pins: readonly { bundle: string; digest: string | undefined }[];
  /** Enabled hooks and their digests, checked against the loaded bundles on every chain. */
  enabled: readonly { hook: ResolvedHook; digest: string | undefined }[];
  /** Distinct digests of the enabled hooks. */
  digests: readonly string[];
  /** Sum of the enabled hooks' timeout_ms. */
  timeoutSum: number;
  /** Host generation that holds this plan; 0 when none does. */
  sentTo: number;
}

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
  resolve: (value: ChainTaskResult) => void;
  reject: (err: Error) => void;
}

interface PendingCall {
  id: number;
  message: Extract<ToHost, { t: "load" | "unload" | "close" }>;
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
 * The main-process half of the sandbox (DESIGN §4.1):
 *
 * ```
 *  runChain ─▶ plan key (hook list sent once per key and host) ─▶ waiting (FIFO; slow/suspect
 *                 │ pump(): while inFlight < threads + min(threads, maxQueue)   one at a time)
 *                 ▼
 *              inFlight ──IPC json──▶ host process ──▶ piscina ──▶ worker: runChain
 *                 ▲   ▲                    │ dies, or the watchdog kills it (hook past budget + grace,
 *                 │   └─ reply: result + events rebuilt (events.ts)   wedged host, chain past hard deadline)
 *                 └── requeue (not started) ◀── slots: who was inside which hook, since when
 *                     crashed/timeout result (was inside a hook), culprit quarantined, host restarted
 * ```
 */
export class SandboxSupervisor implements Sandbox {
  private readonly threads: number;
  private readonly maxQueue: number;
  private readonly hostCap: number;
  private readonly limits: SandboxLimits;
  private readonly fetchPolicy: FetchPolicy;
  private readonly integrity: IntegrityOptions;
  private readonly auditDiffs: boolean;
  private readonly logger: Logger;
  private readonly onGuestLog: ((line: GuestLogLine) => void) | undefined;
  private readonly codeDir: string;
  private readonly ownsCodeDir: boolean;
  private readonly slotDir: string;
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
  private readonly latestByName = new Map<string, string>();
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
  private readonly planByList = new WeakMap<readonly ResolvedHook[], PlanEntry>();
  /** Insertion order = least recently used first. */
  private readonly planLru = new Map<number, PlanEntry>();
  private nextPlanKey = 1;
  private plansSent = 0;
  private watchdogKills = 0;
  private watchdog: NodeJS.Timeout | undefined;
  /** "taskId hook startMs" of an overrunning hook → CPU ticks of its thread when first seen over budget. */
  private readonly overruns = new Map<string, { ticks: number | undefined; atMs: number }>();

  constructor(options: SandboxOptions) {
    this.threads = positiveInt(options.threads ?? DEFAULTS.pool.threads, "threads");
    this.maxQueue = nonNegativeInt(options.maxQueue ?? DEFAULTS.pool.max_queue, "maxQueue");
    // Up to min(threads, maxQueue) chains wait inside the host so a freed worker starts the next chain
    // without an IPC round trip; the rest wait here, where admission and crash recovery can see them.
    this.hostCap = this.threads + Math.min(this.threads, this.maxQueue);
    this.limits = Object.freeze({ ...DEFAULT_SANDBOX_LIMITS, ...options.limits });
    // Refused here, at start, rather than by every worker thread of the host.
    assertSandboxLimits(this.limits);
    this.fetchPolicy = options.fetch ?? DEFAULT_FETCH;
    this.integrity = options.integrity ?? { safetyCriticalRuleIds: [] };
    this.auditDiffs = options.auditDiffs === true;
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
    this.ownsCodeDir = options.codeDir === undefined;
    this.codeDir = options.codeDir ?? mkdtempSync(join(tmpdir(), "vcp-sandbox-"));
    this.slotDir = join(this.codeDir, "slots");
    mkdirSync(this.slotDir, { recursive: true });
    // Slots of a previous run in the same directory would alias generation numbers.
    for (const name of readdirSync(this.slotDir)) if (name.endsWith(".slot")) rmSync(join(this.slotDir, name), { force: true });
  }

  async start(): Promise<void> {
    try {
      await this.startHost();
    } catch (err) {
      this.cleanupDir();
      throw err;
    }
  }

  // ── public API ─────────────────────────────────────────────────────────────────────────────────

  async loadBundle(bundle: BundleCode): Promise<{ exports: string[] }> {
    this.assertOpen();
    const meta = this.validateBundle(bundle);
    await this.storeBundle(bundle, meta);
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
    this.latestByName.set(bundle.name, bundle.digest);
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
    if (this.latestByName.get(meta.name) === digest) this.latestByName.delete(meta.name);
    // The files stay: content-addressed and immutable, they are harmless, and a chain already in
    // flight may still need them on a cold worker. A temporary code directory goes on close().
    await this.call({ t: "unload", id: this.nextId++, digest });
  }

  runChain(task: ChainTask): Promise<ChainTaskResult> {
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

  /**
   * The plan entry of a task's hook list. The runtime hands the same array for every chain of one
   * registry plan, so the entry (and its key) is found by identity; a list whose elements changed, or
   * whose unpinned hooks would now pin another revision, gets a new entry. Throws UNKNOWN_BUNDLE when
   * an enabled hook names a revision that is not loaded (checked on every chain: bundles come and go).
   */
  private planFor(task: ChainTask): PlanEntry {
    const list = task.plan.hooks;
    let entry = this.planByList.get(list);
    if (entry === undefined || !this.planMatches(entry, task)) {
      entry = this.createPlan(task);
      this.planByList.set(list, entry);
    }
    for (const { hook, digest } of entry.enabled) {
      if (digest === undefined || !this.loaded.has(digest)) {
        throw new VcpError(
          "UNKNOWN_BUNDLE",
          `hook ${hook.name} refers to bundle ${hook.action.bundle}${digest ? ` (${digest})` : ""}, which the sandbox has not loaded`,
          { hook: hook.name, bundle: hook.action.bundle, ...(digest ? { digest } : {}) },
        );
      }
    }
    // Least recently used first: move to the end.
    this.planLru.delete(entry.key);
    this.planLru.set(entry.key, entry);
    if (this.planLru.size > PLAN_KEYS) this.evictPlans();
    return entry;
  }

  private planMatches(entry: PlanEntry, task: ChainTask): boolean {
    const list = task.plan.hooks;
    if (entry.type !== task.plan.type || entry.revision !== task.plan.revision || entry.source.length !== list.length) return false;
    for (let i = 0; i < list.length; i++) if (entry.source[i] !== list[i]) return false;
    for (const pin of entry.pins) if (this.latestByName.get(pin.bundle) !== pin.digest) return false;
    return true;
  }

  private createPlan(task: ChainTask): PlanEntry {
    const source = task.plan.hooks.slice();
    let hooks: ResolvedHook[] | undefined;
    const pins: { bundle: string; digest: string | undefined }[] = [];
    const enabled: { hook: ResolvedHook; digest: string | undefined }[] = [];
    const digests: string[] = [];
    let timeoutSum = 0;
    for (let i = 0; i < source.length; i++) {
      const hook = source[i]!;
      let digest = hook.action.digest;
      if (digest === undefined) {
        digest = this.latestByName.get(hook.action.bundle);
        pins.push({ bundle: hook.action.bundle, digest });
        if (digest !== undefined) {
          // Hooks are frozen: copy the one hook that needs its revision pinned for the worker.
          hooks ??= source.slice();
          hooks[i] = Object.freeze({ ...hook, action: Object.freeze({ ...hook.action, digest }) });
        }
      }
      if (!hook.enabled) continue;
      enabled.push({ hook, digest });
      timeoutSum += hook.timeout_ms;
      if (digest !== undefined && !digests.includes(digest)) digests.push(digest);
    }
    return {
      key: this.nextPlanKey++,
      type: task.plan.type,
      revision: task.plan.revision,
      source,
      hooks: hooks ?? source,
      pins,
      enabled,
      digests,
      timeoutSum,
      sentTo: 0,
    };
  }

  /** Forget the least recently used plans here and in the host (which holds exactly what was sent). */
  private evictPlans(): void {
    const forget: number[] = [];
    for (const [key, entry] of this.planLru) {
      if (this.planLru.size <= PLAN_KEYS) break;
      this.planLru.delete(key);
      if (entry.sentTo !== 0 && entry.sentTo === this.host?.generation) forget.push(key);
      // Still reachable through planByList while the caller holds the list: then it is sent again.
      entry.sentTo = 0;
    }
    const host = this.host;
    if (forget.length > 0 && host?.ready && host.child.connected) host.child.send({ t: "forget", keys: forget } satisfies ToHost);
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
   *  anything else                  → up to hostCap in flight
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
    while (i < this.waiting.length && this.inFlight.size < this.hostCap && !this.soloInFlight) {
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
    const message: ChainMessage = { t: "chain", id: entry.id, k: plan.key, request: entry.task.request };
    const carriesPlan = plan.sentTo !== host.generation;
    // First chain of this plan for this host (a restarted host starts with none).
    if (carriesPlan) message.plan = { type: plan.type, revision: plan.revision, hooks: plan.hooks };
    if (q) message.q = q;
    try {
      host.child.send(message);
    } catch (err) {
      // SECURITY: the runtime bounds inputs before they get here (model/json-bounds.ts); should a request
      // still not serialize, it fails alone: not in flight, and its plan not recorded as sent to a host
      // that never received it (every later chain of the plan would fail on the missing plan).
      this.settleChain(entry);
      entry.reject(
        new VcpError("INVALID_INPUT", `the chain input could not be sent to the sandbox: ${err instanceof Error ? err.message : String(err)}`, { field: "input", rule: "json" }),
      );
      return;
    }
    if (carriesPlan) {
      plan.sentTo = host.generation;
      this.plansSent++;
    }
    this.armWatchdog();
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
    const budget = deadlineMs !== undefined ? chainTimeBoundMs(plan.enabled.map((e) => e.hook), deadlineMs) : plan.timeoutSum;
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

  private onChainReply(entry: PendingChain, reply: Extract<FromHost, { t: "reply" }>): void {
    this.settleChain(entry);
    if (reply.ok) {
      // A suspect that ran alone and did not kill the host has served one chain of its probation.
      for (const digest of entry.digests) {
        const probation = this.suspects.get(digest);
        if (probation !== undefined) probation.cleanChains++;
      }
      const value = rebuildEvents(reply.value as WireChainValue, entry.task.request);
      this.recordUsage(entry, value.result);
      entry.resolve(value);
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
   * A hook that ignores termination (BigInt#toString, Array#fill) or a fatal V8 error that leaves the
   * host alive but asleep (isolated-vm's OOM handler) would hold a chain, a worker and, in the end,
   * the whole sandbox forever (DESIGN §4.3). While work is in flight the watchdog reads the slots:
   *
   * ```
   *  slot "I hook start budget tid", running > budget + grace ─▶ SIGKILL the host
   *       thread used CPU meanwhile  ⇒ kind overrun ⇒ that hook: outcome timeout
   *       thread asleep              ⇒ kind wedged  ⇒ that hook: outcome crashed
   *  slot "L start", running > LOAD_WATCHDOG_MS  ─▶ SIGKILL (the load fails INVALID_BUNDLE)
   *  chain past its hard deadline (no slot says why) ─▶ SIGKILL, attribution by slots as for a crash
   * ```
   *
   * The crash path then answers every in-flight chain, quarantines the culprit and restarts the host.
   */
  private armWatchdog(): void {
    if (this.watchdog !== undefined) return;
    this.watchdog = setInterval(() => this.watch(), WATCHDOG_INTERVAL_MS);
    this.watchdog.unref();
  }

  private watch(): void {
    const host = this.host;
    const loads = [...this.calls.values()].some((c) => c.message.t === "load");
    if (this.inFlight.size === 0 && !loads) {
      clearInterval(this.watchdog);
      this.watchdog = undefined;
      this.overruns.clear();
      return;
    }
    if (host === undefined || !host.ready || host.gone || host.killed !== undefined || this.stopping) return;
    const mono = monotonicMs();
    const seen = new Set<string>();
    for (const record of readSlots(this.slotDir, host.generation)) {
      if (record.startMs === undefined) continue;
      const ran = mono - record.startMs;
      if (record.phase === "L") {
        // SECURITY: a load that never ends wedges a worker; top-level code is guest code too.
        if (this.calls.get(record.taskId)?.message.t === "load" && ran > LOAD_WATCHDOG_MS) {
          this.killHost(host, { kind: "load", taskId: record.taskId, detail: `a bundle load ran for ${ran} ms` });
          return;
        }
        continue;
      }
      if (record.phase !== "I" || record.hook === undefined || record.budgetMs === undefined) continue;
      const entry = this.inFlight.get(record.taskId);
      if (entry === undefined || ran <= record.budgetMs) continue;
      const key = `${record.taskId} ${record.hook} ${record.startMs}`;
      seen.add(key);
      const cpu = host.child.pid !== undefined ? threadCpu(host.child.pid, record.tid ?? 0) : undefined;
      let sample = this.overruns.get(key);
      if (sample === undefined) {
        sample = { ticks: cpu?.ticks, atMs: mono };
        this.overruns.set(key, sample);
      }
      // SECURITY: the isolate's own timeout and the host's async deadline had budget + grace to act.
      if (ran <= record.budgetMs + graceMs(record.budgetMs) || mono - sample.atMs < MIN_SAMPLE_MS) continue;
      // Without per-thread CPU (not Linux) an overrun counts as busy: the hook ran past its budget.
      const busy =
        cpu === undefined || sample.ticks === undefined || (cpu.ticks - sample.ticks) * CLOCK_TICK_MS >= BUSY_SHARE * (mono - sample.atMs);
      // SECURITY: the hook at the record's position, never a lookup by name (a session hook may share
      // its name with another bundle's deployment hook); no match leaves the kill unattributed.
      const identity = hookIdentityAt(entry, record.position, record.hook);
      this.killHost(host, {
        kind: busy ? "overrun" : "wedged",
        taskId: record.taskId,
        ...(identity !== undefined ? { hook: identity } : {}),
        detail: busy
          ? `hook ${record.hook} ran ${ran} ms against a budget of ${record.budgetMs} ms and ignored termination`
          : `hook ${record.hook} stopped responding ${ran} ms into a budget of ${record.budgetMs} ms (its worker thread is wedged)`,
      });
      return;
    }
    for (const key of this.overruns.keys()) if (!seen.has(key)) this.overruns.delete(key);
    const now = performance.now();
    for (const entry of this.inFlight.values()) {
      if (now > entry.hardDeadline) {
        this.killHost(host, {
          kind: "deadline",
          taskId: entry.id,
          detail: `chain ${entry.task.request.chainId} outlived its hard deadline (${Math.round(entry.hardDeadline - entry.dispatchedAt)} ms after dispatch)`,
        });
        return;
      }
    }
  }

  private killHost(host: HostHandle, kill: HostKill): void {
    host.killed = kill;
    this.watchdogKills++;
    this.overruns.clear();
    this.logger.error({ generation: host.generation, pid: host.child.pid, ...kill }, "sandbox: watchdog kills the sandbox host");
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
    host.child.send(call.message);
    if (call.message.t === "load") this.armWatchdog();
  }

  private onCallReply(call: PendingCall, reply: Extract<FromHost, { t: "reply" }>): void {
    this.calls.delete(call.id);
    if (reply.ok) call.resolve(reply.value);
    else call.reject(fromWireError(reply.error as WireError));
  }

  // ── bundles on disk ─────────────────────────────────────────────────────────────────────────────

  private validateBundle(bundle: BundleCode): BundleMeta {
    const invalid = (why: string): VcpError =>
      new VcpError("INVALID_BUNDLE", `bundle ${String(bundle?.name)}: ${why}`, { bundle: bundle?.name, digest: bundle?.digest });
    if (typeof bundle?.name !== "string" || !BUNDLE_NAME.regex.test(bundle.name)) throw invalid(`name ${BUNDLE_NAME.rule}`);
    if (typeof bundle.digest !== "string" || digestFileStem(bundle.digest) === undefined) {
      throw invalid("digest must be sha256:<hex> or a token of [A-Za-z0-9_-]");
    }
    if (typeof bundle.code !== "string") throw invalid("code must be a string");
    const bytes = Buffer.byteLength(bundle.code);
    if (bytes > this.limits.codeBytes) throw invalid(`code is ${bytes} bytes, over the limit of ${this.limits.codeBytes}`);
    if (!TRUST.has(bundle.trust)) throw invalid("trust must be system, deployment or session");
    return {
      name: bundle.name,
      digest: bundle.digest,
      trust: bundle.trust,
      ...(bundle.memoryMb !== undefined ? { memoryMb: bundle.memoryMb } : {}),
      ...(bundle.isolation !== undefined ? { isolation: bundle.isolation } : {}),
    };
  }

  /**
   * `<stem>.js` is immutable: an existing file must hold the same code (a digest names one content).
   * Both files are written to a temporary name and renamed, so a worker never reads half a file.
   */
  private async storeBundle(bundle: BundleCode, meta: BundleMeta): Promise<void> {
    const stem = digestFileStem(bundle.digest)!;
    const codePath = join(this.codeDir, `${stem}.js`);
    const existing = await readFile(codePath, "utf8").catch(() => undefined);
    if (existing !== undefined && existing !== bundle.code) {
      throw new VcpError("INVALID_BUNDLE", `digest ${bundle.digest} is already stored with different code`, {
        bundle: bundle.name,
        digest: bundle.digest,
      });
    }
    const suffix = `.${process.pid}.${this.nextId++}.tmp`;
    if (existing === undefined) {
      await writeFile(codePath + suffix, bundle.code);
      await rename(codePath + suffix, codePath);
    }
    const metaPath = join(this.codeDir, `${stem}.json`);
    await writeFile(metaPath + suffix, JSON.stringify(meta));
    await rename(metaPath + suffix, metaPath);
  }

  // ── host process lifecycle ──────────────────────────────────────────────────────────────────────

  private startHost(): Promise<void> {
    const generation = ++this.generation;
    const config: HostConfig = {
      threads: this.threads,
      maxQueue: this.maxQueue,
      limits: this.limits,
      fetch: this.fetchPolicy,
      codeDir: this.codeDir,
      slotDir: this.slotDir,
      generation,
      integrity: this.integrity,
      auditDiffs: this.auditDiffs,
    };
    return new Promise<void>((resolve, reject) => {
      let child: ChildProcess;
      try {
        // process.execPath: the same Node 24 that runs the caller (npm scripts put it first on PATH).
        child = fork(this.hostEntry, [], {
          execPath: process.execPath,
          execArgv: ["--no-node-snapshot"], // isolated-vm requires it, per process (DESIGN §1)
          serialization: "json", // ≈30 µs round trip against ≈120 µs for "advanced" (DESIGN §4.1)
          stdio: ["ignore", "ignore", "pipe", "ipc"],
        });
      } catch (err) {
        reject(startError(`could not fork the sandbox host: ${(err as Error).message}`));
        return;
      }
      const host: HostHandle = { child, generation, ready: false, disconnected: false, gone: false, stderrTail: "" };
      this.host = host;
      trackHost(child);
      const timer = setTimeout(() => {
        const fail = host.onGoneBeforeReady;
        host.gone = true; // this death is a failed start, not a crash to recover from
        if (this.host === host) this.host = undefined;
        child.kill("SIGKILL");
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
      child.stderr?.setEncoding("utf8");
      child.stderr?.on("data", (chunk: string) => {
        host.stderrTail = (host.stderrTail + chunk).slice(-STDERR_TAIL_BYTES);
      });
      child.on("message", (message: FromHost) => this.onHostMessage(host, message));
      child.on("error", (err) => {
        // Spawn failure (no exit follows) or a failed send to a dying child (exit follows).
        if (child.pid === undefined) {
          host.exit = { code: null, signal: null };
          host.disconnected = true;
          this.onHostGone(host, err.message);
        }
      });
      child.on("exit", (code, signal) => {
        host.exit = { code, signal };
        if (host.disconnected || !child.connected) {
          host.disconnected = true;
          this.onHostGone(host);
        }
      });
      // Replies still in the pipe are read before "disconnect": act on a death only after both events.
      child.on("disconnect", () => {
        host.disconnected = true;
        if (host.exit) this.onHostGone(host);
      });
      child.send({ t: "init", config } satisfies ToHost);
    });
  }

  private onHostMessage(host: HostHandle, message: FromHost): void {
    if (host !== this.host) return;
    if (message.t === "ready") {
      host.ready = true;
      this.startFailures = 0;
      host.onGoneBeforeReady = undefined;
      const onReady = host.onReady;
      host.onReady = undefined;
      onReady?.();
      return;
    }
    this.deliverLogs(message.logs);
    const chain = this.inFlight.get(message.id);
    if (chain !== undefined) {
      this.onChainReply(chain, message);
      this.pump();
      this.checkDrained();
      return;
    }
    const call = this.calls.get(message.id);
    if (call !== undefined) {
      this.onCallReply(call, message);
      this.pump(); // a suspect's chain may have been waiting for a load to finish (see pump)
      this.checkDrained();
    }
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
   * The host died with work in flight (DESIGN §4.1): attribute, answer, quarantine, restart.
   * The chain that was running the culprit's hook gets a `crashed` (or `timeout`) result for it;
   * every other chain goes back to the front of the queue once (guest side effects are data only,
   * so a rerun is safe) and is answered by its own second run — or `crashed` if that dies too.
   *
   * When the crash cannot be pinned on one bundle, nobody is blamed yet: every chain goes back to
   * the queue once, and since its bundles are now suspects it runs alone. The culprit's chain then
   * kills the host again with nothing else running (certain: it is quarantined and answered
   * `crashed`), and the bystanders' chains are answered normally instead of `crashed`.
   */
  private recoverFromCrash(host: HostHandle, exit: { code: number | null; signal: NodeJS.Signals | null }): void {
    const now = performance.now();
    const records = readSlots(this.slotDir, host.generation);
    this.removeSlots(host.generation);
    let attribution: CrashAttribution = attributeCrash(records, (taskId) => this.pendingTaskView(taskId));
    const kill = host.killed;
    if (kill !== undefined && (kill.kind === "overrun" || kill.kind === "wedged") && kill.hook !== undefined) {
      // The watchdog saw who overran: that hook is the culprit, the other running hooks are bystanders.
      attribution.running.set(kill.taskId, kill.hook);
      attribution = {
        running: attribution.running,
        culprits: new Map([[kill.hook.digest, { taskId: kill.taskId, hook: kill.hook, why: kill.kind === "overrun" ? "overran" : "wedged" }]]),
        suspects: [],
      };
    }
    const how = kill !== undefined ? `killed by the supervisor: ${kill.detail}` : exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`;
    const requeue: PendingChain[] = [];
    let crashed = 0;
    const entries = [...this.inFlight.values()].sort((a, b) => a.id - b.id);
    this.inFlight.clear();
    const culpritTasks = new Set([...attribution.culprits.values()].map((c) => c.taskId));
    for (const entry of entries) {
      this.settleChain(entry);
      const runningHook = attribution.running.get(entry.id);
      // Not the culprit's chain (or no culprit yet): a bystander, run again rather than answered crashed.
      if (!culpritTasks.has(entry.id) && entry.dispatches < 2) {
        requeue.push(entry);
        continue;
      }
      const hook = (runningHook !== undefined ? entry.hooks[runningHook.position] : undefined) ?? entry.hooks.find((h) => h.enabled) ?? entry.hooks[0]!;
      crashed++;
      const culprit = kill?.hook !== undefined && kill.taskId === entry.id && runningHook?.position === kill.hook.position;
      if (culprit && kill.kind === "overrun") {
        entry.resolve(
          crashedChainValue(
            entry.task.plan,
            entry.task.request,
            hook,
            now - entry.dispatchedAt,
            `timed out: the hook kept running past its budget and ignored termination (${kill.detail}); the sandbox host process was recycled`,
            "timeout",
          ),
        );
      } else if (culprit && kill.kind === "wedged") {
        entry.resolve(
          crashedChainValue(
            entry.task.plan,
            entry.task.request,
            hook,
            now - entry.dispatchedAt,
            `sandbox host crashed while the hook ran: ${kill.detail}; the supervisor killed and recycled the host process`,
          ),
        );
      } else {
        entry.resolve(
          crashedChainValue(entry.task.plan, entry.task.request, hook, now - entry.dispatchedAt, `sandbox host crashed while the hook ran (${how})`),
        );
      }
    }
    this.waiting.unshift(...requeue);
    for (const call of this.calls.values()) {
      if (call.message.t === "load") {
        // `sole`: the load was the only code running, so its bundle is what killed the host.
        const sole = attribution.soleLoad === call.id || (kill?.kind === "load" && kill.taskId === call.id);
        call.reject(
          new VcpError("INVALID_BUNDLE", `the sandbox host died (${how}) while loading bundle ${call.message.digest}`, {
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
    for (const [digest, culprit] of attribution.culprits) {
      const entry = entries.find((e) => e.id === culprit.taskId);
      const info = {
        digest,
        bundle: this.loaded.get(digest)?.name,
        hook: culprit.hook.hook,
        scope: culprit.hook.scope,
        ...(culprit.hook.sessionId !== undefined ? { session_id: culprit.hook.sessionId } : {}),
        reason: `was running when the sandbox host died (${how}; ${culprit.why})`,
        ...(entry ? { chain_id: entry.task.request.chainId } : {}),
      };
      this.quarantine(digest, info);
      culprits.push(info);
    }
    for (const digest of attribution.suspects) {
      if (!this.quarantined.has(digest)) this.suspects.set(digest, { since: now, cleanChains: 0 });
    }

    this.restarts++;
    const info = {
      ...(kill !== undefined ? { watchdog: kill.kind } : {}),
      generation: host.generation,
      pid: host.child.pid,
      code: exit.code,
      signal: exit.signal,
      crashedChains: crashed,
      requeuedChains: requeue.length,
      culprits,
      suspects: attribution.suspects,
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

  private removeSlots(generation: number): void {
    const prefix = `g${generation}-t`;
    try {
      for (const name of readdirSync(this.slotDir)) if (name.startsWith(prefix)) unlinkSync(join(this.slotDir, name));
    } catch {
      // best effort: a leftover slot of a dead generation is never read again
    }
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
      if (host.ready && host.child.connected) {
        host.child.send({ t: "close", id: this.nextId++ } satisfies ToHost);
      } else {
        host.child.kill("SIGKILL");
      }
      await stopped;
      clearTimeout(timer);
    }
    this.host = undefined;
    clearInterval(this.watchdog);
    this.watchdog = undefined;
    this.cleanupDir();
  }

  private cleanupDir(): void {
    if (this.ownsCodeDir) rmSync(this.codeDir, { recursive: true, force: true });
    else rmSync(this.slotDir, { recursive: true, force: true });
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
