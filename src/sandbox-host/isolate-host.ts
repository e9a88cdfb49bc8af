import ivm from "isolated-vm";
import type { InvokeOutcome, InvokeRequest } from "../model/chain.js";
import { VcpError } from "../errors.js";
import { systemClock, type Clock } from "../observe/events.js";
import {
  buildLogLine,
  checkFetchUrl,
  compileFetchPolicy,
  FETCHES_PER_CALL,
  performFetch,
  sha256Hex,
  SHA256_MAX_CHARS,
  type CompiledFetchPolicy,
} from "./capabilities.js";
import {
  checkBundleCodeText,
  CODE_TEXT_MAX_CHARS,
  ICU_TEXT_MAX_CHARS,
  PROPERTY_ESCAPE_BUDGET,
  STRING_PROPERTY_WEIGHT,
} from "./compiled-text.js";
import { GUEST_GLOBAL_ALLOWLIST, PRELUDE_SOURCE } from "./prelude.js";
import { DEFAULT_JSON_DEPTH, JSON_DEPTH_CEILING } from "../model/json-bounds.js";
import { DEFAULT_ANNOTATION_BYTES_PER_CHAIN, DEFAULT_ANNOTATION_BYTES_PER_HOOK } from "../chain/annotations.js";
import { MESSAGE_MAX_CHARS, sanitizeGuestText, STACK_MAX_CHARS } from "../chain/guest-text.js";
import type { BundleCode, FetchPolicy, GuestLogLine, IsolateHost, IsolateStats, SandboxLimits } from "./types.js";
import { EXPORT_NAME } from "../model/names.js";
import { recordedMs } from "../model/result.js";
import { DEFAULTS } from "../config/defaults.js";

/**
 * Limits used when the deployment config says nothing (DESIGN §6.4 defaults).
 *
 * @example
 * ```ts
 * createIsolateHost({ limits: { ...DEFAULT_SANDBOX_LIMITS, isolateMemoryMb: 32 }, fetch, onLog });
 * ```
 */
export const DEFAULT_SANDBOX_LIMITS: Readonly<SandboxLimits> = Object.freeze({
  isolateMemoryMb: DEFAULTS.pool.isolate_memory_mb,
  resultBytes: DEFAULTS.limits.result_bytes,
  codeBytes: DEFAULTS.limits.bundle_bytes,
  logLinesPerCall: 20,
  logLineBytes: 4096,
  perSessionContexts: 64,
  jsonDepth: DEFAULT_JSON_DEPTH,
  annotationBytesPerHook: DEFAULT_ANNOTATION_BYTES_PER_HOOK,
  annotationBytesPerChain: DEFAULT_ANNOTATION_BYTES_PER_CHAIN,
  // Budget for a bundle's top-level code, the prelude and `finish()` at install (DESIGN §4.3). When a
  // hook call has to run top-level code first (a new `per_session` context, or an isolate recreated
  // after a disposal), that code runs within the hook's own timeout instead, capped by this.
  loadTimeoutMs: DEFAULTS.pool.load_timeout_ms,
});

/** Largest `loadTimeoutMs`: a load's phases stay well inside the watchdog's load limit (pool/watchdog.ts loadWatchdogMs). */
export const MAX_LOAD_TIMEOUT_MS = 10_000;
/**
 * A run of a discarded isolate (one in flight on isolated-vm's thread pool when its call ended) that
 * has not returned this long after the discard ignores termination (see onRunawayRun). The hook's
 * outcome was decided when the call ended; this only ends the thread. Five seconds is what isolated-vm
 * itself allowed before its own give-up, which this replaces (see #ensureIsolate).
 */
export const RUNAWAY_RUN_MS = 5_000;
/** isolated-vm refuses smaller heaps. */
const MIN_MEMORY_MB = 8;
const TIMED_OUT_MESSAGE = "Script execution timed out.";

/**
 * Longest text that crosses between the host and an isolate as one string: 511 UTF-16 code units
 * stay below 1024 bytes even as two-byte text. isolated-vm hands a string of 1024 bytes or more to
 * the receiving isolate as a V8 external string, and V8 keeps external strings in old space: one is
 * freed only by a full GC. Into a bundle's isolate, isolated-vm counts them against `memoryLimit`
 * and at the limit forces two full "low memory" GCs in the middle of a hook call (30–60 ms per
 * isolate; the prelude's optimized code is dropped and compiled again on V8's worker threads), so
 * every call's input stayed in memory, up to `isolateMemoryMb` per (bundle, worker). Out of it,
 * every long reply stayed in the worker thread's heap until its next full GC, which nothing forces
 * (issue 15). In pieces, each side joins the text into an ordinary string that a scavenge frees.
 */
export const CROSSING_PIECE_CHARS = 511;

/**
 * Append `text` to `args` as pieces of at most CROSSING_PIECE_CHARS (at least one piece, "" for
 * ""). The prelude's joinPieces makes them one string again; cutting between the halves of a
 * surrogate pair is harmless, as isolated-vm copies UTF-16 code units unchanged.
 */
export function pushPieces<Head extends unknown[]>(head: Head, text: string): [...Head, ...string[]] {
  const args: unknown[] = head;
  if (text.length <= CROSSING_PIECE_CHARS) args.push(text);
  else for (let at = 0; at < text.length; at += CROSSING_PIECE_CHARS) args.push(text.slice(at, at + CROSSING_PIECE_CHARS));
  return args as [...Head, ...string[]];
}

