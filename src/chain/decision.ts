/**
 * The decision record (issue 25 item 3): ONE JSON object per chain, for every profile (VCP included),
 * saying what the chain decided, which hook decided it and why, about what, and which hook changed which
 * field. The same object is in the chain's HTTP answer (`decision`), the audit log's chain record, the
 * decision stream and `GET /v1/decisions` (docs/decisions.md). Pure: built from a finished ChainResult
 * and a few facts the fire layer knows (profile, event, subject, who fired it).
 *
 *   ChainResult ──┬─ outcome     block ⇐ aborted / answer blocks; ask; modify; else allow
 *                 ├─ decided_by  the hook that blocked (aborted_by), asked, or last modified; null for allow
 *                 ├─ reason      its reason (VCP: the chain's) ─┐
 *   subjectOf() ──┼─ subject     tool + command/path, prompt ───┼─► redact (secret shapes) ─► bound (chars)
 *                 ├─ hooks       every hook's outcome, verdict ─┘
 *                 └─ changes     RFC 6902 op + path of each modifying hook (never the values)
 *
 * SECURITY: every text that came from an input or a hook (reason, command, path, tool name) is redacted
 * with the audit log's secret-shape rule BEFORE it is bounded, so a secret cannot survive by being cut,
 * and no prompt text is ever kept (only its SHA-256).
 */
import { hash as digest } from "node:crypto";
import jsonPatch from "fast-json-patch";
import { FAILURE_OUTCOMES, type Outcome } from "../model/result.js";
import type { DecisionChange, DecisionHook, DecisionOutcome, DecisionRecord, DecisionSubject } from "../model/decision.js";
import type { SubjectFacts, Verdict } from "../profiles/types.js";

// The record's types are shared record types (model/decision.ts: the event bus and the audit log read them too).
export { DECISION_OUTCOMES, type DecidedBy, type DecisionChange, type DecisionHook, type DecisionOutcome, type DecisionRecord, type DecisionSubject } from "../model/decision.js";
import type { ChainResult, HookExecution } from "../model/chain.js";

/** The `profile` of a VCP chain's record; its `event` is the hook type. */
export const VCP_DECISION_PROFILE = "vcp";

/** Bounds (characters, after redaction). The summary is what a console row shows. */
export const DECISION_LIMITS = Object.freeze({
  summary: 200,
  tool: 200,
  command: 1000,
  path: 1000,
  reason: 1000,
  hookReason: 256,
  changePath: 200,
  /** Changes kept per chain (the rest are counted in `changes_omitted`). */
  changes: 64,
});

/** What the fire layer knows besides the chain's result. */
export interface DecisionFacts {
  profile: string;
  event: string;
  /** Chain start, ISO-8601. */
  at: string;
  subject: SubjectFacts;
  session: string | null;
  client: string | null;
  /** Profile chains: what the merged answer amounts to (`profile.verdictOf(answer)`). */
  answerVerdict?: Verdict;
  /** Profile chains: the answer's own reason, used when no hook gives one (e.g. a profile's own deny). */
  answerReason?: string;
  /**
   * The audit log's secret-shape redaction of a string of which at most `keep` characters are kept
   * (audit/redact-string.ts `redactHead`): it reads no further than a fixed lookahead past `keep`.
   */
  redact: (text: string, keep: number) => string;
  /**
   * Why the chain allowed with no hook deciding anything — {@link NO_HOOK_SELECTED},
   * {@link UNKNOWN_EVENT_OBSERVED}: the record's reason when its outcome is `allow`.
   */
  idleReason?: string;
}

/** The reason of a chain no hook applied to: none is installed for its event, or none was selected. */
export const NO_HOOK_SELECTED = "no hook selected";

/** The reason of an event newer than its profile, answered with the neutral answer (observe-only). */
export const UNKNOWN_EVENT_OBSERVED = "unknown event, observe-only";

/** Outcomes counted in `errors`: the hook's own failures, and hooks refused or stopped by the chain deadline. */
const ERROR_OUTCOMES: ReadonlySet<Outcome> = new Set<Outcome>([...FAILURE_OUTCOMES, "integrity_rejected", "deadline_exceeded"]);

/**
 * `text` cut to `max` characters (an ellipsis marks the cut; a surrogate pair is never split).
 *
 * @example
 * ```ts
 * clip("abcdef", 4); // "abc…"
 * ```
 */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  let cut = max - 1;
  const code = text.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut--;
  return `${text.slice(0, cut)}…`;
}

/**
 * Redact, then bound, then keep it on one line. SECURITY: redaction first (a cut secret is still a
 * secret); `redact` reads only the head it needs, so a 10 MB command costs what a short one costs.
 */
