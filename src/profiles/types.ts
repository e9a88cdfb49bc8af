/**
 * The event-profile model (PROFILES.md §2). A profile is data plus pure functions: the executor
 * (`chain/execute.ts`) stays the only engine and asks the profile how to match, decode, chain and fold.
 * Nothing here does I/O, so a profile runs the same in the main process, a piscina worker or a test.
 *
 *   native input ──► plan (matcher, dedup, order) ──► hook 1 ─decode─► output 1 ─┐
 *                         │ sequential: chainInput(input, output 1) ─► hook 2 …   │ reduce (plan order)
 *                         │ parallel:   every hook gets the original input        ├──────────────► Aggregated
 *                         └─ failed hook: failureOutput(…) takes its place ───────┘      │ present
 *                                                                                       ▼
 *                                                                       { native, exit_code, stderr? }
 */
import type { z } from "zod";
import type { Verdict } from "../model/result.js";
import type { SubjectKind } from "../model/decision.js";
import type { ChainRequest, ConstitutionCheck, HookExecution } from "../model/chain.js";
import type { Constitution } from "../model/constitution.js";
import type { ResolvedHook } from "../model/hook.js";
import type { InputSummary, VcpContext } from "../model/input.js";
import type { CompiledMatcher, ExitCode, NativeObject } from "../model/native.js";

/** A native JSON object, its exit code and a compiled matcher: shared record types (model/native.ts). */
export type { CompiledMatcher, ExitCode, NativeObject } from "../model/native.js";

/** What the profile's merge rules made of a chain's outputs; profile-specific, JSON-serializable. */
export type Aggregated = NativeObject;

/** What a hook's output (or a failure) amounts to for the chain (a shared record type: model/result.ts). */
export type { Verdict } from "../model/result.js";

export interface EventSpec {
  /** Which input field a definition's `matcher` is tested against, if the event has matchers. */
  readonly matcher?: string;
  /** A "before" event: its answer can stop or change what happens next. */
  readonly pre: boolean;
  /** Whether a hook of this event can block (a `session`-trust hook never can, spec §8.3). */
  readonly can_block: boolean;
  /** Output fields that modify the input or the agent's behaviour (descriptive; no observer field reaches the answer). */
  readonly modifiable?: readonly string[];
  /** Deadline class (ai-memory) and its whole-chain deadline. */
  readonly class?: string;
  readonly chain_deadline_ms?: number;
  /** Output is advisory only: nothing a hook returns changes the agent's behaviour. */
  readonly advisory?: boolean;
}

/** Deployment settings of one enabled profile (`vcp.yaml` `profiles.<id>`), passed to every function. */
export interface ProfileContext {
  /** `strict: true` fixes the upstream surprises listed per profile (PROFILES §1.6). */
  readonly strict: boolean;
  /** The rest of the deployment's settings for this profile, validated by `settingsSchema`. */
  readonly settings: Readonly<Record<string, unknown>>;
}

/** What {@link EventProfile.checkOutput} found wrong with an output: why (naming the field), and what stands without it. */
export interface OutputMisfit {
  readonly error: string;
  readonly kept: NativeObject;
}

/**
 * A decoded value or why it was refused (the executor records a refused output as the hook's failure,
 * `invalid_result`). A union rather than a bare `{error}` object: native outputs may carry an `error`
 * field of their own (repo-yaml).
 */
export type Decoded<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

export interface PresentedAnswer {
  readonly native: NativeObject;
  readonly exit_code: ExitCode;
  readonly stderr?: string;
}

/** How a command hook ended, as the exec lane (PROFILES §6) and the drop-in adapter (§5) observe it. */
export interface CommandResult {
  /** `null` when the process was killed by a signal. */
  readonly exitCode: number | null;
  readonly signal?: string | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The runner killed it at its timeout. */
  readonly timedOut?: boolean;
}

/**
 * What a command hook's run amounts to: `output` is the native output the agent would take from it;
 * `failure`, when set, says the run failed (a non-zero exit other than the blocking code, a signal, a
 * timeout), so the caller of a `fail_closed` hook replaces `output` by `failureOutput(hook, failure,
 * true, …)` and records the failure.
 */
export interface ParsedCommand {
  readonly output: NativeObject;
  readonly failure?: string;
}