/**
 * The text of a prelude reply (run's result, settledCb's reply): as is when short, else joined from
 * the prelude's `outgoing` pieces, `{ n, 0: …, 1: … }` (copied out of the isolate as plain data).
 * Undefined when it is neither, or has more than `maxPieces` pieces or a piece that is not a string
 * of at most CROSSING_PIECE_CHARS: the caller answers "malformed sandbox reply".
 */
export function joinPieces(reply: unknown, maxPieces: number): string | undefined {
  if (typeof reply === "string") return reply;
  if (reply === null || typeof reply !== "object") return undefined;
  const pieces = reply as Record<string, unknown>;
  const n = pieces.n;
  // SECURITY: the count is bounded before any piece is read.
  if (typeof n !== "number" || !Number.isInteger(n) || n < 2 || n > maxPieces) return undefined;
  let text = "";
  for (let i = 0; i < n; i++) {
    const piece = pieces[i];
    if (typeof piece !== "string" || piece.length > CROSSING_PIECE_CHARS) return undefined;
    text += piece;
  }
  return text;
}

export interface IsolateHostOptions {
  limits: SandboxLimits;
  fetch: FetchPolicy;
  /** Receives every accepted `vcp.log` line, truncated and redacted. Must not throw. */
  onLog: (line: GuestLogLine) => void;
  /** Looked up on an `invoke` for a digest that is not loaded. */
  codeSource?: (digest: string) => BundleCode | undefined;
  /**
   * Guest code of `bundle` still runs on isolated-vm's thread pool RUNAWAY_RUN_MS after its isolate
   * was discarded (a vcp.fetch delivery that ignores termination): nothing in this process can stop
   * that thread, so the process must end. Default: write to stderr and `process.abort()`; the
   * supervisor restarts the sandbox host (DESIGN §4.1).
   */
  onRunawayRun?: (bundle: { name: string; digest: string }) => void;
  /** How long a discarded isolate's run may go on before onRunawayRun. Default RUNAWAY_RUN_MS. */
  runawayRunMs?: number;
  clock?: Clock;
}

/** One context of a bundle's isolate with the guest functions the prelude returned. */
interface GuestContext {
  readonly context: ivm.Context;
  /** The input JSON arrives as `inputPieces` (see pushPieces); a long reply leaves in pieces (joinPieces). */
  readonly run: ivm.Reference<(name: string, callId: string, nowMs: number, native: boolean, ...inputPieces: string[]) => unknown>;
  /** The fetch reply arrives as `replyPieces` (see pushPieces). */
  readonly deliver: ivm.Reference<(id: string, ...replyPieces: string[]) => void>;
}

/** Mutable per-call state, reused across calls (no allocation on the hot path). */
interface CallState {
  hook: string;
  logLines: number;
  fetches: number;
  deadline: number;
  /** Unique per host; the prelude tags the settlement of an async result with it. */
  id: string;
  /** Encoded reply of the async result, once the guest reported it (first report wins). */
  reply: string | null;
  /** Resolves the host's wait for `reply`. */
  waiter: ((reply: string) => void) | null;
  /** True from the start of the hook call until invoke() returns; guest code runs only meanwhile. */
  open: boolean;
}

interface BundleEntry {
  readonly bundle: BundleCode;
  readonly memoryMb: number;
  readonly exports: string[];
  readonly exportSet: ReadonlySet<string>;
  isolate: ivm.Isolate | null;
  script: ivm.Script | null;
  shared: GuestContext | null;
  /** per_session: insertion order is recency order (LRU at the front). */
  readonly sessions: Map<string, GuestContext>;
  readonly call: CallState;
  /** An isolate was created at least once; later creations count as recreations. */
  initialised: boolean;
  recreated: number;
  calls: number;
}

/**
 * Create the isolate side of one worker: one isolated-vm isolate per loaded bundle revision.
 *
 * Unknown bundles: `invoke` for a digest that is neither loaded nor provided by `codeSource` throws
 * `VcpError("UNKNOWN_BUNDLE")` rather than returning an outcome, because it is a runtime
 * inconsistency (the registry named a bundle the worker never got), not a failure of the hook.
 *
 * @example
 * ```ts
 * const host = createIsolateHost({ limits: DEFAULT_SANDBOX_LIMITS,
 *   fetch: { allowHosts: [], denyLlmHosts: ["api.openai.com"] }, onLog: (l) => logger.info(l) });
 * const { exports } = await host.load(bundle);           // ["stripPii"]
 * const outcome = await host.invoke({ hook, chainId, sessionId, inputJson, budgetMs: 5000 });
 * ```
 */
export function createIsolateHost(options: IsolateHostOptions): IsolateHost {
  return new SandboxIsolateHost(options);
}

