/**
 * Verifying the audit logs of several replicas at once (issue 18). Each replica keeps its own hash
 * chain (its id in every record, `replica`), so a set of logs is verified chain by chain — never
 * merged into one — and reported per replica.
 *
 * What a path names:
 * - a file: one chain. A base path (`audit.jsonl`) brings its rotated segments with it (verify.ts);
 *   segments named explicitly (`audit.jsonl.000001 audit.jsonl`) join the chain of their base path,
 *   in the order given, as a single-log `audit verify` always took them.
 * - a directory: the log in it — `<dir>/audit.jsonl` (an audit directory) or `<dir>/audit/audit.jsonl`
 *   (a data directory) — or, when it holds neither, the log of each subdirectory that does (a volume
 *   holding one data directory per replica). A directory with no log is a failure, not "0 records".
 *
 * The set fails when any chain fails, and when one replica id names records in two logs: two chains
 * claiming one replica cannot both be that replica's, so which records are whose is unknowable.
 *
 * It also fails when a log is missing from it (issue 27): each replica records in its own chain the
 * replicas it has seen in the shared store (`replica_set` records, store/replica-set.ts), so a
 * replica that a verified record names but whose log was not given is reported by name, with the log
 * and seq that name it. One log alone is one chain's verify: the replicas it names are listed in
 * `missing`, but only a set of two or more logs fails for them.
 */
