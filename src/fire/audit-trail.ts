import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { capChainAudit, createRedactor, hashInput, listSegments, queryDecisions, type DecisionPage, type DecisionQuery, openAuditLog, startAuditRetention, type AuditRecord, type AuditRecordInput, type AuditRetention, type AuditRetentionPolicy, type AuditWriter, type AuditBudget } from "../audit/index.js";
import type { Logger } from "../observe/events.js";
import type { ChainResult } from "../model/chain.js";
import type { DecisionRecord } from "../chain/decision.js";
import type { LifecycleEvent } from "../observe/events.js";
import { DEFAULTS } from "../config/defaults.js";
import { VcpError } from "../errors.js";

/** Where and how the runtime writes its audit log (DESIGN §5, `audit` in vcp.yaml). */
export interface AuditOptions {
  path: string;
  fsync?: "batch" | "always" | "never";
  rotateBytes?: number;
  /** Records waiting for the group commit before `append` applies backpressure. Default 4096. */
  maxPending?: number;
  /**
   * Group-commit window in ms (`audit.group_commit_ms`): batches are written and synced at least this
   * far apart, so under load more records share a sync (a writer idle that long writes at once); a
   * record may wait up to this long more. Default 0 (none).
   */
  groupCommitMs?: number;
  /**
   * Bytes one chain's records may take together (`audit.max_chain_bytes`, audit/chain-budget.ts);
   * above it the largest diffs, annotations and details become `AUDIT_TRUNCATED` markers. Default 64 KiB.
   */
  maxChainBytes?: number;
  /** Keys whose values are redacted in annotations and details (default DEFAULTS.redact_keys, config/defaults.ts); secret shapes always are. */
  redactKeys?: readonly string[];
  /** Seconds each fdatasync took (the runtime's audit fsync latency histogram). */
  onSync?: (seconds: number) => void;
  /**
   * Delete old rotated segments (`audit.retention`, audit/retention.ts): by count, bytes and/or age,
   * and — unless `requireShipped: false` — only those the decision-log sink has shipped, read from its
   * cursor file (`sinkCursorFile`, the `cursorFile` given to startAuditSink; required then).
   */
  retention?: AuditRetentionPolicy & { sinkCursorFile?: string; intervalMs?: number };
}

export interface AuditQuery {
  session?: string;
  /** Only records of sessions this principal opened (session ids are per owner: two owners may share one). */
  owner?: string;
  /** Only records with `seq` greater than this. */
  since?: number;
  /** At most this many records, oldest first. Default 100, at most 10,000. */
  limit?: number;
}

/**
 * The runtime's side of the audit log (spec §8.2.3): turns each chain result into one record per
 * executed or skipped hook plus one per chain, and registry changes into registry records. Inputs
 * are recorded by hash only, never by value.
 */