/**
 * One entry of a chain as `reduceWithHooks` sees it: the output a hook contributed (its decoded output,
 * or `failureOutput(…)` when it failed; a `session`-trust hook contributes no entry), with the hook's
 * name and the definition flags some folds need. Entries are in plan order and stop where the chain
 * stopped (`stopsChain`); hooks that did not run (matcher, filter, dedup, deadline skip) have no entry.
 */
export interface HookOutputEntry {
  /** The definition's `name` (for provenance, error texts and AskUser origins). */
  readonly hook: string;
  readonly output: NativeObject;
  /** True when `output` is the hook's `failureOutput(…)` (it threw, timed out or its output was refused). */
  readonly failed?: boolean;
  /** The definition's `blocking` flag (repo-yaml, PROFILES §8.8); absent ⇒ false. */
  readonly blocking?: boolean;
}

/**
 * What a chain decided about (the decision record's `subject`, chain/decision.ts), as the profile reads
 * it from a native input: raw values — chain/decision.ts redacts and bounds them (one rule, one place)
 * and turns `prompt` into its digest, so no prompt text is ever stored.
 */
export interface SubjectFacts {
  readonly kind: SubjectKind;
  /** Tool events: the tool's name and, whichever apply, its command line and the file path it touches. */
  readonly tool?: string;
  readonly command?: string;
  readonly path?: string;
  /** Prompt events: the prompt text (digested, never kept). */
  readonly prompt?: string;
  /** VCP chains: the hook type. */
  readonly vcp_type?: string;
}

export interface EventProfile {
  /** Bare name used in paths and manifests: `vcp`, `gemini-cli`, `llxprt`, `claude-code`, … */
  readonly id: string;
  /** Pinned upstream version, e.g. `0.x`; manifests may say `<id>@<version>`. */
  readonly version: string;
  readonly upstream: { readonly repo: string; readonly commit: string };
  /** Closed event vocabulary (Amplifier also accepts custom `ns:name`, see `isEvent`). */
  readonly events: Readonly<Record<string, EventSpec>>;
  readonly ordering: "priority_desc" | "priority_asc" | "config_order";
  /** gemini/llxprt: parallel unless one matching definition says `sequential: true`. */
  readonly execution: "sequential" | "parallel" | "per_definition";
  readonly timeouts: { readonly default_ms: number; readonly max_ms: number; readonly config_unit: "ms" | "s" };
  readonly failure: { readonly default: "open" | "closed"; readonly term_grace_ms: number };
  /** Whether the profile has the `strict` switch (and which surprises it fixes, for the docs). */
  readonly strictFixes: readonly string[];

