import { createHmac, hash as sha256 } from "node:crypto";
import type { Operation } from "fast-json-patch";
import type { ConstitutionProvenance } from "../model/chain.js";
import { canonicalJson } from "../integrity/canonical.js";
import { digestOf } from "../integrity/digest.js";

/** `prev` of the first record of a log: no record came before it. */
export const GENESIS_HASH = `sha256:${"0".repeat(64)}`;

/**
 * What a caller hands the audit writer for one record (DESIGN §5, spec §8.2.3). Wire names are the
 * spec's snake_case. The writer adds `seq`, `ts`, `prev` and `hash`; unknown fields are dropped.
 */
export interface AuditRecordInput {
  /**
   * One record per hook execution, per chain, and per registry change; approvals (Amplifier
   * `ask_user`, PROFILES §3.4) add one record when asked and one when decided or expired. Records about
   * the log itself: `retention` (rotated segments audit retention is deleting, audit/retention.ts) and
   * `replica_set` (the replicas this replica has seen in its shared store, so a set verify can tell a
   * missing log, audit/verify-set.ts).
   */
  kind: "hook" | "chain" | "registry" | "approval_request" | "approval_decision" | "bundle" | "retention" | "replica_set";
  session?: string;
  /** Id of the principal that opened the session (DESIGN §6.5); absent when the embedding application did. */
  owner?: string;
  chain_id?: string;
  hook?: string;
  hook_type?: string;
  /** Event-profile chains (PROFILES §8.12): the profile id and its event, in place of `hook_type`. */
  profile?: string;
  profile_event?: string;
  scope?: string;
  bundle?: string;
  bundle_digest?: string;
  /** hashInput(input): never the input itself (spec §8.2.3). */
  input_hash?: string;
  status?: string;
  outcome?: string;
  duration_ms?: number;
  /** RFC 6902 diff of what the hook changed (diffForAudit), not the full content. */
  modification?: Operation[];
  /**
   * For a constitution change: content digests before and after (`parent_digest` → `digest`). With
   * hook, bundle and bundle_digest it says who turned which constitution into which, also for an
   * unsigned constitution, which carries no modification link (spec §8.2.4 "if signed").
   */
  provenance?: ConstitutionProvenance;
  annotations?: unknown;
  /** Exec hooks (the command lane, PROFILES §6): `false`, this hook did not run in the sandbox. */
  sandboxed?: false;
  /** Exec hooks: the script's command hash, exit code, signal, duration (or the refusal's code). */
  exec?: { command_sha256: string; exit_code: number | null; signal: string | null; duration_ms: number; timed_out: boolean; truncated: boolean; error_code?: string };
  /** Registry records: what happened (e.g. "hook.registered"); bundle records: "bundle.refused", "bundle.not_persisted". */
  event?: string;
  /**
   * Chain records: the chain's decision record (chain/decision.ts, docs/decisions.md) — outcome, decisive
   * hook, its reason, the subject, per-hook outcomes and changed fields, redacted and bounded. What
   * `GET /v1/decisions` reads back.
   */
  decision?: unknown;
  details?: unknown;
}

/** A record as stored: one JSON line of the log. */
export interface AuditRecord extends AuditRecordInput {
  /**
   * The replica that wrote the record (issue 18): each replica keeps its own chain, and this names it
   * in every record, so records shipped from several replicas stay attributable. Stamped by the writer
   * (never taken from the caller); absent in logs written before replicas had ids, which still verify.
   */
  replica?: string;
  /** 1, 2, 3, … across rotations. */
  seq: number;
  /** ISO-8601 wall-clock time of admission. */
  ts: string;
  /** `hash` of the record before this one; GENESIS_HASH for seq 1. */
  prev: string;
  /** `sha256:<hex>` of the RFC 8785 form of this record without `hash`. */
  hash: string;
}

/** Input fields in the order they are written (readability only: the hash is over RFC 8785 form). */
export const INPUT_FIELDS = [
  "kind", "session", "owner", "chain_id", "hook", "hook_type", "profile", "profile_event", "scope", "bundle", "bundle_digest", "input_hash",
  "status", "outcome", "duration_ms", "sandboxed", "exec", "modification", "provenance", "annotations", "event", "decision", "details",
] as const satisfies ReadonlyArray<keyof AuditRecordInput>;

/** The `event` of a `retention` record (audit/retention.ts writes it, audit/verify.ts reads it). */
export const RETENTION_EVENT = "audit.retention";
/** The `event` of a `replica_set` record (store/replica-set.ts writes it, audit/verify.ts reads it). */
export const REPLICA_SET_EVENT = "replica.set";

/** Fields the writer stamps on every record besides seq, ts, prev and hash (never the caller's to set). */
export const WRITER_FIELDS = ["replica"] as const;