function safe(text: string, max: number, redact: DecisionFacts["redact"]): string {
  return clip(redact(text, max).replace(/[\r\n]+/g, " "), max);
}

/**
 * The subject as recorded: redacted, bounded, the prompt digested, with its one-line summary.
 *
 * @example
 * ```ts
 * recordedSubject({ kind: "tool", tool: "run_shell_command", command: "rm -rf /" }, "BeforeTool", redactHead);
 * // { kind: "tool", tool: "run_shell_command", command: "rm -rf /", summary: "run_shell_command: rm -rf /" }
 * ```
 */
export function recordedSubject(facts: SubjectFacts, event: string, redact: DecisionFacts["redact"]): DecisionSubject {
  const tool = facts.tool !== undefined ? safe(facts.tool, DECISION_LIMITS.tool, redact) : undefined;
  const command = facts.command !== undefined ? safe(facts.command, DECISION_LIMITS.command, redact) : undefined;
  const path = facts.path !== undefined ? safe(facts.path, DECISION_LIMITS.path, redact) : undefined;
  // SECURITY: a prompt is identified by its digest only; its text never leaves this function.
  const promptSha256 = facts.prompt !== undefined ? digest("sha256", facts.prompt, "hex") : undefined;
  const vcpType = facts.vcp_type !== undefined ? safe(facts.vcp_type, DECISION_LIMITS.tool, redact) : undefined;
  let summary: string;
  switch (facts.kind) {
    case "tool": {
      const what = command ?? path;
      summary = what !== undefined ? `${tool ?? event}: ${what}` : (tool ?? event);
      break;
    }
    case "prompt":
      summary = promptSha256 !== undefined ? `${event}: prompt sha256:${promptSha256.slice(0, 12)}` : event;
      break;
    case "vcp":
      summary = `vcp ${vcpType ?? event}`;
      break;
    default:
      summary = event;
  }
  // Members in sorted order (see buildDecision).
  const out = {} as DecisionSubject;
  if (command !== undefined) out.command = command;
  out.kind = facts.kind;
  if (path !== undefined) out.path = path;
  if (promptSha256 !== undefined) out.prompt_sha256 = promptSha256;
  out.summary = clip(summary, DECISION_LIMITS.summary);
  if (tool !== undefined) out.tool = tool;
  if (vcpType !== undefined) out.vcp_type = vcpType;
  return out;
}

/** The chain's effect: a block wins, then an ask, then a modification. */
function outcomeOf(result: ChainResult, facts: DecisionFacts): DecisionOutcome {
  const answer = facts.answerVerdict;
  if (result.status === "aborted" || answer === "block") return "block";
  // A profile whose presented answer does not carry the ask itself (Amplifier's approval): the hook's verdict.
  if (answer === "ask" || result.hook_results.some((h) => h.verdict === "ask")) return "ask";
  if (answer === "modify" || result.hook_results.some(modified)) return "modify";
  return "allow";
}

/** A hook whose change the chain kept: VCP `modify` that ran (`ok`), or a profile hook with verdict `modify`. */
function modified(h: HookExecution): boolean {
  return h.verdict !== undefined ? h.verdict === "modify" : h.status === "modify" && h.outcome === "ok";
}

/** The hook that decided `outcome`, if any. */
function decisiveHook(result: ChainResult, outcome: DecisionOutcome): HookExecution | undefined {
  const hooks = result.hook_results;
  switch (outcome) {
    case "block":
      return (result.aborted_by !== null ? hooks.find((h) => h.hook === result.aborted_by) : undefined)
        ?? hooks.find((h) => h.verdict === "block" || (h.verdict === undefined && h.status === "abort"));
    case "ask":
      return hooks.find((h) => h.verdict === "ask");
    case "modify":
      // The last change is what the agent or pipeline goes on with.
      return hooks.findLast(modified);
    default:
      return undefined;
  }
}