  /** True for a known event (override for open vocabularies such as Amplifier's `ns:name`). */
  isEvent?(event: string): boolean;
  /**
   * Names of events the agent may add after the version the profile pins (Claude Code: PascalCase). An
   * event that is not the profile's own but matches is answered with the neutral answer (exit code 0),
   * observe-only and audited as `unknown_event` (fire/profile.ts) instead of `UNKNOWN_EVENT`,
   * which agents log as a hook error on every such event. No hook can be installed on such an event.
   */
  readonly unknownEventPattern?: RegExp;
  /**
   * The spec of an event of an open vocabulary (Amplifier custom `ns:name` events are not in `events`).
   * The executor looks an event's spec up with `specOf?.(event) ?? events[event]`.
   */
  specOf?(event: string): EventSpec | undefined;
  /** The session id carried in a native input, if the profile has one (PROFILES §8.3). */
  sessionIdOf(input: NativeObject): string | undefined;
  /**
   * What a chain of `event` on this (validated) input decides about: the tool and its command or path,
   * the prompt, or just the event (chain/decision.ts). Pure and cheap: called once per chain that ran
   * a hook. Absent ⇒ `{ kind: "event" }`.
   */
  subjectOf?(input: NativeObject, event: string): SubjectFacts;
  /**
   * The reason a decoded output (or a failure output) gives for its verdict — a block's, an ask's or a
   * modification's explanation, `undefined` when it gives none. The executor keeps it on the hook's
   * execution record (`reason`) for the decision record. Absent ⇒ no per-hook reason.
   */
  reasonOf?(output: NativeObject, event: string): string | undefined;
  /** Validate a native input for `event`; a string names what is wrong (`tool_name: must be a string`). */
  validateInput(input: unknown, event: string): Decoded<NativeObject>;
  /**
   * The shape of `event`'s native input as a zod schema (the one `validateInput` applies, or one
   * describing what it accepts). Not used to validate events: build and install read it to refuse a
   * hook `condition` whose field path the input can never have (profiles/common/condition-fields.ts);
   * a condition's path is resolved against the native input itself (`tool_input.command`). Absent ⇒
   * every path is accepted.
   */
  inputSchema?(event: string): z.ZodType | undefined;
  /**
   * Compile a definition's matcher for `event` at build/install time. `undefined`, `""` and `"*"`
   * match everything. Throws an Error naming the problem when RE2 cannot compile the pattern: a bad
   * matcher is a build error, never a silent exact-string fallback. Its `cost` rests on the bounds
   * `validateInput` puts on the fields it scans.
   */
  compileMatcher(pattern: string | undefined, event: string): CompiledMatcher;
  /** Turn what an action returned (already JSON-parsed) into a native output, or say why not. */
  decode(raw: unknown, event: string, ctx: ProfileContext): Decoded<NativeObject>;
  /**
   * What a failed hook (threw, timed out, invalid output) contributes in its place. `failClosed` is the
   * definition's `fail_closed`, OR its `blocking` flag for repo-yaml (a failing `blocking` hook blocks).
   */
  failureOutput(hook: string, why: string, failClosed: boolean, event: string, ctx: ProfileContext): NativeObject;
  /**
   * Whether a decoded output fits the input it answers, beyond its own schema (VS Code: an
   * `updatedInput` against the input schema of the tool named by `tool_name`). `undefined`: it fits.
   * A misfit is the hook's invalid output (`invalid_result`): a `fail_closed` hook then contributes its
   * `failureOutput` naming `error`; any other hook contributes `kept` — its output without what does
   * not fit — and `error` is kept on its record. Called once per hook, before the output reaches the
   * fold or the next hook's input. Pure.
   */
  checkOutput?(output: NativeObject, input: NativeObject, event: string, hook: string): OutputMisfit | undefined;
  /**
   * The fields of a decoded output that say something the answer (or the next hook's input) would
   * carry — paths: a top-level name, or `hookSpecificOutput.<name>` — and `[]` for an output that says
   * nothing (an allow, `{}`). A `session`-trust hook's output never reaches the fold in any profile
   * (chain/execute.ts, spec §8.3); these are the fields reported withheld (`stripped`,
   * outcome `capability_denied`), so its author sees why nothing showed.
   */
  answerFields(output: NativeObject, event: string): readonly string[];
  /** How the chain treats one output (for the trace, trust checks and `stopsChain`). */
  verdictOf(output: NativeObject, event: string): Verdict;
  /** Sequential chaining: the next hook's input after a successful hook (default: unchanged). */
  chainInput?(input: NativeObject, output: NativeObject, event: string, ctx: ProfileContext): NativeObject;
  /** True when no later hook may run after this output (Amplifier/ai-memory deny). Default: never. */
  stopsChain?(output: NativeObject, event: string, ctx: ProfileContext): boolean;
  /** Fold the outputs, in plan order, by the event's merge rules. Pure; `[]` gives the neutral answer. */
  reduce(outputs: readonly NativeObject[], event: string, ctx: ProfileContext): Aggregated;
  /** The agent-facing answer and its exit code. */
  present(aggregated: Aggregated, event: string, ctx: ProfileContext): PresentedAnswer;
  /**
   * The answer to an event the runtime refused instead of judging (its input too large, not JSON, too
   * deep, a field over a bound …) while a fail-closed hook guards it (issue 24): the most restrictive
   * answer the event can carry — what a failed `fail_closed` hook yields — naming `reason`, with exit
   * code 2 (what every agent's command hooks read as "blocked") and `reason` as stderr. `reason` names
   * the refusal's code and the guarding hooks. Pure.
   */
  refusalAnswer(reason: string, event: string, ctx: ProfileContext): PresentedAnswer;
  /**
   * How the agent reads one of its own command hooks (exit code, stdout, stderr): the profile's
   * exit-code table (PROFILES §3.2, §3.3). Present on agent profiles; used by the exec lane and the
   * adapter. Pure.
   */
  parseCommandResult?(result: CommandResult, hook: string, event: string): ParsedCommand;
  /**
   * How the agent writes the input to its command hooks' stdin: the JSON text alone (default, Gemini,
   * LLxprt, Claude Code), or as one line with a final newline (ai-memory's wire). Then stdin is closed.
   */
  readonly commandStdin?: "json" | "json_line";