export async function createAuditTrail(options: AuditOptions, replica?: string, logger?: Logger) {
  const maxChainBytes = options.maxChainBytes ?? DEFAULTS.audit.max_chain_bytes;
  if (!Number.isSafeInteger(maxChainBytes) || maxChainBytes < 4096) {
    throw new VcpError("INVALID_CONFIG", `audit.maxChainBytes must be an integer of at least 4096, got ${String(maxChainBytes)}`, { field: "audit.maxChainBytes" });
  }
  const chainBudget: AuditBudget = { maxBytes: maxChainBytes, fit: (records) => capChainAudit(records as AuditRecordInput[], maxChainBytes) };
  // Assigned right after the writer opens; a rotation before that has nothing to run yet.
  let retention: AuditRetention | undefined;
  const writer: AuditWriter = await openAuditLog({
    path: options.path,
    fsync: options.fsync ?? DEFAULTS.audit.fsync,
    rotateBytes: options.rotateBytes ?? DEFAULTS.audit.rotate_bytes,
    maxPending: options.maxPending ?? DEFAULTS.audit.max_pending,
    flushIntervalMs: options.groupCommitMs ?? DEFAULTS.audit.group_commit_ms,
    // Secrets in annotations and error text are redacted before they are hashed into the log.
    redact: createRedactor({ keys: [...(options.redactKeys ?? DEFAULTS.redact_keys)] }),
    ...(options.onSync !== undefined ? { onSync: options.onSync } : {}),
    // Every record names this replica (runtime/replica-id.ts): one chain per replica, attributable.
    ...(replica !== undefined ? { replica } : {}),
    onRotate: () => retention?.kick(),
  });
  if (options.retention !== undefined) {
    try {
      retention = startAuditRetention({ ...options.retention, path: options.path, writer, ...(logger !== undefined ? { logger } : {}) });
    } catch (err) {
      await writer.close().catch(() => undefined);
      throw err;
    }
  }

  return {
    writer,
    /** Hash the caller's input once per chain: the same hash marks every hook record of the chain. */
    inputHash(input: { context: unknown; constitution: unknown; event: unknown; session: unknown }): string {
      return hashInput({ context: input.context, constitution: input.constitution, event: input.event, session: input.session });
    },
    /**
     * Durably record one chain; resolves after the group commit (backpressure instead of drops).
     * Every record names the session and, when a principal opened it, its owner.
     * `disabledHooks`: hooks the runtime disabled in this session after this chain's cascading failure (spec §7.3.4).
     * `inputHash` undefined: a chain no hook applied to, whose input nothing read (docs/decisions.md).
     */
    async recordChain(result: ChainResult, session: { id: string; owner: string | null }, inputHash: string | undefined, disabledHooks: readonly string[] = []): Promise<void> {
      const sessionId = session.id;
      const owner = session.owner !== null ? { owner: session.owner } : {};
      // An event-profile chain names its profile and event (it has no VCP type); a VCP chain its hook type.
      const origin = result.profile !== undefined ? { profile: result.profile.profile, profile_event: result.profile.event } : { hook_type: result.type };
      // Members set one by one (absent ones left out, not spread in): one object per record, the
      // writer reads them in its own field order.
      const records: AuditRecordInput[] = result.hook_results.map((hook) => {
        const record: AuditRecordInput = { kind: "hook", session: sessionId };
        if (session.owner !== null) record.owner = session.owner;
        record.chain_id = result.chain_id;
        record.hook = hook.hook;
        if (result.profile !== undefined) {
          record.profile = result.profile.profile;
          record.profile_event = result.profile.event;
        } else if (result.type !== undefined) record.hook_type = result.type;
        record.scope = hook.scope;
        record.bundle = hook.bundle;
        if (hook.bundle_digest !== undefined) record.bundle_digest = hook.bundle_digest;
        if (inputHash !== undefined) record.input_hash = inputHash;
        record.status = hook.status;
        record.outcome = hook.outcome;
        record.duration_ms = hook.duration_ms;
        // PROFILES §6: an exec hook's record says it ran outside the sandbox, and what ran.
        if (hook.sandboxed === false) record.sandboxed = false;
        if (hook.exec !== undefined) record.exec = hook.exec;
        if (hook.modification !== undefined) record.modification = hook.modification as NonNullable<AuditRecordInput["modification"]>;
        if (hook.provenance !== undefined) record.provenance = hook.provenance;
        if (hook.annotations !== undefined) record.annotations = hook.annotations;
        if (hook.error !== undefined || hook.reason !== undefined) record.details = { error: hook.error, reason: hook.reason };
        return record;
      });
      records.push({
        kind: "chain",
        session: sessionId,
        ...owner,
        chain_id: result.chain_id,
        ...origin,
        ...(inputHash !== undefined ? { input_hash: inputHash } : {}),
        status: result.status,
        duration_ms: result.duration_ms,
        // The chain's decision record (chain/decision.ts): what GET /v1/decisions reads back.
        ...(result.decision !== undefined ? { decision: result.decision } : {}),
        // Members in sorted order: the JSON text is the canonical one (audit/redact.ts jsonTexts).
        details: {
          aborted_by: result.aborted_by,
          cascade_failure: result.cascade_failure,
          // Cascade disables are session-local (spec §7.3.4): say so, and in which session.
          ...(disabledHooks.length > 0 ? { disabled_hooks: [...disabledHooks], disabled_scope: "session", disabled_session: sessionId } : {}),
          ...(result.profile !== undefined ? { exit_code: result.profile.exit_code } : {}),
          hooks: result.hook_results.length,
          ...(result.profile !== undefined ? { mode: result.profile.mode } : {}),
          // An agent chain's reason is its decision's (VCP chains keep their own, unchanged).
          reason: result.profile !== undefined ? (result.decision?.reason ?? null) : result.reason,
        },
      });
      // SECURITY: one request's chain cannot write more than the budget, however many hooks echo its input.
      // Measured by the writer from the texts it writes; cut only when over (audit/chain-budget.ts).
      await writer.appendMany(records, chainBudget);
    },
    /**
     * A refused event a fail-closed hook guards (issue 24): ONE chain record, outcome
     * `refused_fail_closed`, with the refusal's code and message and the hooks whose guard blocked it.
     * No input hash: the input was refused before it was read whole (or parsed).
     */
    recordProfileRefusal(refusal: { chainId: string; profile: string; event: string; owner: string | null; code: string; message: string; guardedBy: readonly string[]; decision?: DecisionRecord }): Promise<unknown> {
      return writer.append({
        kind: "chain",
        session: "",
        ...(refusal.owner !== null ? { owner: refusal.owner } : {}),
        chain_id: refusal.chainId,
        profile: refusal.profile,
        profile_event: refusal.event,
        status: "aborted",
        outcome: "refused_fail_closed",
        duration_ms: 0,
        ...(refusal.decision !== undefined ? { decision: refusal.decision } : {}),
        details: { code: refusal.code, message: refusal.message, exit_code: 2, guarded_by: [...refusal.guardedBy] },
      });
    },
    /**
     * An event newer than its profile (`EventProfile.unknownEventPattern`), answered with the neutral
     * answer and no hook run: one chain record, outcome `unknown_event`, so the log shows what the agent
     * sent that this version could not judge.
     */
    recordProfileUnknownEvent(event: { chainId: string; profile: string; event: string; owner: string | null; session: string; inputHash: string; exitCode: number; decision?: DecisionRecord }): Promise<unknown> {
      return writer.append({
        kind: "chain",
        session: event.session,
        ...(event.owner !== null ? { owner: event.owner } : {}),
        chain_id: event.chainId,
        profile: event.profile,
        profile_event: event.event,
        input_hash: event.inputHash,
        status: "completed",
        outcome: "unknown_event",
        duration_ms: 0,
        ...(event.decision !== undefined ? { decision: event.decision } : {}),
        details: { exit_code: event.exitCode, hooks: 0, observe: true },
      });
    },
    /** Registry changes (hook.registered / hook.deregistered) as registry records. */
    recordRegistry(event: LifecycleEvent): Promise<unknown> {
      const payload = event.payload as { hook?: string; type?: string; profile?: string; event?: string; scope?: string; session_id?: string; owner?: string; bundle?: string; principal?: string; reason?: string };
      // A VCP hook keeps its `hook_type`; an event-profile hook is named by profile and event, as its chains are.
      const isProfileHook = payload.profile !== undefined && payload.type === undefined;
      return writer.append({
        kind: "registry",
        event: event.event,
        ...(payload.hook !== undefined ? { hook: payload.hook } : {}),
        ...(payload.type !== undefined ? { hook_type: payload.type } : {}),
        ...(isProfileHook ? { profile: payload.profile, ...(payload.event !== undefined ? { profile_event: payload.event } : {}) } : {}),
        ...(payload.scope !== undefined ? { scope: payload.scope } : {}),
        ...(payload.session_id !== undefined ? { session: payload.session_id } : {}),
        ...(payload.owner !== undefined ? { owner: payload.owner } : {}),
        ...(payload.bundle !== undefined ? { bundle: payload.bundle } : {}),
        // `reason`: why the registry itself took a hook out (a revision that no longer offers it, a removal).
        details: { principal: payload.principal, ...(payload.reason !== undefined ? { reason: payload.reason } : {}) },
      });
    },
    /**
     * A refused bundle install (e.g. an exec hook without the command lane, EXEC_DISABLED): the code,
     * the message and the error's details, so a refusal is as visible in the log as an install.
     * `published`: not a refusal — the shared store took the change (the other replicas run it) and only
     * this replica's data directory did not (PUBLISHED_NOT_PERSISTED): `bundle.not_persisted`, status
     * `published`, so the log never says "refused" of a change that runs elsewhere.
     */
    recordBundleRefusal(refusal: { bundle: string | undefined; digest: string | undefined; code: string; message: string; details?: Record<string, unknown>; principal?: string; published?: boolean }): Promise<unknown> {
      return writer.append({
        kind: "bundle",
        event: refusal.published === true ? "bundle.not_persisted" : "bundle.refused",
        ...(refusal.bundle !== undefined ? { bundle: refusal.bundle } : {}),
        ...(refusal.digest !== undefined ? { bundle_digest: refusal.digest } : {}),
        status: refusal.published === true ? "published" : "refused",
        details: { code: refusal.code, message: refusal.message, ...(refusal.details !== undefined ? { error: refusal.details } : {}), ...(refusal.principal !== undefined ? { principal: refusal.principal } : {}) },
      });
    },
    /** Read records back (operator API `GET /v1/audit`), oldest first, across rotated files. */
    async query(query: AuditQuery = {}): Promise<AuditRecord[]> {
      await writer.flush();
      const limit = Math.min(Math.max(query.limit ?? 100, 1), 10_000);
      const files = [...(await listSegments(options.path)).map((s) => s.path), options.path];
      const out: AuditRecord[] = [];
      for (const file of files) {
        let text: string;
        try {
          text = await readFile(file, "utf8");
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
          throw err;
        }
        for (const line of text.split("\n")) {
          if (line === "") continue;
          const record = JSON.parse(line) as AuditRecord;
          if (query.since !== undefined && record.seq <= query.since) continue;
          if (query.session !== undefined && record.session !== query.session) continue;
          if (query.owner !== undefined && record.owner !== query.owner) continue;
          out.push(record);
          if (out.length >= limit) return out;
        }
      }
      return out;
    },
    /** Decision records, newest first, one page (`GET /v1/decisions`, audit/decisions.ts). */
    async decisions(query: DecisionQuery): Promise<DecisionPage> {
      await writer.flush();
      return queryDecisions(options.path, query);
    },
    head: () => writer.head(),
    stats: () => writer.stats(),
    /** `audit.retention` as of its last run; null without retention. */
    retention: () => retention?.stats() ?? null,
    async close() {
      // Retention appends to the log: stopped (its run finished) before the writer closes.
      await retention?.close();
      await writer.close();
    },
  };
}

export type AuditTrail = Awaited<ReturnType<typeof createAuditTrail>>;

/** Default audit path under a data directory (DESIGN §6.4 `audit.path`). */
export function defaultAuditPath(dataDir: string): string {
  return join(dataDir, "audit", "audit.jsonl");
}