/** Which hook changed which field: the op and path of each modifying hook's diff (values never kept). */
function changesOf(result: ChainResult, redact: DecisionFacts["redact"]): { changes: DecisionChange[]; dropped: number } {
  const changes: DecisionChange[] = [];
  let dropped = 0;
  // `path`: a diff's path (made of the input's keys: redacted and bounded), or one of the runtime's own.
  const push = (hook: string, op: DecisionChange["op"], path: string, own = false): void => {
    if (changes.length >= DECISION_LIMITS.changes) dropped++;
    else changes.push({ hook, op, path: own ? path : safe(path, DECISION_LIMITS.changePath, redact) });
  };
  for (const h of result.hook_results) {
    if (!modified(h)) continue;
    const ops = Array.isArray(h.modification) ? (h.modification as Array<{ op?: unknown; path?: unknown; _truncated?: unknown; ops?: unknown }>) : undefined;
    const marker = ops?.[0]?._truncated === true ? ops[0] : undefined;
    if (ops !== undefined && ops.length > 0 && marker === undefined) {
      for (const op of ops) {
        if (typeof op.path !== "string") continue;
        push(h.hook, op.op === "add" || op.op === "remove" ? op.op : "replace", op.path);
      }
      continue;
    }
    // An oversized diff (a marker): its ops are counted as left out, and the fields it changed are named below.
    if (marker !== undefined && typeof marker.ops === "number") dropped += marker.ops;
    // No diff (the runtime computes VCP diffs only with an audit log): the fields the hook changed.
    if (h.modified_context === true) push(h.hook, "replace", "/context", true);
    if (h.modified_constitution === true) push(h.hook, "replace", "/constitution", true);
  }
  return { changes, dropped };
}

/**
 * The decision record of a finished chain.
 *
 * @example
 * ```ts
 * const record = buildDecision(result, {
 *   profile: "gemini-cli", event: "BeforeTool", at: "2026-11-28T09:12:03.123Z",
 *   subject: profile.subjectOf!(input, "BeforeTool"), session: "s1", client: "ci-bot",
 *   answerVerdict: profile.verdictOf(result.profile!.native, "BeforeTool"), redact: redactHead,
 * });
 * record.outcome; // "block"
 * ```
 */
export function buildDecision(result: ChainResult, facts: DecisionFacts): DecisionRecord {
  const { redact } = facts;
  const outcome = outcomeOf(result, facts);
  const decisive = decisiveHook(result, outcome);
  const rawReason = outcome === "allow" ? facts.idleReason : ((outcome === "block" ? (result.reason ?? undefined) : undefined) ?? decisive?.reason ?? facts.answerReason);
  const { changes, dropped } = changesOf(result, redact);
  let errors = 0;
  const hooks = result.hook_results.map((h): DecisionHook => {
    if (ERROR_OUTCOMES.has(h.outcome)) errors++;
    const entry: DecisionHook = { bundle: h.bundle, duration_ms: h.duration_ms, hook: h.hook, outcome: h.outcome };
    if (h.reason !== undefined) entry.reason = safe(h.reason, DECISION_LIMITS.hookReason, redact);
    if (h.verdict !== undefined) entry.verdict = h.verdict;
    return entry;
  });
  // Members in sorted order, here and in every object of the record: its JSON text is then also its
  // RFC 8785 form, which the audit writer hashes without writing it a second time (audit/redact.ts jsonTexts).
  return {
    at: facts.at,
    chain_id: result.chain_id,
    changes,
    ...(dropped > 0 ? { changes_omitted: dropped } : {}),
    client: facts.client,
    decided_by: decisive !== undefined ? { bundle: decisive.bundle, hook: decisive.hook, revision: decisive.bundle_digest ?? null } : null,
    errors,
    event: facts.event,
    hooks,
    outcome,
    profile: facts.profile,
    reason: rawReason !== undefined && rawReason !== "" ? safe(rawReason, DECISION_LIMITS.reason, redact) : null,
    session: facts.session !== null && facts.session !== "" ? facts.session : null,
    subject: recordedSubject(facts.subject, facts.event, redact),
  };
}

/**
 * The RFC 6902 ops (op and path, no values) that turn `before` into `after`, for a profile hook's
 * modification, by fast-json-patch's `compare`: only top-level fields whose value changed are compared,
 * so an unchanged large field (an LLM request) costs nothing. Above `max` ops, one marker op
 * `{ _truncated: true, ops }` stands for the list.
 *
 * @example
 * ```ts
 * changedPaths({ tool_input: { command: "ls" } }, { tool_input: { command: "ls -la" } }); // [{ op: "replace", path: "/tool_input/command" }]
 * ```
 */
export function changedPaths(before: Record<string, unknown>, after: Record<string, unknown>, max: number = DECISION_LIMITS.changes): unknown[] {
  const out: Array<{ op: string; path: string }> = [];
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (before[key] === after[key]) continue;
    const side = (o: Record<string, unknown>) => (Object.hasOwn(o, key) ? { [key]: o[key] } : {});
    for (const op of jsonPatch.compare(side(before), side(after))) out.push({ op: op.op, path: op.path });
  }
  return out.length > max ? [{ _truncated: true, ops: out.length }] : out;
}