  // ── Optional members (issue 14). Each says how the executor must use it; absent ⇒ the default. ──

  /**
   * Runtime-owned input fields (Amplifier: `data.timestamp`, RFC 3339 UTC, replacing any caller value).
   * The executor calls it ONCE per chain, only when at least one hook will run (an empty plan answers
   * from the unstamped input), with the runtime clock's time as `nowIso`
   * (`new Date(clock.wallNow()).toISOString()`: `Clock.now` is monotonic, not wall time); the result is
   * what the first hook receives and what
   * `reduceWithHooks` gets as `input`. Pure: the same `nowIso` gives the same input.
   */
  stampInput?(input: NativeObject, event: string, nowIso: string): NativeObject;
  /**
   * Fold with provenance. When present the executor calls this INSTEAD of `reduce`, with one entry per
   * hook that produced an output (see {@link HookOutputEntry}) and `input` = the chain's input as the
   * first hook received it (after `stampInput`); for an empty plan it is called with `[]` and the
   * unstamped input (unless `emptyPlanAnswer` answered). Amplifier needs the hook names for injection
   * provenance and the input for the neutral `continue` answer's `data`; ai-memory names the hook of
   * each queued AskUser; repo-yaml needs each hook's `blocking` flag.
   */
  reduceWithHooks?(entries: readonly HookOutputEntry[], event: string, ctx: ProfileContext, input: NativeObject): Aggregated;
  /**
   * Answer for an event whose plan is empty, instead of the neutral answer (ai-memory `required_events`:
   * deny 503). The executor calls it before anything else when no hook applies; `undefined` ⇒ the
   * profile's neutral answer as usual. The result goes to `present` unchanged.
   */
  emptyPlanAnswer?(event: string, ctx: ProfileContext): Aggregated | undefined;
  /**
   * Per-hook time budget under a whole-chain deadline (ai-memory class deadlines, `EventSpec.
   * chain_deadline_ms`). Before starting each hook the executor calls it with the hook's effective
   * `timeout_ms` and the milliseconds elapsed since the chain started; the hook runs with the returned
   * budget as its timeout. `undefined` means the chain deadline is already spent: the executor increments
   * `vcp_timeout_violations_total{profile,event}`, records the hook `deadline_exhausted` and asks
   * `deadlineExhaustedOutput`. A hook that then times out also increments that metric (PROFILES §8.10).
   * A hook stopped at a budget below its own `timeout_ms` has spent the chain deadline: the executor
   * treats every later hook as exhausted without asking (clocks and timers disagree by a millisecond).
   */
  hookBudgetMs?(timeoutMs: number, event: string, elapsedMs: number): number | undefined;
  /**
   * What a hook skipped for an exhausted chain deadline contributes: `undefined` ⇒ nothing (the hook
   * is skipped, the chain goes on: fail-open); an output ⇒ it is added as that hook's entry (`failed:
   * true`) and then `stopsChain` is asked as for any output (ai-memory fail-closed: deny code 504).
   * `failClosed` is the definition's `fail_closed`.
   */
  deadlineExhaustedOutput?(hook: string, failClosed: boolean, event: string, ctx: ProfileContext): NativeObject | undefined;
  /**
   * Compile a definition's `match` filters (repo-yaml: `ability_scope`, `min_duration_ms`,
   * `only_if_changed_paths`, PROFILES §8.8) at build/install time, like `compileMatcher`; throws an
   * Error naming the bad field. A hook runs only when `compileMatcher(…)(input)` AND this filter hold;
   * otherwise it is recorded `skipped_matcher`. `match` absent ⇒ the executor does not call it.
   * A profile without it refuses definitions that carry `match` (build error).
   */
  compileFilter?(match: unknown, event: string): CompiledMatcher;
  /**
   * Definitions may carry `blocking: true` (repo-yaml, PROFILES §8.8). The executor then fails such a
   * hook closed (`failureOutput(…, fail_closed || blocking, …)`) and passes the flag to
   * `reduceWithHooks`. A profile without it refuses definitions that carry `blocking` (build error).
   */
  readonly blockingHooks?: boolean;
  // ── A composed chain input (VCP, PROFILES §3.1). Absent on the agent profiles. ──

