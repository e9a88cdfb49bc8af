/**
 * `runtime.fireProfile` (PROFILES §2 "Interfaces", §8.1, §8.3): one event of an agent's hook system,
 * its native input in, the merged native answer out, run on the sandbox like any chain.
 *
 *   profile + event ─► enabled? (PROFILE_DISABLED) ─► an event newer than the profile (unknownEventPattern)?
 *        ─► the neutral answer, observe-only, audited `unknown_event` │ else UNKNOWN_EVENT unless the profile's own
 *        ─► input bounds (before any work) ─► validateInput
 *        ─► implicit session (profile, session_id; implicit-sessions.ts): per owner, idle expiry, past the
 *           client's cap its least recently used idle session is evicted (never a refusal) ─► plan (store; built once per change)
 *        ─► empty: the neutral answer, no dispatch │ else: sandbox ─► answer ─► metrics ─► audit (durable) ─► caller
 *
 * `refuse`: a request refused before or instead of the above (too large, not JSON, a bound) for an
 * event a fail-closed hook guards is answered by the profile's blocking answer, audited once (issue 24).
 */
import { randomUUID } from "node:crypto";
import { answerWhenNoneRuns, answerWithout, presentEmpty, runChain } from "../chain/execute.js";
import { mergeHookResults, selectProfileHooks } from "../chain/select.js";
import { buildDecision, NO_HOOK_SELECTED, UNKNOWN_EVENT_OBSERVED, type DecisionRecord } from "../chain/decision.js";
import { redactHead } from "../audit/redact-string.js";
import { createLaneInvoker } from "../pool/exec/invoker.js";
import type { ChainRequest, ChainResult, HookExecution, InvokeOutcome, InvokeRequest } from "../model/chain.js";
import { isoTime } from "../model/iso-time.js";
import type { ChainPlan } from "../chain/plan.js";
import { VcpError } from "../errors.js";
import type { Constitution } from "../model/constitution.js";
import { assertInputBounds, type JsonBounds } from "../model/json-bounds.js";
import { FAILURE_OUTCOMES } from "../model/result.js";
import type { Clock, Logger } from "../observe/events.js";
import type { EventBus } from "../observe/event-bus.js";
import type { Metrics } from "../observe/metrics.js";
import type { ResolvedHook } from "../model/hook.js";
import type { ImplicitSessionStore } from "../pipeline/implicit-sessions.js";
import { chainSessionKey, type SessionPrincipal } from "../pipeline/access.js";
import { checkHookEnv } from "../tooling/hook-env.js";
import { assertProfileEvent, getProfile, isProfileEvent, VCP_PROFILE_ID } from "../profiles/index.js";
import type { EventProfile, ExitCode, NativeObject, ProfileContext } from "../profiles/types.js";
import type { AuditTrail } from "./audit-trail.js";
import type { ChainBackend } from "../pool/backend.js";
import type { EnabledProfile } from "../profiles/enabled.js";
import type { ProfileGuard, Registry } from "../registry/index.js";
import { profilePlanEntries, type ProfilePlanEntry } from "../registry/listing.js";
import type { ExecDeployment } from "./types.js";
import type { createHookStats } from "./stats.js";
import { createImplicitSessions } from "./implicit-sessions.js";

/** What `runtime.fireProfile` takes besides the profile and event. */
export interface ProfileFireInput {
  /** The agent's native input JSON (what its command hook reads on stdin). */
  input: unknown;
  /** Session id; default the input's own (`session_id` for most profiles). */
  session?: string;
  /** Who sends the event: the implicit session is theirs (others get SESSION_NOT_FOUND). */
  principal?: SessionPrincipal;
  /**
   * Amplifier `ask_user` (PROFILES §8.9): wait for the approval's decision (or its default at the
   * timeout) and answer the decided `continue` / `deny`. Default false: answer at once with the
   * pending approval's `id` and `expires_at`.
   */
  waitApproval?: boolean;
  /** Stop waiting for the approval when aborted (the caller went away): the answer is the pending ask. */
  signal?: AbortSignal;
  /**
   * The agent's hook environment (`CLAUDE_PROJECT_DIR`, …), as the adapter read it: passed to the
   * event's exec hooks next to `exec.env_allow`. Only the profile's documented names
   * (src/tooling/hook-env.ts `HOOK_ENV`), each value at most 4 KiB; anything else is INVALID_INPUT.
   */
  env?: Readonly<Record<string, string>>;
}

