/**
 * The decision record's types (issue 25 item 3; built by chain/decision.ts, docs/decisions.md): shared
 * record types, here at the bottom, because the chain, the event bus (observe/events.ts) and the audit
 * log all carry the record.
 */
import type { Outcome, Verdict } from "./result.js";

/** What a chain's effect was for the agent or pipeline. */
export const DECISION_OUTCOMES = ["allow", "block", "modify", "ask"] as const;
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];

/** What a decision is about: a tool call, a prompt, a VCP chain, or another event. */
export type SubjectKind = "tool" | "prompt" | "vcp" | "event";

export interface DecisionSubject {
  kind: SubjectKind;
  tool?: string;
  command?: string;
  path?: string;
  /** Prompt events: hex SHA-256 of the prompt (never the text). */
  prompt_sha256?: string;
  vcp_type?: string;
  /** One line, at most 200 characters. */
  summary: string;
}

export interface DecisionHook {
  hook: string;
  bundle: string;
  outcome: Outcome;
  verdict?: Verdict;
  duration_ms: number;
  reason?: string;
}

export interface DecisionChange {
  hook: string;
  op: "replace" | "add" | "remove";
  /** RFC 6902 path: native-input-rooted for a profile (`/tool_input/command`), `{context, constitution}`-rooted for VCP. */
  path: string;
}

export interface DecidedBy {
  hook: string;
  bundle: string;
  /** Digest of the bundle revision that ran the hook (`sha256:…`), null when unknown. */
  revision: string | null;
}

/** The record (wire names: snake_case). */
export interface DecisionRecord {
  chain_id: string;
  /** Chain start, ISO-8601. */
  at: string;
  profile: string;
  event: string;
  outcome: DecisionOutcome;
  /** Hooks that failed (threw, timed out, invalid output, crashed, refused). */
  errors: number;
  decided_by: DecidedBy | null;
  reason: string | null;
  subject: DecisionSubject;
  hooks: DecisionHook[];
  changes: DecisionChange[];
  /** Present only when changes were left out over {@link DECISION_LIMITS}.changes. */
  changes_omitted?: number;
  session: string | null;
  /** The principal id that fired the chain; null for the embedding application. */
  client: string | null;
}