import { open, readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { isSegmentPath, listSegments } from "./files.js";
import { verifyAuditLog, type AuditVerdict, type VerifyAuditOptions } from "./verify.js";

/** The base name of a log inside an audit directory, and the audit directory inside a data directory. */
const LOG_NAME = "audit.jsonl";
const AUDIT_DIR = "audit";

/** One chain of a set: the log it was read from, the replica its records name, and its verdict. */
export interface ReplicaLogVerdict {
  /** The log's base path (its rotated segments are read with it). */
  log: string;
  /**
   * The replica id of the chain's newest verified record that names one; when no verified record
   * names one (the first record is already broken), the id the log's first record claims, with
   * `replica_verified: false`; null for a log written without ids.
   */
  replica: string | null;
  replica_verified: boolean;
  verdict: AuditVerdict;
}

export interface AuditSetVerdict {
  /** Every chain verifies, no replica id names records in two logs, and (two or more logs) `missing` is empty. */
  ok: boolean;
  logs: ReplicaLogVerdict[];
  /** Problems of the set itself (a replica id in two logs), beside each chain's own verdict. */
  problems: string[];
  /**
   * Replicas named by a verified `replica_set` record of a given log whose own log was not given. With
   * two or more logs each fails the set; with one log they are listed only (one chain's verify).
   */
  missing: MissingReplica[];
}

/** A replica in a recorded replica set without a log in the set verified. */
export interface MissingReplica {
  replica: string;
  /** The first log (and the seq in it) whose replica_set record names it. */
  named_by: { log: string; seq: number };
}

/**
 * Verify each chain named by `paths` (files or directories, see the module comment) and report per
 * replica. `options.anchor` applies to a set of exactly one log (an anchor is one chain's head).
 *
 * @example
 * ```ts
 * const set = await verifyAuditLogSet(["/data/replica-a", "/data/replica-b", "/data/replica-c"]);
 * for (const { replica, verdict } of set.logs) console.log(replica, verdict.ok ? "ok" : verdict.reason);
 * ```
 */
export async function verifyAuditLogSet(paths: readonly string[], options: VerifyAuditOptions = {}): Promise<AuditSetVerdict> {
  const chains = await chainsOf(paths);
  const logs: ReplicaLogVerdict[] = [];
  const problems: string[] = [];
  if (options.anchor !== undefined && chains.length > 1) {
    problems.push(`an anchor names one chain's head, but ${chains.length} logs were given: verify the anchored log on its own`);
  }
  for (const chain of chains) {
    const verdict = await verifyAuditLog(chain.files, chains.length === 1 ? options : {});
    const verified = verdict.replicas?.at(-1);
    logs.push(verified !== undefined ? { log: chain.log, replica: verified, replica_verified: true, verdict } : { log: chain.log, replica: await claimedReplica(chain.files), replica_verified: false, verdict });
  }
  // One replica id in two logs: the chains cannot both be that replica's.
  const seen = new Map<string, string[]>();
  for (const { log, verdict } of logs) {
    for (const id of verdict.replicas ?? []) seen.set(id, [...(seen.get(id) ?? []), log]);
  }
  for (const [id, where] of seen) {
    if (where.length > 1) problems.push(`replica id '${id}' names records in ${where.length} logs (${where.join(", ")}): each replica must keep its own chain`);
  }
  // Replicas a recorded set names whose log is not here (a broken log counts by the id it claims).
  const given = new Set<string>([...seen.keys(), ...logs.flatMap((l) => (l.replica !== null ? [l.replica] : []))]);
  const missing: MissingReplica[] = [];
  for (const { log, verdict } of logs) {
    for (const { replica, seq } of verdict.replica_set ?? []) {
      if (!given.has(replica) && !missing.some((m) => m.replica === replica)) missing.push({ replica, named_by: { log, seq } });
    }
  }
  const complete = logs.length < 2 || missing.length === 0;
  return { ok: complete && problems.length === 0 && logs.every((l) => l.verdict.ok), logs, problems, missing };
}

/** The chains `paths` name, in order of first mention, each with the files verify.ts reads for it. */
async function chainsOf(paths: readonly string[]): Promise<Array<{ log: string; files: string[] }>> {
  const chains = new Map<string, string[]>();
  const add = (log: string, file: string): void => {
    const files = chains.get(log);
    if (files === undefined) chains.set(log, [file]);
    else if (!files.includes(file)) files.push(file);
  };
  for (const path of paths) {
    if (await isDirectory(path)) {
      for (const log of await logsInDirectory(path)) add(log, log);
      continue;
    }
    // A segment joins the chain of its base path; anything else is a base path (missing ones too:
    // verify.ts reports "no audit log at …" for them).
    add(resolve(isSegmentPath(path) ? path.replace(/\.\d{6,}$/, "") : path), path);
  }
  return [...chains].map(([log, files]) => ({ log, files }));
}

/** The log of an audit or data directory, else of each subdirectory that is one; refuses an empty find. */
async function logsInDirectory(dir: string): Promise<string[]> {
  const own = await logIn(dir);
  if (own !== null) return [own];
  const found: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (!entry.isDirectory()) continue;
    const log = await logIn(join(dir, entry.name));
    if (log !== null) found.push(log);
  }
  // A directory the caller named but holding no log: say so (as a missing file is), never "0 records".
  return found.length > 0 ? found : [resolve(dir, LOG_NAME)];
}

/** `<dir>/audit.jsonl` or `<dir>/audit/audit.jsonl` when it (or a rotated segment of it) exists. */
async function logIn(dir: string): Promise<string | null> {
  for (const candidate of [join(dir, LOG_NAME), join(dir, AUDIT_DIR, LOG_NAME)]) {
    if ((await isFile(candidate)) || (await listSegments(candidate)).length > 0) return resolve(candidate);
  }
  return null;
}

/** The `replica` the first record of a log claims (unverified: only for naming a broken log). */
async function claimedReplica(files: readonly string[]): Promise<string | null> {
  for (const file of files) {
    let handle;
    try {
      handle = await open(file, "r");
    } catch {
      continue;
    }
    try {
      const buf = Buffer.alloc(64 * 1024);
      const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
      const first = buf.subarray(0, bytesRead).toString("utf8").split("\n")[0] ?? "";
      const claimed = /"replica":"([A-Za-z0-9._-]{1,128})"/.exec(first)?.[1];
      return claimed ?? null;
    } finally {
      await handle.close();
    }
  }
  return null;
}

async function isDirectory(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}