class SandboxIsolateHost implements IsolateHost {
  readonly #limits: SandboxLimits;
  readonly #fetchPolicy: CompiledFetchPolicy;
  readonly #onLog: (line: GuestLogLine) => void;
  readonly #codeSource: ((digest: string) => BundleCode | undefined) | undefined;
  readonly #onRunawayRun: (bundle: { name: string; digest: string }) => void;
  readonly #runawayRunMs: number;
  readonly #clock: Clock;
  readonly #entries = new Map<string, BundleEntry>();
  readonly #preludeConfigBase: {
    allow: readonly string[];
    resultBytes: number;
    logLineBytes: number;
    sha256MaxChars: number;
    jsonDepth: number;
    icuTextMaxChars: number;
    codeTextMaxChars: number;
    propertyEscapeBudget: number;
    stringPropertyWeight: number;
    pieceChars: number;
  };
  /** Most pieces a prelude reply can have: the longest reply is a result at the byte limit, or a throw. */
  readonly #maxReplyPieces: number;
  #nextFetchId = 0;
  #nextCallId = 0;
  #disposed = false;
  /** The call in progress (one at a time per worker), closed when invoke() returns. */
  #openCall: CallState | null = null;

  constructor(options: IsolateHostOptions) {
    assertSandboxLimits(options.limits);
    this.#limits = Object.freeze({ ...options.limits });
    this.#fetchPolicy = compileFetchPolicy(options.fetch);
    this.#onLog = options.onLog;
    this.#codeSource = options.codeSource;
    this.#onRunawayRun =
      options.onRunawayRun ??
      ((bundle) => {
        process.stderr.write(`vcp-hooks sandbox: guest code of bundle ${bundle.name} ignores termination after its call ended\n`);
        process.abort();
      });
    this.#runawayRunMs = options.runawayRunMs ?? RUNAWAY_RUN_MS;
    this.#clock = options.clock ?? systemClock;
    this.#preludeConfigBase = {
      allow: GUEST_GLOBAL_ALLOWLIST,
      resultBytes: this.#limits.resultBytes,
      logLineBytes: this.#limits.logLineBytes,
      sha256MaxChars: SHA256_MAX_CHARS,
      jsonDepth: this.#limits.jsonDepth,
      icuTextMaxChars: ICU_TEXT_MAX_CHARS,
      codeTextMaxChars: CODE_TEXT_MAX_CHARS,
      propertyEscapeBudget: PROPERTY_ESCAPE_BUDGET,
      stringPropertyWeight: STRING_PROPERTY_WEIGHT,
      pieceChars: CROSSING_PIECE_CHARS,
    };
    const longestReply = Math.max(this.#limits.resultBytes, MESSAGE_MAX_CHARS + STACK_MAX_CHARS) + 32; // + tag and lengths
    this.#maxReplyPieces = Math.ceil(longestReply / CROSSING_PIECE_CHARS);
  }

  async load(bundle: BundleCode): Promise<{ exports: string[] }> {
    this.#assertOpen();
    const existing = this.#entries.get(bundle.digest);
    if (existing !== undefined) return { exports: [...existing.exports] };
    const entry = this.#loadSync(bundle, this.#limits.loadTimeoutMs);
    return { exports: [...entry.exports] };
  }

  unload(digest: string): void {
    const entry = this.#entries.get(digest);
    if (entry === undefined) return;
    this.#entries.delete(digest);
    this.#release(entry);
  }

  releaseSession(sessionId: string): void {
    for (const entry of this.#entries.values()) {
      const guest = entry.sessions.get(sessionId);
      if (guest === undefined) continue;
      entry.sessions.delete(sessionId);
      guest.context.release();
    }
  }

  stats(): Record<string, IsolateStats> {
    const out: Record<string, IsolateStats> = {};
    for (const [digest, entry] of this.#entries) {
      let heapUsedBytes = 0;
      let externalBytes = 0;
      const iso = entry.isolate;
      // A sync heap query would block this thread until a delivery running on the pool returns.
      if (iso !== null && !iso.isDisposed && (running.get(iso) ?? 0) === 0) {
        try {
          const heap = iso.getHeapStatisticsSync();
          heapUsedBytes = heap.used_heap_size;
          externalBytes = heap.externally_allocated_size;
        } catch {
          heapUsedBytes = 0;
        }
      }
      out[digest] = { recreated: entry.recreated, heapUsedBytes, externalBytes, calls: entry.calls };
    }
    return out;
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const entry of this.#entries.values()) this.#release(entry);
    this.#entries.clear();
  }

  /**
   * Hot path. Sync actions finish inside one `applySync` (≈ the cost of the input copy); an action
   * that returns a thenable costs a second, asynchronous call that waits for the guest promise.
   */
  async invoke(req: InvokeRequest): Promise<InvokeOutcome> {
    try {
      return await this.#invokeNow(req);
    } finally {
      // SECURITY: the call is over; a vcp.fetch reply that arrives later runs no guest code (see
      // #fetchStart). Guest code running outside its hook would run under another hook's crash-
      // attribution record (src/pool/slots.ts) and could get that hook's bundle blamed for its crash.
      if (this.#openCall !== null) this.#openCall.open = false;
      this.#openCall = null;
    }
  }

  async #invokeNow(req: InvokeRequest): Promise<InvokeOutcome> {
    this.#assertOpen();
    const t0 = this.#clock.now();
    const budgetMs = Math.max(1, Math.ceil(req.budgetMs));
    // SECURITY: top-level code run for this call (the bundle's first call on this thread, a new
    // per_session context, an isolate recreated after a failure) spends the hook's own budget, capped
    // by the load budget: it cannot buy a hook more time than its timeout_ms.
    const initBudgetMs = (): number => Math.min(this.#limits.loadTimeoutMs, Math.ceil(budgetMs - (this.#clock.now() - t0)));
    const digest = req.hook.action.digest;
    let entry = digest === undefined ? undefined : this.#entries.get(digest);
    if (entry === undefined) {
      try {
        entry = this.#loadFromSource(digest, req.hook.action.bundle, initBudgetMs());
      } catch (err) {
        if (isInitTimeout(err)) return { kind: "timeout", elapsedMs: this.#clock.now() - t0 };
        throw err;
      }
    }
    const exportName = req.hook.action.export;
    if (!entry.exportSet.has(exportName)) {
      return { kind: "threw", message: `action "${exportName}" is not an exported function of bundle ${entry.bundle.name}` };
    }
    let guest: GuestContext;
    try {
      const left = initBudgetMs();
      if (left < 1) return { kind: "timeout", elapsedMs: this.#clock.now() - t0 };
      guest = this.#contextFor(entry, req.sessionId, left);
    } catch (err) {
      if (isInitTimeout(err)) return { kind: "timeout", elapsedMs: this.#clock.now() - t0 };
      // Re-creating a disposed isolate re-runs top-level code; a bundle that no longer initialises
      // is reported as the hook's failure, and the next call tries again.
      return { kind: "threw", message: err instanceof VcpError ? err.message : "bundle could not be initialised" };
    }
    const runBudgetMs = Math.ceil(budgetMs - (this.#clock.now() - t0));
    if (runBudgetMs < 1) return { kind: "timeout", elapsedMs: this.#clock.now() - t0 };
    const iso = entry.isolate!;
    const call = entry.call;
    call.hook = req.hook.name;
    call.logLines = 0;
    call.fetches = 0;
    call.deadline = t0 + budgetMs;
    call.id = String(this.#nextCallId++);
    call.reply = null;
    call.waiter = null;
    call.open = true;
    this.#openCall = call;
    entry.calls++;
    const cpu0 = iso.cpuTime;
    let out: unknown;
    try {
      // SECURITY: only primitive strings cross into the isolate (the input JSON in pieces); the timeout
      // bounds all synchronous guest work including the microtasks V8 drains before applySync returns.
      // SECURITY: the call's frozen clock (whole milliseconds): the guest's only time source.
      // SECURITY: `native` crosses as a primitive boolean (event-profile calls, model/chain.ts InvokeRequest).
      const head: [string, string, number, boolean] = [exportName, call.id, Math.floor(this.#clock.wallNow()), req.native === true];
      // SECURITY: a long reply is plain data (joinPieces), copied out: never a reference into the isolate.
      out = joinPieces(guest.run.applySync(undefined, pushPieces(head, req.inputJson), { timeout: runBudgetMs, result: { copy: true } }), this.#maxReplyPieces);
    } catch (err) {
      return this.#failure(entry, iso, err, t0, cpu0);
    }
    if (typeof out === "string" && out.charCodeAt(0) === 0x50 /* P */) {
      // SECURITY: the pending id must be the one this call handed in.
      if (out.slice(1) !== call.id) return { kind: "invalid", message: "malformed sandbox reply", cpuMs: cpuMsSince(iso, cpu0) };
      return this.#settleAsync(entry, iso, t0, cpu0, budgetMs);
    }
    return this.#decode(out, cpuMsSince(iso, cpu0));
  }

  // ── async path ──────────────────────────────────────────────────────────────────────────────

  async #settleAsync(entry: BundleEntry, iso: ivm.Isolate, t0: number, cpu0: bigint, budgetMs: number): Promise<InvokeOutcome> {
    const call = entry.call;
    // Usually settled already: V8 drained the microtasks inside run's applySync, and the prelude's
    // handler reported through settledCb during that call (no second call into the isolate at all).
    if (call.reply !== null) return this.#decode(call.reply, cpuMsSince(iso, cpu0));
    const remaining = Math.ceil(budgetMs - (this.#clock.now() - t0));
    if (remaining <= 0) return this.#deadlineExceeded(entry, iso, t0, cpu0);
    let timer: NodeJS.Timeout | undefined;
    // Later settlements come from guest code run by a vcp.fetch delivery; nothing else re-enters the isolate.
    const out = await new Promise<string | typeof DEADLINE>((resolve) => {
      call.waiter = resolve;
      timer = setTimeout(resolve, remaining, DEADLINE);
    });
    clearTimeout(timer);
    call.waiter = null;
    if (out === DEADLINE) return this.#deadlineExceeded(entry, iso, t0, cpu0);
    return this.#decode(out, cpuMsSince(iso, cpu0));
  }

  #deadlineExceeded(entry: BundleEntry, iso: ivm.Isolate, t0: number, cpu0: bigint): InvokeOutcome {
    const cpuMs = cpuMsSince(iso, cpu0);
    // SECURITY: a guest that does not settle within its budget loses its isolate. If a vcp.fetch delivery
    // may still be running guest code on isolated-vm's thread pool, the isolate is only detached and
    // disposed once that run returns (never disposed under running code; see disposeWhenIdle).
    this.#discardIsolate(entry, iso);
    return { kind: "timeout", elapsedMs: this.#clock.now() - t0, cpuMs };
  }

  /** settledCb: the prelude reports the settlement of the current call's async result. */
  #settled(entry: BundleEntry, iso: ivm.Isolate, id: unknown, pieces: unknown): void {
    const call = entry.call;
    // SECURITY: strings only, from the current isolate, for the current call, first report only.
    if (typeof id !== "string" || entry.isolate !== iso || id !== call.id || call.reply !== null) return;
    const reply = joinPieces(pieces, this.#maxReplyPieces);
    if (reply === undefined) return;
    call.reply = reply;
    const waiter = call.waiter;
    if (waiter !== null) {
      call.waiter = null;
      waiter(reply);
    }
  }

  // ── outcomes ────────────────────────────────────────────────────────────────────────────────

  #failure(entry: BundleEntry, iso: ivm.Isolate, err: unknown, t0: number, cpu0: bigint): InvokeOutcome {
    const message = err instanceof Error ? err.message : String(err);
    const cpuMs = cpuMsSince(iso, cpu0);
    if (iso.isDisposed || /memory limit/i.test(message)) {
      this.#discardIsolate(entry, iso);
      if (/memory limit/i.test(message)) {
        return { kind: "threw", message: `isolate memory limit exceeded (${entry.memoryMb} MiB)`, cpuMs };
      }
      return { kind: "timeout", elapsedMs: this.#clock.now() - t0, cpuMs };
    }
    if (message === TIMED_OUT_MESSAGE) {
      // SECURITY: after a terminated execution the bundle's state may be half-updated and queued
      // guest jobs may remain; the isolate is discarded and recreated for the next call.
      this.#discardIsolate(entry, iso);
      return { kind: "timeout", elapsedMs: this.#clock.now() - t0, cpuMs };
    }
    const stack = err instanceof Error && typeof err.stack === "string" ? sanitizeGuestText(err.stack) : undefined;
    return { kind: "threw", message: sanitizeGuestText(message, MESSAGE_MAX_CHARS), stack, cpuMs };
  }

  /** Decode the prelude's reply without parsing the result JSON (the executor owns that). */
  #decode(out: unknown, cpuMs: number): InvokeOutcome {
    // SECURITY: the guest controls this string; every field is bounds-checked before use.
    if (typeof out !== "string" || out.length === 0) return { kind: "invalid", message: "malformed sandbox reply", cpuMs };
    const tag = out.charCodeAt(0);
    if (tag === 0x52 /* R */) {
      // SECURITY: host-side backstop of the guest's byte check (characters never exceed UTF-8 bytes).
      if (out.length > this.#limits.resultBytes + 16) {
        return { kind: "invalid", message: `result and chain_state exceed ${this.#limits.resultBytes} bytes`, cpuMs };
      }
      const split = splitLengthPrefixed(out);
      if (split === undefined) return { kind: "invalid", message: "malformed sandbox reply", cpuMs };
      return { kind: "returned", resultJson: split[0], chainStateJson: split[1], cpuMs };
    }
    if (tag === 0x54 /* T */) {
      const split = splitLengthPrefixed(out);
      if (split === undefined) return { kind: "invalid", message: "malformed sandbox reply", cpuMs };
      const stack = split[1] === "" ? undefined : sanitizeGuestText(split[1], STACK_MAX_CHARS);
      return { kind: "threw", message: sanitizeGuestText(split[0], MESSAGE_MAX_CHARS), stack, cpuMs };
    }
    if (tag === 0x49 /* I */) {
      return { kind: "invalid", message: sanitizeGuestText(out.slice(1), MESSAGE_MAX_CHARS), cpuMs };
    }
    return { kind: "invalid", message: "malformed sandbox reply", cpuMs };
  }

  // ── isolates and contexts ───────────────────────────────────────────────────────────────────

  #loadFromSource(digest: string | undefined, bundleName: string, timeoutMs: number): BundleEntry {
    const bundle = digest === undefined ? undefined : this.#codeSource?.(digest);
    if (bundle === undefined || digest === undefined) {
      throw new VcpError("UNKNOWN_BUNDLE", `bundle ${bundleName} (${digest ?? "no digest"}) is not loaded in the sandbox`, {
        bundle: bundleName,
        digest,
      });
    }
    if (bundle.digest !== digest) {
      throw new VcpError("INVALID_BUNDLE", `code source returned digest ${bundle.digest} for ${digest}`, { digest });
    }
    return this.#loadSync(bundle, timeoutMs);
  }

  #loadSync(bundle: BundleCode, timeoutMs: number): BundleEntry {
    // SECURITY: size cap before anything is compiled.
    if (Buffer.byteLength(bundle.code, "utf8") > this.#limits.codeBytes) {
      throw new VcpError("INVALID_BUNDLE", `bundle ${bundle.name}: code exceeds ${this.#limits.codeBytes} bytes`, {
        bundle: bundle.name,
      });
    }
    checkBundleCodeText(bundle.name, bundle.code); // SECURITY: before V8 parses the regular-expression literals.
    const requested = typeof bundle.memoryMb === "number" && Number.isFinite(bundle.memoryMb) ? bundle.memoryMb : this.#limits.isolateMemoryMb;
    // SECURITY: the manifest may lower the heap limit, never raise it above the host's cap.
    const memoryMb = Math.max(MIN_MEMORY_MB, Math.floor(Math.min(requested, this.#limits.isolateMemoryMb)));
    const entry: BundleEntry = {
      bundle,
      memoryMb,
      exports: [],
      exportSet: new Set(),
      isolate: null,
      script: null,
      shared: null,
      sessions: new Map(),
      call: { hook: "", logLines: 0, fetches: 0, deadline: 0, id: "", reply: null, waiter: null, open: false },
      initialised: false,
      recreated: 0,
      calls: 0,
    };
    const first = this.#ensureIsolate(entry, timeoutMs);
    const names = first.names.split("\n").filter((n) => n !== "" && EXPORT_NAME.regex.test(n));
    entry.exports.push(...names);
    for (const n of names) (entry.exportSet as Set<string>).add(n);
    this.#entries.set(bundle.digest, entry);
    return entry;
  }

  /** Create the isolate (first load or after a disposal) and one initialised context; top-level code gets `timeoutMs`. */
  #ensureIsolate(entry: BundleEntry, timeoutMs: number): { names: string } {
    const isolate = new ivm.Isolate({
      memoryLimit: entry.memoryMb,
      // SECURITY: no `onCatastrophicError`. With one, isolated-vm gives up 5 s (wall clock) after a run's
      // timeout on code that ignores termination and suspends the thread for good, and a fatal V8 OOM
      // puts the thread to sleep for good: on a loaded machine that gave a hook still on its way to the
      // memory limit (`new Array(6e7).fill()`) the outcome `crashed`, decided by the load. Without one,
      // a fatal OOM aborts the process at once (the supervisor answers `crashed` and restarts it), code
      // that ignores termination on this thread is judged by the supervisor's watchdog on the CPU it
      // used (src/pool/watchdog.ts), and a discarded run on isolated-vm's thread pool by
      // onRunawayRun. Either way the process is replaced (DESIGN §4.1).
      // SECURITY: no `snapshot` option, ever: snapshots are machine code (DESIGN §3.2).
    });
    try {
      // SECURITY: no `cachedData`: V8 code caches are machine code and never come from a bundle.
      const script = isolate.compileScriptSync(entry.bundle.code, { filename: `vcp-bundle:///${entry.bundle.name}.js` });
      entry.isolate = isolate;
      entry.script = script;
      entry.shared = null;
      entry.sessions.clear();
      const { guest, names } = this.#createContext(entry, isolate, script, timeoutMs);
      // per_session: this context only proved that the code loads and named its exports. Every
      // session gets a fresh one, created (top-level code and all) within its first hook call's budget.
      if (entry.bundle.isolation === "per_session") guest.context.release();
      else entry.shared = guest;
      if (entry.initialised) entry.recreated++;
      entry.initialised = true;
      return { names };
    } catch (err) {
      if (!isolate.isDisposed) isolate.dispose();
      entry.isolate = null;
      entry.script = null;
      throw toInvalidBundle(entry.bundle, err, entry.memoryMb, timeoutMs);
    }
  }

  #createContext(entry: BundleEntry, isolate: ivm.Isolate, script: ivm.Script, timeoutMs: number): { guest: GuestContext; names: string } {
    const context = isolate.createContextSync();
    const trust = entry.bundle.trust;
    const holder: { deliver: GuestContext["deliver"] | null } = { deliver: null };
    // SECURITY: capabilities are Callbacks whose inputs and outputs are primitives; the guest sees
    // them as plain functions, captured by the prelude's closure and never placed on the global.
    const logCb = new ivm.Callback((level: unknown, message: unknown, fields: unknown) => {
      // SECURITY: a detached (poisoned) isolate still finishing a delivery cannot log into the current call.
      if (entry.isolate === isolate) this.#log(entry, level, message, fields);
    });
    const shaCb = new ivm.Callback((text: unknown) => sha256Hex(text));
    const settledCb = new ivm.Callback((id: unknown, reply: unknown) => this.#settled(entry, isolate, id, reply)); // reply: see joinPieces
    // SECURITY: fetch exists only for system trust; other levels do not get the function at all.
    const fetchCb =
      trust === "system"
        ? new ivm.Callback((url: unknown, initJson: unknown) => this.#fetchStart(entry, isolate, holder, url, initJson))
        : undefined;
    // nowMs: the frozen clock top-level code sees (run() moves it at each call).
    const config = JSON.stringify({ ...this.#preludeConfigBase, nowMs: Math.floor(this.#clock.wallNow()) });
    let api: ivm.Reference<Record<string, unknown>> | undefined;
    try {
      api = context.evalClosureSync(PRELUDE_SOURCE, [logCb, shaCb, fetchCb, config, settledCb], {
        timeout: this.#limits.loadTimeoutMs,
        filename: "vcp-prelude:///prelude.js",
        result: { reference: true },
      }) as ivm.Reference<Record<string, unknown>>;
      // References are taken before any bundle code runs, so no guest getter is involved.
      const finish = api.getSync("finish", { reference: true }) as ivm.Reference<() => string>;
      const run = api.getSync("run", { reference: true }) as GuestContext["run"];
      const deliver = api.getSync("deliver", { reference: true }) as GuestContext["deliver"];
      holder.deliver = deliver;
      // The prelude is ours and runs under the load budget; the bundle's code gets `timeoutMs`.
      const t0 = this.#clock.now();
      script.runSync(context, { timeout: timeoutMs });
      const left = Math.ceil(timeoutMs - (this.#clock.now() - t0));
      if (left < 1) throw new Error(TIMED_OUT_MESSAGE);
      const names = finish.applySync(undefined, [], { timeout: left });
      finish.release();
      if (typeof names !== "string") throw new Error("prelude returned no export list");
      return { guest: { context, run, deliver }, names };
    } catch (err) {
      context.release();
      throw err;
    } finally {
      api?.release();
    }
  }

  /** The context a call runs in; top-level code it has to run first gets `timeoutMs` in total. */
  #contextFor(entry: BundleEntry, sessionId: string, timeoutMs: number): GuestContext {
    const t0 = this.#clock.now();
    if (entry.isolate === null || entry.isolate.isDisposed) this.#ensureIsolate(entry, timeoutMs);
    if (entry.bundle.isolation !== "per_session") return entry.shared!;
    const sessions = entry.sessions;
    const found = sessions.get(sessionId);
    if (found !== undefined) {
      // Move to the most recently used end.
      sessions.delete(sessionId);
      sessions.set(sessionId, found);
      return found;
    }
    const left = Math.ceil(timeoutMs - (this.#clock.now() - t0));
    if (left < 1) throw toInvalidBundle(entry.bundle, new Error(TIMED_OUT_MESSAGE), entry.memoryMb, timeoutMs);
    let guest: GuestContext;
    try {
      guest = this.#createContext(entry, entry.isolate!, entry.script!, left).guest;
    } catch (err) {
      const iso = entry.isolate!;
      const raw = err instanceof Error ? err.message : String(err);
      // SECURITY: as after a timed-out call, a terminated or over-limit isolate is not reused.
      if (iso.isDisposed || raw === TIMED_OUT_MESSAGE || /memory limit/i.test(raw)) this.#discardIsolate(entry, iso);
      throw toInvalidBundle(entry.bundle, err, entry.memoryMb, timeoutMs);
    }
    // SECURITY: bounded number of per-session contexts; the least recently used is released.
    while (sessions.size >= this.#limits.perSessionContexts) {
      const oldest = sessions.keys().next().value as string;
      sessions.get(oldest)!.context.release();
      sessions.delete(oldest);
    }
    sessions.set(sessionId, guest);
    return guest;
  }

  #discardIsolate(entry: BundleEntry, iso: ivm.Isolate): void {
    if (entry.isolate === iso) {
      entry.isolate = null;
      entry.script = null;
      entry.shared = null;
      entry.sessions.clear();
    }
    this.#disposeWhenIdle(entry, iso);
  }

  #disposeWhenIdle(entry: BundleEntry, iso: ivm.Isolate): void {
    disposeWhenIdle(iso, this.#runawayRunMs, () => this.#onRunawayRun({ name: entry.bundle.name, digest: entry.bundle.digest }));
  }

  #release(entry: BundleEntry): void {
    const iso = entry.isolate;
    entry.isolate = null;
    entry.script = null;
    entry.shared = null;
    entry.sessions.clear();
    if (iso !== null) this.#disposeWhenIdle(entry, iso);
  }

  // ── capabilities (host side) ────────────────────────────────────────────────────────────────

  #log(entry: BundleEntry, level: unknown, message: unknown, fields: unknown): void {
    const call = entry.call;
    // SECURITY: per-call line budget enforced on the host.
    if (call.logLines >= this.#limits.logLinesPerCall) return;
    const line = buildLogLine(entry.bundle.name, call.hook, level, message, fields, this.#limits.logLineBytes, this.#limits.jsonDepth);
    if (line === undefined) return;
    call.logLines++;
    try {
      this.#onLog(line);
    } catch {
      // The sink must not throw; if it does, the guest must not see a host error.
    }
  }

  #fetchStart(
    entry: BundleEntry,
    iso: ivm.Isolate,
    holder: { deliver: GuestContext["deliver"] | null },
    url: unknown,
    initJson: unknown,
  ): string {
    // SECURITY: trust re-checked on the host even though the capability is absent below system.
    if (entry.bundle.trust !== "system") return "!vcp.fetch is not available at this trust level";
    // SECURITY: no I/O on behalf of a detached (poisoned) isolate.
    if (entry.isolate !== iso || !entry.call.open || this.#clock.now() >= entry.call.deadline) return "!vcp.fetch: no hook call is running";
    if (typeof url !== "string" || typeof initJson !== "string") return "!vcp.fetch: invalid arguments";
    // SECURITY: allowlist and LLM denylist are decided here, before any I/O.
    const verdict = checkFetchUrl(this.#fetchPolicy, url);
    if (!verdict.ok) return "!" + verdict.reason;
    const call = entry.call;
    if (call.fetches >= FETCHES_PER_CALL) return `!vcp.fetch: more than ${FETCHES_PER_CALL} fetches in one call`;
    call.fetches++;
    const id = String(this.#nextFetchId++);
    const deliver = holder.deliver;
    const callId = call.id;
    const remaining = Math.max(1, Math.floor(call.deadline - this.#clock.now()));
    void performFetch(verdict.url, initJson, remaining, this.#limits.resultBytes).then((reply) => {
      // SECURITY: only into the call that started the fetch, while it still runs: guest code never runs
      // after its hook returned (the reply is dropped; the guest's promise stays pending).
      if (iso.isDisposed || isPoisoned(iso) || entry.isolate !== iso || deliver === null || !entry.call.open || entry.call.id !== callId) return;
      const left = Math.max(1, Math.floor(entry.call.deadline - this.#clock.now()));
      // SECURITY: the reply is one string; guest work it triggers runs under the call's remaining time, on
      // isolated-vm's thread pool: counted as running so that nothing disposes the isolate under it.
      beginRun(iso);
      deliver
        .apply(undefined, pushPieces<[string]>([id], reply), { timeout: left })
        .catch(() => undefined)
        .finally(() => endRun(iso));
    });
    return "#" + id;
  }

  #assertOpen(): void {
    if (this.#disposed) throw new VcpError("SANDBOX_CLOSED", "the isolate host was disposed");
  }
}

const DEADLINE = Symbol("deadline");

// ── disposal only when nothing runs ───────────────────────────────────────────────────────────
// isolated-vm's dispose() terminates and tears the isolate down even while a task of ours runs on
// its thread pool (a vcp.fetch delivery). Guest code that ignores termination (BigInt#toString,
// Array#fill, prepareStackTrace during an error copy) keeps native code on that isolate, and
// tearing it down under it is a use-after-free (isolated-vm #47, #333). So an isolate with a run
// in flight is only detached ("poisoned": no new work, capabilities refused) and disposed when the
// run returns; if it has not returned after RUNAWAY_RUN_MS, the process is ended (onRunawayRun).
const running = new WeakMap<ivm.Isolate, number>();
/** Poisoned isolates, each with its runaway timer. */
const poisoned = new WeakMap<ivm.Isolate, NodeJS.Timeout>();

function beginRun(iso: ivm.Isolate): void {
  running.set(iso, (running.get(iso) ?? 0) + 1);
}

function endRun(iso: ivm.Isolate): void {
  const n = (running.get(iso) ?? 1) - 1;
  if (n > 0) {
    running.set(iso, n);
    return;
  }
  running.delete(iso);
  const runaway = poisoned.get(iso);
  if (runaway !== undefined) {
    clearTimeout(runaway);
    poisoned.delete(iso);
    if (!iso.isDisposed) iso.dispose();
  }
}

function isPoisoned(iso: ivm.Isolate): boolean {
  return poisoned.has(iso);
}

function disposeWhenIdle(iso: ivm.Isolate, runawayMs: number, onRunaway: () => void): void {
  if (iso.isDisposed || poisoned.has(iso)) return;
  if ((running.get(iso) ?? 0) === 0) {
    iso.dispose();
    return;
  }
  // SECURITY: never dispose an isolate that may be executing; detach it and dispose when its run
  // returns. A run that does not return ignores termination on a thread nothing here can stop: the
  // process has to end (the timer is unref'd: it never keeps a process alive by itself).
  const timer = setTimeout(() => {
    if (poisoned.has(iso)) onRunaway();
  }, runawayMs);
  timer.unref();
  poisoned.set(iso, timer);
}

function cpuMsSince(iso: ivm.Isolate, cpu0: bigint): number {
  try {
    return recordedMs(Number(iso.cpuTime - cpu0) / 1e6);
  } catch {
    return 0;
  }
}

/** Split `X<n>:<first n chars><rest>`; `undefined` when the prefix is not a valid length. */
function splitLengthPrefixed(out: string): [string, string] | undefined {
  const colon = out.indexOf(":", 1);
  if (colon < 2 || colon > 12) return undefined;
  const n = Number(out.slice(1, colon));
  const start = colon + 1;
  if (!Number.isSafeInteger(n) || n < 0 || start + n > out.length) return undefined;
  return [out.slice(start, start + n), out.slice(start + n)];
}

/** Top-level code run for a hook call ran out of the hook's budget (see toInvalidBundle). */
function isInitTimeout(err: unknown): boolean {
  return err instanceof VcpError && err.details?.["timed_out"] === true;
}

/** `details.timed_out` tells a hook call that its top-level code ran out of the hook's budget. */
function toInvalidBundle(bundle: BundleCode, err: unknown, memoryMb: number, timeoutMs: number): VcpError {
  if (err instanceof VcpError) return err;
  const raw = err instanceof Error ? err.message : String(err);
  let message: string;
  const timedOut = raw === TIMED_OUT_MESSAGE;
  if (timedOut) message = `top-level code did not finish within ${timeoutMs} ms`;
  else if (/memory limit/i.test(raw)) message = `isolate memory limit exceeded (${memoryMb} MiB)`;
  else message = sanitizeGuestText(raw, MESSAGE_MAX_CHARS);
  const stack = err instanceof Error && typeof err.stack === "string" ? sanitizeGuestText(err.stack) : undefined;
  return new VcpError("INVALID_BUNDLE", `bundle ${bundle.name}: ${message}`, {
    bundle: bundle.name,
    digest: bundle.digest,
    guest_message: message,
    ...(timedOut ? { timed_out: true } : {}),
    ...(stack !== undefined ? { guest_stack: stack } : {}),
  });
}

/** Refuse sandbox limits that are not positive numbers (INVALID_CONFIG naming the field). */
export function assertSandboxLimits(limits: SandboxLimits): void {
  if (!Number.isSafeInteger(limits.jsonDepth) || limits.jsonDepth < 2 || limits.jsonDepth > JSON_DEPTH_CEILING) {
    throw new VcpError("INVALID_CONFIG", `sandbox limit jsonDepth must be an integer from 2 to ${JSON_DEPTH_CEILING}`, { field: "jsonDepth" });
  }
  if (!Number.isSafeInteger(limits.loadTimeoutMs) || limits.loadTimeoutMs < 1 || limits.loadTimeoutMs > MAX_LOAD_TIMEOUT_MS) {
    throw new VcpError("INVALID_CONFIG", `sandbox limit loadTimeoutMs must be an integer from 1 to ${MAX_LOAD_TIMEOUT_MS}`, { field: "loadTimeoutMs" });
  }
  for (const key of ["isolateMemoryMb", "resultBytes", "codeBytes", "logLinesPerCall", "logLineBytes", "perSessionContexts", "annotationBytesPerHook", "annotationBytesPerChain"] as const) {
    const v = limits[key];
    if (typeof v !== "number" || !Number.isFinite(v) || v < (key === "logLinesPerCall" ? 0 : 1)) {
      throw new VcpError("INVALID_CONFIG", `sandbox limit ${key} must be a positive number`, { field: key });
    }
  }
}