  /**
   * The input of a profile whose hooks get a composed input that the chain itself carries and changes
   * (VCP: the HookInput — context, constitution, event, session, chain_state — spec §4.2, §5.1.3,
   * §5.6). When present the executor keeps the chain's input in the object this returns instead of
   * the caller's native input: every hook receives its `json()` (never handed as a native input), a
   * condition reads `conditionView()`, each non-observer hook's chain state is offered to
   * `adoptChainState`, and each non-observer output whose verdict is `modify` goes to `apply`, whose
   * refusal (an integrity check, DESIGN §4.5) is the hook's failure with outcome `integrity_rejected`.
   * The chain's result carries the input's final `context` and `constitution`.
   */
  composeInput?(request: ChainRequest, event: string): ComposedInput;
  /**
   * Decode a hook's result from the text the sandbox serialized (`jsonDepth` bounds each field), instead
   * of the executor's depth check + parse + `decode`: VCP validates it with a compiled schema.
   */
  decodeResult?(resultJson: string, event: string, jsonDepth: number): Decoded<NativeObject>;
  /**
   * Why a `session`-trust hook's output is refused (spec §8.3: VCP's "cannot modify or abort"), or
   * `undefined` when it only observed. Absent ⇒ the fields `answerFields` names are reported withheld
   * (`stripped`). Either way an observer's output never reaches the answer.
   */
  observerDenial?(output: NativeObject, event: string): string | undefined;
  /**
   * An event whose blocks are not blocks (VCP `periodic`, spec §3.6): for an output whose verdict is
   * `block` this returns the note recorded as the hook's reason, and the executor treats the output
   * as an allow. `undefined` ⇒ the block stands.
   */
  blockIgnored?(output: NativeObject, event: string): string | undefined;
  /** Hooks may return `annotations` (VCP, spec §4.3): the executor admits them under the annotation caps. */
  readonly annotations?: boolean;
  /** More than half of the executed hooks failing is a cascade (spec §7.3): the executor flags and emits it. */
  readonly cascade?: boolean;
  /** Identical definitions are not deduplicated (VCP: every hook is its own, PROFILES §8.6 is for agent profiles). */
  readonly keepDuplicates?: boolean;

  /**
   * Schema of the deployment's profile-specific settings (`vcp.yaml` `profiles.<name>`, besides
   * `strict`; `session_ttl_s` included). Checked once, when the deployment is resolved: a setting it
   * refuses is `INVALID_CONFIG` naming `profiles.<name>.<field>`. Absent ⇒ the profile has no settings
   * beyond `strict` and `session_ttl_s`, and any other key is refused the same way.
   */
  readonly settingsSchema?: z.ZodType;
}

/**
 * A chain input the chain carries and changes between hooks ({@link EventProfile.composeInput}): VCP's
 * HookInput, serialized in parts, each again only after a change.
 */
export interface ComposedInput {
  /** The whole input as one JSON string: the only thing that crosses into the sandbox. */
  json(): string;
  /** What a condition reads. */
  conditionView(): object;
  /** What lifecycle events say about the input. */
  summary(inputBytes: number): InputSummary;
  /** Take the chain state a hook left (spec §5.6); the refusal text when it is not a JSON object or too deep. */
  adoptChainState(chainStateJson: string, jsonDepth: number): string | undefined;
  /**
   * Apply a `modify` output, recording what changed on `execution`; the refusal text when the change
   * is refused whole (a modified constitution failing `integrity.check`).
   */
  apply(output: NativeObject, hook: ResolvedHook, execution: HookExecution, integrity: ChainIntegrity): string | undefined;
  readonly context: VcpContext;
  readonly constitution: Constitution;
}

/** What the executor hands {@link ComposedInput.apply}: the integrity checker and the audit diff, when configured. */
export interface ChainIntegrity {
  readonly check?: ConstitutionCheck;
  readonly diff?: (before: unknown, after: unknown) => unknown[];
}