const KINDS = new Set(["hook", "chain", "registry", "approval_request", "approval_decision", "bundle", "retention", "replica_set"]);

/** The hash a record carries: digest of the record without its `hash` field. */
export function recordHash(record: Omit<AuditRecord, "hash"> | Record<string, unknown>): string {
  const { hash: _hash, ...rest } = record as Record<string, unknown>;
  return digestOf(rest);
}

/**
 * Keep the known input fields, as plain JSON data: exactly `JSON.parse(JSON.stringify(fields))`, so
 * what is hashed is what a reader parses back (toJSON, undefined members, -0 all normalized). Strings,
 * booleans and numbers (most fields) are mapped directly; object fields take the JSON round trip.
 * Throws a TypeError for a value JSON cannot carry (BigInt, cycles) or a bad `kind`. The fields go
 * into `out` (after any it holds already); object values of the fields in `raw` go in as they are.
 */
export function normalizeInput(input: AuditRecordInput, out: Record<string, unknown> = {}, raw?: ReadonlySet<string>): Record<string, unknown> {
  if (input === null || typeof input !== "object" || !KINDS.has(input.kind)) {
    throw new TypeError(`audit record kind must be hook, chain, registry, approval_request, approval_decision, bundle, retention or replica_set, got ${JSON.stringify((input as { kind?: unknown } | null)?.kind)}`);
  }
  for (const field of INPUT_FIELDS) {
    const value = input[field];
    switch (typeof value) {
      case "undefined":
      case "function":
      case "symbol":
        continue; // JSON leaves such members out
      case "string":
      case "boolean":
        out[field] = value; // what JSON.parse(JSON.stringify(value)) gives back, lone surrogates included
        continue;
      case "number":
        out[field] = Number.isFinite(value) ? value + 0 : null; // -0 → 0, NaN and ±Infinity → null, as JSON does
        continue;
      default:
        // Objects (and a BigInt, which throws here as before): the round trip, one field at a time.
        if (value === null) out[field] = null;
        // The caller normalizes this one itself (the writer's payload fields: audit/writer.ts).
        else if (typeof value === "object" && raw?.has(field) === true) out[field] = value;
        else {
          const text = JSON.stringify(value); // undefined when a toJSON answers undefined: left out, as JSON does
          if (text !== undefined) out[field] = JSON.parse(text);
        }
    }
  }
  return out;
}

/**
 * The members a record is hashed by, in RFC 8785 order (UTF-16 code units of the names, all ASCII
 * here): the input fields around the three the writer adds at admission. Sorted once, at load.
 */
const CANONICAL_ORDER: readonly string[] = [...INPUT_FIELDS, ...WRITER_FIELDS, "seq", "ts", "prev"].sort();

/**
 * A record's normalized fields, turned into text once, before admission (where seq, ts and prev are
 * not known yet and the writer is not ordered): everything {@link sealPrepared} needs to hash and
 * write the record with string concatenation only.
 */
export interface PreparedRecord {
  /** `JSON.stringify(fields)` without its braces: the middle of the stored line, in INPUT_FIELDS order. */
  readonly json: string;
  /**
   * The RFC 8785 members of the fields, `"name":<canonical value>`, joined with commas in four runs:
   * those that sort before `prev`, between `prev` and `seq`, between `seq` and `ts`, after `ts`.
   */
  readonly canonical: readonly [string, string, string, string];
}

/** Position of each member name in CANONICAL_ORDER; `prev`, `seq` and `ts` (the writer's) split the runs. */
const CANONICAL_INDEX: ReadonlyMap<string, number> = new Map(CANONICAL_ORDER.map((name, i) => [name, i]));
const PREV_AT = CANONICAL_INDEX.get("prev")!;
const SEQ_AT = CANONICAL_INDEX.get("seq")!;
const TS_AT = CANONICAL_INDEX.get("ts")!;

/** `"name":` of every field a record can carry, made once: member names are plain ASCII identifiers. */
const MEMBER_PREFIX: ReadonlyMap<string, string> = new Map(CANONICAL_ORDER.map((name) => [name, `${JSON.stringify(name)}:`]));

/**
 * Turn normalized fields (plain JSON data, see {@link normalizeInput}) into a {@link PreparedRecord}.
 * The hashed text is what {@link recordHash} computes from the stored line parsed back: the same
 * members, each value's canonical form, in canonical order.
 *
 * One text per value serves both forms where it can: for a string, number, boolean or null the RFC
 * 8785 text is exactly what `JSON.stringify` writes (canonical.ts writes strings and numbers through
 * the same rules), so only object values are written twice (sorted for the hash, in their own order
 * for the line). `jsonTexts` may hand over `JSON.stringify` of an object value the caller already
 * made (the writer's redaction pass): it must be exactly that text, which it is for a value that
 * came from `JSON.parse` of it (`JSON.stringify` of a parsed JSON text gives the text back).
 * `canonicalTexts` likewise hands over `canonicalJson` of an object value (then the value itself is
 * not read again: any object stands in for it).
 */