/** The chain behind a profile answer: per-hook executions in plan order (skipped ones included). */
export interface ProfileChainResult {
  chain_id: string;
  profile: string;
  event: string;
  /**
   * How the matching hooks ran. Parallel: each on the original input, folded in plan order; at once when
   * the chain has exec hooks (main process), one by one inside the sandbox worker otherwise.
   */
  mode: "sequential" | "parallel";
  /** `aborted` when the answer blocks or a hook stopped the chain. */
  status: "completed" | "aborted";
  /** The first hook whose output blocks (or that stopped the chain), if any. */
  aborted_by: string | null;
  hook_results: HookExecution[];
  duration_ms: number;
}

/** What `runtime.fireProfile` answers: the native answer and the chain result with per-hook outcomes. */
export interface ProfileFireResult {
  native: NativeObject;
  exit_code: ExitCode;
  stderr?: string;
  result: ProfileChainResult;
  /** The profile's fail-closed events and the revisions that say so (issue 24): an adapter blocks those when the server cannot answer. */
  guard: ProfileGuard;
  /**
   * Set when the event is newer than the profile (its `unknownEventPattern`): answered with the neutral
   * answer, observe-only, no hook run, audited as `unknown_event`.
   */
  unknown_event?: true;
  /**
   * The chain's decision record (chain/decision.ts, docs/decisions.md): outcome, decisive hook, reason,
   * subject, per-hook outcomes, changed fields. Every chain has one: an event no hook applied to is an
   * allow with the reason `no hook selected` (an unknown event: `unknown event, observe-only`).
   */
  decision?: DecisionRecord;
}

/** A refusal the runtime answered by the profile's blocking answer (`runtime.profiles.refuse`, issue 24). */
export interface ProfileRefusedResult extends ProfileFireResult {
  /** The refusal the event got instead of a judgement: its error code and message. */
  refused: { code: string; message: string };
}

/** The event facts of a chain no hook ran in: its events ask no hook's timeout and no input size. */
const NO_HOOK_FACTS = (sessionId: string, owner: string | null) => ({ sessionId, owner, timeoutOf: () => 0, inputBytes: () => 0 });

/** At most this much of a refusal's message goes into the blocking answer's reason. */
const REFUSAL_MESSAGE_CHARS = 300;

/** Unknown event names logged once each per process, at most this many (names are client-chosen). */
const UNKNOWN_EVENTS_LOGGED = 64;

/** One enabled profile as `GET /v1/profiles` lists it. */
export interface ProfileListing {
  id: string;
  version: string;
  upstream: { repo: string; commit: string };
  events: string[];
  strict: boolean;
  execution: string;
  ordering: string;
  /** The deployment's settings of the profile (e.g. ai-memory `required_events`), for `vcp-hooks doctor`. */
  settings: Record<string, unknown>;
}

export type { ProfilePlanEntry } from "../registry/listing.js";

interface Deps {
  enabled: ReadonlyMap<string, EnabledProfile>;
  /** Where the profile hooks are: each chain reads one snapshot (plan and guard of the same revision). */
  registry: Pick<Registry, "snapshot">;
  backend: ChainBackend;
  audit: () => AuditTrail | undefined;
  metrics: Metrics;
  clock: Clock;
  /** Failed profile hooks are logged at info (they fail open by the profile's rule, never silently). */
  logger?: Logger;
  inputBounds: JsonBounds;
  maxSessionsPerOwner: number;
  assertOpen(): void;
  /** Mark the digests in flight (hot swap keeps their isolates until released). */
  pin(digests: readonly string[]): void;
  unpin(digests: readonly string[]): void;
  /** The command lane's settings (PROFILES §6): chains with exec hooks spawn with these (install refuses exec hooks without them). */
  exec?: ExecDeployment;
  /** Per-hook counters of `runtime.status()` (profile hooks are listed there too). */
  stats?: ReturnType<typeof createHookStats>;
  /** `limits.json_depth`: bounds what a hook returns when the executor runs in this process. */
  jsonDepth?: number;
  /** `runtime.on`: the chain's hook events and chain.completed, built only for events someone listens to. */
  events?: Pick<EventBus, "profileChainCompleted">;
  /**
   * With `store: redis`: a client's implicit sessions counted on every replica, so
   * `limits.sessions_per_client` holds for the deployment (store/implicit-sessions.ts).
   */
  implicitSessions?: ImplicitSessionStore<false>;
}

// The VCP machinery around a chain (crash attribution, input summaries) reads a constitution; a
// profile chain has none, and its executor never looks at this one.
const NO_CONSTITUTION = Object.freeze({ id: "(event-profile)", version: "0", rules: [] }) as unknown as Constitution;

/**
 * @example
 * ```ts
 * const profiles = createProfileFirer({ enabled, registry, backend, audit: () => audit, metrics, clock, inputBounds, maxSessionsPerOwner: 100, assertOpen, pin, unpin });
 * const { native, exit_code } = await profiles.fire("gemini-cli", "BeforeTool", { input });
 * ```
 */
export function createProfileFirer(deps: Deps) {
  /** `profile\0event` of the unknown events already logged (bounded: UNKNOWN_EVENTS_LOGGED). */
  const unknownLogged = new Set<string>();
  const implicit = createImplicitSessions({
    clock: deps.clock, metrics: deps.metrics, limit: deps.maxSessionsPerOwner,
    ...(deps.logger !== undefined ? { logger: deps.logger } : {}), ...(deps.implicitSessions !== undefined ? { shared: deps.implicitSessions } : {}),
  });

  function enabledProfile(ref: string): EnabledProfile {
    const profile = getProfile(ref);
    const enabled = deps.enabled.get(profile.id);
    if (enabled === undefined) {
      throw new VcpError("PROFILE_DISABLED", `profile ${profile.id}@${profile.version} is not enabled in this deployment (vcp.yaml profiles:)`, {
        profile: profile.id,
        enabled: [...deps.enabled.keys()],
      });
    }
    return enabled;
  }

  async function fire(ref: string, event: string, request: ProfileFireInput): Promise<ProfileFireResult> {
    const enabled = enabledProfile(ref);
    const profile = enabled.profile;
    if (profile.id === VCP_PROFILE_ID) {
      // vcp@1 chains keep their own path and input shape (spec §4.2): sessions, context, constitution.
      throw new VcpError("UNKNOWN_PROFILE", "vcp@1 events are fired with runtime.fire / POST /v1/sessions/{id}/chains/{type}, not as a native event profile", { profile: ref });
    }
    if (!isProfileEvent(profile, event) && profile.unknownEventPattern?.test(event) === true) return observeUnknownEvent(enabled, event, request);
    assertProfileEvent(profile, event);
    // SECURITY: depth and size bounds before any work on the input (validation, hashing, the sandbox).
    assertInputBounds({ input: request.input }, deps.inputBounds);
    if (request.env !== undefined) {
      // SECURITY: the names are the profile's documented ones and the values bounded, whoever calls.
      const problem = checkHookEnv(profile.id, request.env);
      if (problem !== undefined) throw new VcpError("INVALID_INPUT", `${profile.id} ${event} hook environment: ${problem}`, { profile: profile.id, event, field: "env", rule: problem });
    }
    const valid = profile.validateInput(request.input, event);
    if (!valid.ok) {
      throw new VcpError("INVALID_INPUT", `${profile.id} ${event} input: ${valid.error}`, { profile: profile.id, event, field: valid.error.split(":")[0], rule: valid.error });
    }
    const input = valid.value;
    const sessionId = request.session ?? profile.sessionIdOf(input);
    if (sessionId === undefined) return answerInput(enabled, event, input, undefined, request);
    const session = await implicit.open(profile.id, enabled.sessionTtlMs, sessionId, request.principal);
    try {
      return await answerInput(enabled, event, input, { id: sessionId, stateKey: session.stateKey }, request);
    } finally {
      session.end();
    }
  }

  /**
   * An event the agent added after the profile's pinned version (its `unknownEventPattern`): the
   * neutral answer with exit code 0 — never UNKNOWN_EVENT, which the agent logs as a hook error on every
   * such event. Observe-only: no hook can be installed on it, so no plan is built or cached and no
   * implicit session is opened; the input gets the same bounds as any event's and must be a JSON object
   * naming this event. Counted, logged once per name, and audited as one `unknown_event` chain record,
   * so an operator sees the agent moved on and upgrades.
   */
  async function observeUnknownEvent(enabled: EnabledProfile, event: string, request: ProfileFireInput): Promise<ProfileFireResult> {
    const profile = enabled.profile;
    // SECURITY: depth and size bounds before any work on the input, as for the profile's own events.
    assertInputBounds({ input: request.input }, deps.inputBounds);
    const input = request.input;
    if (typeof input !== "object" || input === null || Array.isArray(input)) {
      throw new VcpError("INVALID_INPUT", `${profile.id} ${event} input: expected a JSON object`, { profile: profile.id, event, field: "input", rule: "expected a JSON object" });
    }
    const named = (input as NativeObject)["hook_event_name"];
    if (named !== undefined && named !== event) {
      throw new VcpError("INVALID_INPUT", `${profile.id} ${event} input: hook_event_name: must be "${event}"`, { profile: profile.id, event, field: "hook_event_name", rule: `must be "${event}"` });
    }
    const answer = presentEmpty(profile, event, { strict: enabled.strict, settings: enabled.settings }, input as NativeObject);
    deps.assertOpen();
    const chainId = randomUUID();
    const owner = request.principal?.id ?? null;
    const sessionId = request.session ?? profile.sessionIdOf(input as NativeObject) ?? "";
    deps.metrics.recordUnknownProfileEvent(profile.id, answer.exit_code);
    const logKey = `${profile.id}\u0000${event}`;
    if (deps.logger !== undefined && !unknownLogged.has(logKey) && unknownLogged.size < UNKNOWN_EVENTS_LOGGED) {
      unknownLogged.add(logKey);
      deps.logger.warn({ profile: profile.id, event, version: profile.version }, "an event newer than this profile was answered with its neutral answer (observe-only, audited unknown_event): upgrade vcp-hooks to judge it");
    }
    // One decision record like every chain's: an allow no hook made; its subject is the event (the input matches no schema).
    const observed: ChainResult = {
      chain_id: chainId, status: "completed", reason: null, aborted_by: null, context: {}, constitution: NO_CONSTITUTION,
      cascade_failure: false, hook_results: [], duration_ms: 0, profile: { profile: profile.id, event, mode: "sequential", ...answer },
    };
    const decision = buildDecision(observed, {
      profile: profile.id, event, at: isoTime(deps.clock.wallNow()), subject: { kind: "event" }, session: sessionId, client: owner,
      answerVerdict: "observe", idleReason: UNKNOWN_EVENT_OBSERVED, redact: redactHead,
    });
    observed.decision = decision;
    const audit = deps.audit();
    if (audit !== undefined) {
      const inputHash = audit.inputHash({ context: null, constitution: null, event: { profile: profile.id, event, input }, session: { id: sessionId } });
      await audit.recordProfileUnknownEvent({ chainId, profile: profile.id, event, owner, session: sessionId, inputHash, exitCode: answer.exit_code, decision }).catch((err: unknown) => {
        throw new VcpError("AUDIT_WRITE_FAILED", `audit log write failed: ${err instanceof Error ? err.message : String(err)}`, { chain_id: chainId }, { cause: err });
      });
    }
    deps.events?.profileChainCompleted(observed, NO_HOOK_FACTS(sessionId, owner));
    return {
      native: answer.native,
      exit_code: answer.exit_code,
      ...(answer.stderr !== undefined ? { stderr: answer.stderr } : {}),
      result: { chain_id: chainId, profile: profile.id, event, mode: "sequential", status: "completed", aborted_by: null, hook_results: [], duration_ms: 0 },
      guard: deps.registry.snapshot().guard(profile.id).guard,
      unknown_event: true,
      decision,
    };
  }

  /** The answer to a validated input: the plan, then the neutral answer, the profile's own, or the chain's. */
  async function answerInput(enabled: EnabledProfile, event: string, input: NativeObject, implicit: { id: string; stateKey: string } | undefined, request: ProfileFireInput): Promise<ProfileFireResult> {
    const profile = enabled.profile;
    const ctx: ProfileContext = { strict: enabled.strict, settings: enabled.settings };
    const sessionId = implicit?.id;
    const key = implicit?.stateKey;
    const snapshot = deps.registry.snapshot();
    const guard = snapshot.guard(profile.id).guard;
    const { ref: planRef, hooks, plan, hasExec } = snapshot.profilePlan(enabled, event);
    const chainId = randomUUID();
    const startedAt = deps.clock.wallNow();
    // The decision record names who fired the chain, with or without a session.
    const client = request.principal?.id ?? null;
    // An event without hooks that the profile answers itself (ai-memory required_events: deny 503) is a
    // decision, metered and audited like a chain; the neutral answer is not (LLxprt "zero overhead").
    const ownAnswer = hooks.length === 0 ? profile.emptyPlanAnswer?.(event, ctx) : undefined;
    const session = { id: sessionId ?? "" };
    const owner = key === undefined ? null : (request.principal?.id ?? null);
    if (hooks.length === 0 && ownAnswer === undefined) {
      // No hook for the event: the profile's neutral answer, nothing dispatched; its decision (allow, no
      // hook selected) and, with an audit log, its chain record (docs/decisions.md).
      const answer = presentEmpty(profile, event, ctx, input);
      const result: ChainResult = {
        chain_id: chainId, status: "completed", reason: null, aborted_by: null,
        context: {}, constitution: NO_CONSTITUTION, cascade_failure: false, hook_results: [], duration_ms: 0,
        profile: { profile: profile.id, event, mode: "sequential", ...answer },
      };
      decide(result, profile, event, input, session.id, client, startedAt, NO_HOOK_SELECTED);
      // Counted with the event's chains (vcp_profile_chains_total, vcp_chains_no_hook_total): a counter increment.
      deps.metrics.recordProfileChain(result);
      const audit = deps.audit();
      if (audit !== undefined) {
        deps.assertOpen();
        // No input hash: no hook read the input (an LLM request can be large; hashing it is the cost of a chain that runs).
        await audit.recordChain(result, { id: session.id, owner }, undefined).catch((err: unknown) => {
          throw new VcpError("AUDIT_WRITE_FAILED", `audit log write failed: ${err instanceof Error ? err.message : String(err)}`, { chain_id: chainId }, { cause: err });
        });
      }
      // The decision stream: its chain.completed, built only while someone listens (no hook events: none ran).
      deps.events?.profileChainCompleted(result, NO_HOOK_FACTS(session.id, owner));
      return { ...answer, result: profileResult(result), guard, decision: result.decision! };
    }
    deps.assertOpen();
    const audit = deps.audit();
    const inputHash = audit?.inputHash({ context: null, constitution: null, event: { profile: profile.id, event, input }, session });
    if (ownAnswer !== undefined) {
      const answer = profile.present(ownAnswer, event, ctx);
      const blocked = profile.verdictOf(answer.native, event) === "block";
      const result: ChainResult = {
        chain_id: chainId, status: blocked ? "aborted" : "completed", reason: null, aborted_by: null,
        context: {}, constitution: NO_CONSTITUTION, cascade_failure: false, hook_results: [], duration_ms: 0,
        profile: { profile: profile.id, event, mode: "sequential", ...answer },
      };
      decide(result, profile, event, input, session.id, client, startedAt);
      return finish(result, profile.id, event, audit, owner, session.id, inputHash, hooks, input, guard);
    }
    // Select before crossing (chain/select.ts): matchers and the conditions that are final run here;
    // only the selected hooks are sent, and an event none selects sends nothing. A chain with exec
    // hooks runs its executor here in the main process, which selects the same way itself.
    const chosen = hasExec ? undefined : selectProfileHooks(plan, profile, input, () => stampedInput(profile, input, event, new Date(deps.clock.wallNow()).toISOString()));
    if (chosen !== undefined && chosen.sent.length === 0) {
      const records = mergeHookResults(hooks, chosen, []);
      const answer = answerWhenNoneRuns(profile, event, ctx, input, records);
      const result: ChainResult = {
        chain_id: chainId, status: "completed", reason: null, aborted_by: null,
        context: {}, constitution: NO_CONSTITUTION, cascade_failure: false, hook_results: records, duration_ms: 0,
        profile: { profile: profile.id, event, mode: chosen.selection.mode ?? "sequential", ...answer },
      };
      decide(result, profile, event, input, session.id, client, startedAt, NO_HOOK_SELECTED);
      return finish(result, profile.id, event, audit, owner, session.id, inputHash, hooks, input, guard);
    }
    const sent = chosen === undefined ? hooks : sentHooks(hooks, chosen.sent);
    const digests = digestsOf(sent);
    deps.pin(digests);
    let result: ChainResult;
    const chainRequest: ChainRequest = {
      chainId,
      context: {},
      constitution: NO_CONSTITUTION,
      event: input,
      session: { id: sessionId ?? "(none)" },
      // SECURITY: no session ⇒ per-session guest state is this chain's alone (PROFILES §8.3), never shared.
      ...(key !== undefined ? { sessionKey: key } : { sessionKey: chainSessionKey(request.principal?.id ?? null, chainId), sessionScope: "chain" as const }),
      ...(chosen !== undefined ? { selection: chosen.selection } : {}),
    };
    try {
      result = hasExec
        ? await runWithExecHooks(profile, plan, chainRequest, request.env)
        : (await deps.backend.runChain({ plan: { profile: planRef, revision: plan.revision, hooks: sent }, request: chainRequest })).result;
    } finally {
      deps.unpin(digests);
    }
    // Every hook of the plan in plan order: the ones decided here with the executor's.
    if (chosen !== undefined && chosen.decided.size > 0) result = { ...result, hook_results: mergeHookResults(hooks, chosen, result.hook_results) };
    if (result.profile === undefined) {
      // The sandbox host died mid-chain and the supervisor answered for it: fold what it reported.
      const failClosed = new Map(hooks.map((h) => [h.name, h.fail_closed]));
      // SECURITY: a session-trust hook never blocks, not even by failing (spec §8.3).
      const blocking = new Map(hooks.map((h) => [h.name, h.blocking === true && h.trust !== "session"]));
      const answer = answerWithout(profile, result, event, ctx, (name) => failClosed.get(name) === true, input, (name) => blocking.get(name) === true);
      const timeouts = result.hook_results.filter((h) => h.outcome === "timeout").length;
      result = { ...result, profile: { profile: profile.id, event, mode: "sequential", ...answer, ...(timeouts > 0 ? { timeout_violations: timeouts } : {}) } };
    }
    decide(result, profile, event, input, session.id, client, startedAt);
    return finish(result, profile.id, event, audit, owner, session.id, inputHash, hooks, input, guard);
  }

  /**
   * A chain holding exec hooks (PROFILES §6): the same executor (chain/execute.ts) runs here, in
   * the main process — the sandbox host must never start a process — so merge, order, parallel and
   * sequential modes and deadlines are those of every profile chain. Exec hooks go to the command lane;
   * each sandboxed hook is one action in the sandbox (`backend.invokeAction`). Chains without exec
   * hooks never come here: they stay one sandbox task.
   */
  function runWithExecHooks(profile: ReturnType<typeof getProfile>, plan: ChainPlan, request: ChainRequest, hookEnv: Readonly<Record<string, string>> | undefined): Promise<ChainResult> {
    const backend = deps.backend;
    // SECURITY: no settings, no lane: every script is refused at spawn (EXEC_DISABLED), whatever was installed.
    const exec = deps.exec;
    const invoker = createLaneInvoker({
      settings: exec ?? { env_allow: [], max_output_bytes: 1024 },
      shellAllowed: exec?.shell === true,
      enabled: exec?.enabled === true,
      termGraceMs: profile.failure.term_grace_ms,
      stdinLine: profile.commandStdin === "json_line",
      ...(hookEnv !== undefined ? { hookEnv } : {}),
      sandboxed: (call: InvokeRequest): Promise<InvokeOutcome> =>
        backend.invokeAction !== undefined
          ? backend.invokeAction(call)
          : Promise.resolve({ kind: "threw", message: "this chain backend cannot run one sandboxed action (ChainBackend.invokeAction), which a chain with exec hooks needs" }),
    });
    return runChain(plan, request, { invoker, clock: deps.clock, ...(deps.jsonDepth !== undefined ? { limits: { jsonDepth: deps.jsonDepth } } : {}) });
  }

  /** The chain's decision record (chain/decision.ts), on `result.decision`: its answer, audit record and stream event carry it. */
  function decide(result: ChainResult, profile: EventProfile, event: string, input: NativeObject, sessionId: string, client: string | null, startedAt: number, idleReason?: string): void {
    const native = result.profile!.native;
    const answerVerdict = profile.verdictOf(native, event);
    const answerReason = answerVerdict === "allow" || answerVerdict === "observe" ? undefined : profile.reasonOf?.(native, event);
    result.decision = buildDecision(result, {
      profile: profile.id, event, at: isoTime(startedAt), subject: profile.subjectOf?.(input, event) ?? { kind: "event" },
      session: sessionId, client, answerVerdict, ...(answerReason !== undefined ? { answerReason } : {}), ...(idleReason !== undefined ? { idleReason } : {}), redact: redactHead,
    });
  }

  /** Metrics, failed-hook logging and the durable audit record of one profile chain, then the caller's answer. */
  async function finish(
    result: ChainResult, profileId: string, event: string, audit: AuditTrail | undefined, owner: string | null, sessionId: string, inputHash: string | undefined,
    hooks: readonly ResolvedHook[], input: NativeObject, guard: ProfileGuard,
  ): Promise<ProfileFireResult> {
    deps.metrics.recordProfileChain(result);
    deps.stats?.record(result);
    if (deps.logger?.isLevelEnabled("info") === true) {
      for (const h of result.hook_results) {
        if (FAILURE_OUTCOMES.has(h.outcome) || h.outcome === "capability_denied" || h.outcome === "deadline_exceeded" || h.outcome === "deadline_exhausted") {
          deps.logger.info({ profile: profileId, event, hook: h.hook, bundle: h.bundle, chain_id: result.chain_id, outcome: h.outcome, error: h.error }, "profile hook failed");
        }
      }
    }
    if (audit !== undefined) {
      // spec §8.2.3: the chain's records are durable before its answer is handed out.
      await audit.recordChain(result, { id: sessionId, owner }, inputHash!).catch((err: unknown) => {
        throw new VcpError("AUDIT_WRITE_FAILED", `audit log write failed: ${err instanceof Error ? err.message : String(err)}`, { chain_id: result.chain_id }, { cause: err });
      });
    }
    // After the audit records are durable, as for VCP chains (runtime.on, spec §6.4).
    deps.events?.profileChainCompleted(result, {
      sessionId,
      owner,
      timeoutOf: (execution) => hooks.find((h) => h.name === execution.hook && h.action.bundle === execution.bundle)?.timeout_ms ?? 0,
      inputBytes: () => Buffer.byteLength(JSON.stringify(input)),
    });
    const answer = result.profile!;
    return {
      native: answer.native, exit_code: answer.exit_code, ...(answer.stderr !== undefined ? { stderr: answer.stderr } : {}), result: profileResult(result), guard,
      ...(result.decision !== undefined ? { decision: result.decision } : {}),
    };
  }

  /**
   * A request for (profile, event) the caller refused instead of firing — its body too large, not JSON,
   * too deep, a field over a bound, any coded error after authentication — answered, when an enabled
   * fail-closed hook guards the event, by the profile's blocking answer naming the refusal's code and
   * the guarding hooks, audited as one `refused_fail_closed` record (issue 24). `undefined` when no such
   * hook guards it (or the profile or event is unknown): the caller answers its coded error as always.
   * An audit write that fails does not turn the block into an error: the block stands and is logged.
   */
  async function refuse(ref: string, event: string, refusal: { code: string; message: string }, request: { principal?: SessionPrincipal } = {}): Promise<ProfileRefusedResult | undefined> {
    let enabled: EnabledProfile;
    try {
      enabled = enabledProfile(ref);
    } catch {
      return undefined;
    }
    const profile = enabled.profile;
    const index = deps.registry.snapshot().guard(profile.id);
    const guards = index.hooksByEvent.get(event);
    if (guards === undefined || profile.id === VCP_PROFILE_ID) return undefined;
    const message = refusal.message.length > REFUSAL_MESSAGE_CHARS ? `${refusal.message.slice(0, REFUSAL_MESSAGE_CHARS)}…` : refusal.message;
    const guardedBy = guards.map((h) => `${h.action.bundle}/${h.name}`);
    const reason = `vcp-hooks refused this ${event} event (${refusal.code}: ${message}); the fail-closed guard ${guardedBy.join(", ")} blocks it`;
    // SECURITY: the profile's most restrictive answer; a refusal never reaches the agent as an allow.
    const answer = profile.refusalAnswer(reason, event, { strict: enabled.strict, settings: enabled.settings });
    const chainId = randomUUID();
    const owner = request.principal?.id ?? null;
    deps.metrics.recordRefusedFailClosed(profile.id, event, refusal.code);
    // A block like any other in the decision record; its subject is the event (the input was not read).
    const refused: ChainResult = {
      chain_id: chainId, status: "aborted", reason, aborted_by: null, context: {}, constitution: NO_CONSTITUTION,
      cascade_failure: false, hook_results: [], duration_ms: 0, profile: { profile: profile.id, event, mode: "sequential", ...answer },
    };
    const decision = buildDecision(refused, {
      profile: profile.id, event, at: isoTime(deps.clock.wallNow()), subject: { kind: "event" }, session: null, client: owner,
      answerVerdict: "block", redact: redactHead,
    });
    const audit = deps.audit();
    if (audit !== undefined) {
      try {
        await audit.recordProfileRefusal({ chainId, profile: profile.id, event, owner, code: refusal.code, message, guardedBy, decision });
      } catch (err) {
        deps.logger?.error({ err, profile: profile.id, event, chain_id: chainId, code: refusal.code }, "audit log write failed for a refused fail-closed event; it is blocked all the same");
      }
    }
    return {
      native: answer.native,
      exit_code: answer.exit_code,
      ...(answer.stderr !== undefined ? { stderr: answer.stderr } : {}),
      result: { chain_id: chainId, profile: profile.id, event, mode: "sequential", status: "aborted", aborted_by: null, hook_results: [], duration_ms: 0 },
      guard: index.guard,
      refused: { code: refusal.code, message },
      decision,
    };
  }

  return {
    fire,
    refuse,

    /** The profile's guard (issue 24): its fail-closed events and the revisions that say so; UNKNOWN_PROFILE / PROFILE_DISABLED for a profile not enabled. */
    guard(ref: string): ProfileGuard {
      return deps.registry.snapshot().guard(enabledProfile(ref).profile.id).guard;
    },

    /** PROFILE_DISABLED unless the manifest's profile is enabled (install refuses before anything changes). */
    assertEnabled(ref: string): EnabledProfile {
      return enabledProfile(ref);
    },
    list(): ProfileListing[] {
      return [...deps.enabled.values()].map(({ profile, strict, settings }) => ({
        id: profile.id,
        version: profile.version,
        upstream: { repo: profile.upstream.repo, commit: profile.upstream.commit },
        events: Object.keys(profile.events),
        strict,
        execution: profile.execution,
        ordering: profile.ordering,
        settings: { ...settings },
      }));
    },
    plan(ref: string, event: string): ProfilePlanEntry[] {
      const enabled = enabledProfile(ref);
      assertProfileEvent(enabled.profile, event);
      return profilePlanEntries(deps.registry.snapshot().profilePlan(enabled, event));
    },
  };
}