export function prepareRecord(fields: Record<string, unknown>, jsonTexts?: Readonly<Partial<Record<string, string>>>, canonicalTexts?: Readonly<Partial<Record<string, string>>>): PreparedRecord {
  // `"name":<canonical value>` of each hashed member, by its position in CANONICAL_ORDER.
  const members: Array<string | undefined> = new Array<string | undefined>(CANONICAL_ORDER.length);
  // The line's members: what JSON.stringify(fields) writes, member by member, in the fields' own order.
  let json = "";
  for (const name of Object.keys(fields)) {
    const value = fields[name];
    if (value === undefined) continue; // JSON leaves it out, and it is not hashed
    const at = CANONICAL_INDEX.get(name);
    const prefix = MEMBER_PREFIX.get(name);
    let text: string | undefined;
    if (at !== undefined && at !== PREV_AT && at !== SEQ_AT && at !== TS_AT) {
      // A hashed member. For a string, number, boolean or null the canonical text is the JSON text too.
      const canonical = canonicalTexts?.[name] ?? canonicalJson(value);
      members[at] = `${prefix!}${canonical}`;
      text = value === null || typeof value !== "object" ? canonical : (jsonTexts?.[name] ?? JSON.stringify(value));
    } else {
      text = (prefix !== undefined && value !== null && typeof value === "object" ? jsonTexts?.[name] : undefined) ?? JSON.stringify(value);
    }
    if (text === undefined) continue; // JSON leaves out function and symbol members
    if (json.length > 0) json += ",";
    json += prefix ?? `${JSON.stringify(name)}:`;
    json += text;
  }
  // The canonical runs: members that sort before `prev`, between `prev` and `seq`, `seq` and `ts`, after `ts`.
  const runs = ["", "", "", ""];
  let run = 0;
  for (let i = 0; i < members.length; i++) {
    if (i === PREV_AT || i === SEQ_AT || i === TS_AT) {
      run++;
      continue;
    }
    const member = members[i];
    if (member === undefined) continue;
    runs[run] += runs[run]!.length > 0 ? `,${member}` : member;
  }
  return { json, canonical: [runs[0]!, runs[1]!, runs[2]!, runs[3]!] };
}

/**
 * Seal a prepared record at admission: its hash (sha256 of the RFC 8785 form of the record without
 * `hash`) and its line with trailing newline, `{"seq",…,"ts",…,<fields>,"prev",…,"hash",…}`.
 */
export function sealPrepared(prepared: PreparedRecord, seq: number, prev: string, ts: string): { hash: string; line: string } {
  const prevText = JSON.stringify(prev);
  const tsText = JSON.stringify(ts);
  const [beforePrev, beforeSeq, beforeTs, afterTs] = prepared.canonical;
  let text = "{";
  if (beforePrev.length > 0) text += `${beforePrev},`;
  text += `"prev":${prevText}`;
  if (beforeSeq.length > 0) text += `,${beforeSeq}`;
  text += `,"seq":${JSON.stringify(seq)}`;
  if (beforeTs.length > 0) text += `,${beforeTs}`;
  text += `,"ts":${tsText}`;
  if (afterTs.length > 0) text += `,${afterTs}`;
  text += "}";
  const hash = `sha256:${sha256("sha256", text, "hex")}`;
  const fields = prepared.json.length > 0 ? `${prepared.json},` : "";
  return { hash, line: `{"seq":${JSON.stringify(seq)},"ts":${tsText},${fields}"prev":${prevText},"hash":"${hash}"}\n` };
}

/** Build the stored record and its line (with trailing newline) from normalized fields. */
export function sealRecord(fields: Record<string, unknown>, seq: number, prev: string, ts: string): { record: AuditRecord; line: string } {
  const { hash, line } = sealPrepared(prepareRecord(fields), seq, prev, ts);
  return { record: { seq, ts, ...fields, prev, hash } as AuditRecord, line };
}

/**
 * The input hash of spec §8.2.3: `sha256:<hex>` of the RFC 8785 form of the value, so the same input
 * hashes the same whatever its key order. With a `key`, an HMAC-SHA-256 (`hmac-sha256:<hex>`) instead:
 * plain hashes of small, guessable inputs can be reversed by trying candidates; a deployment secret
 * prevents that.
 *
 * @example
 * ```ts
 * hashInput({ context: { user: "a" } }); // "sha256:…"
 * ```
 */
export function hashInput(value: unknown, key?: string | Buffer): string {
  const text = canonicalJson(value);
  if (key === undefined) return `sha256:${sha256("sha256", text, "hex")}`;
  return `hmac-sha256:${createHmac("sha256", key).update(text).digest("hex")}`;
}