/** The input the first hook will receive (Amplifier stamps `data.timestamp`): what conditions read. */
function stampedInput(profile: EventProfile, input: NativeObject, event: string, nowIso: string): NativeObject {
  return profile.stampInput !== undefined ? profile.stampInput(input, event, nowIso) : input;
}

// The selected hooks of a plan's hook list, one frozen list per (list, selection) so the sandbox's
// plan cache (keyed by the list's identity) sends each selection's hooks once, not per event. At
// most SELECTIONS_PER_PLAN selections per list are kept; a rarer one is sent as a new list.
const SELECTIONS_PER_PLAN = 64;
const selections = new WeakMap<readonly ResolvedHook[], Map<string, readonly ResolvedHook[]>>();
function sentHooks(hooks: readonly ResolvedHook[], sent: readonly number[]): readonly ResolvedHook[] {
  if (sent.length === hooks.length) return hooks;
  const key = sent.join(",");
  let byKey = selections.get(hooks);
  if (byKey === undefined) selections.set(hooks, (byKey = new Map()));
  let list = byKey.get(key);
  if (list === undefined) {
    list = Object.freeze(sent.map((i) => hooks[i]!));
    if (byKey.size < SELECTIONS_PER_PLAN) byKey.set(key, list);
  }
  return list;
}

// The bundle revisions a sent hook list runs (pinned while its chain runs), once per list: the lists
// are the plan's own or sentHooks' cached ones, so this is computed when the registry or a selection
// is new, not per event (as chain wires are for VCP chains in fire.ts).
const digestsByList = new WeakMap<readonly ResolvedHook[], readonly string[]>();
function digestsOf(sent: readonly ResolvedHook[]): readonly string[] {
  let digests = digestsByList.get(sent);
  if (digests === undefined) {
    digests = Object.freeze([...new Set(sent.map((h) => h.action.digest).filter((d): d is string => d !== undefined))]);
    digestsByList.set(sent, digests);
  }
  return digests;
}

/** The caller's view of a profile chain: no VCP placeholders (type, context, constitution). */
function profileResult(result: ChainResult): ProfileChainResult {
  const answer = result.profile!;
  return {
    chain_id: result.chain_id,
    profile: answer.profile,
    event: answer.event,
    mode: answer.mode,
    status: result.status,
    aborted_by: result.aborted_by,
    hook_results: result.hook_results,
    duration_ms: result.duration_ms,
  };
}

export type ProfileFirer = ReturnType<typeof createProfileFirer>;
