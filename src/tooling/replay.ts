/**
 * Shadow replay (PROFILES §7): the inputs and answers `vcp-hooks hook --record DIR` saved are run again
 * through a JS port, and every decision that differs is listed — the path from "my old scripts" to
 * "sandboxed policies". The runtime call is a parameter (`fire`), so this file is pure apart from
 * reading the directory; `vcp-hooks test --replay DIR --bundle port.vcpb` passes
 * `(profile, event, input) => runtime.fireProfile(profile, event, { input })`.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** One file written by `vcp-hooks hook --record`. */
export interface Recording {
  file: string;
  profile: string;
  event: string;
  input: Record<string, unknown>;
  /** The recorded answer; null when the adapter failed (nothing to compare against). */
  answer: { native: Record<string, unknown>; exit_code: number } | null;
}

export interface ReplayAnswer {
  native: Record<string, unknown>;
  exit_code: number;
}

export type Fire = (profile: string, event: string, input: Record<string, unknown>) => Promise<ReplayAnswer>;

export interface Difference {
  file: string;
  event: string;
  /** JSON-pointer-like paths where the answers differ (`/decision`, `exit_code`). */
  paths: string[];
  recorded: ReplayAnswer;
  replayed: ReplayAnswer;
}

export interface ReplayReport {
  replayed: number;
  same: number;
  skipped: Array<{ file: string; why: string }>;
  differences: Difference[];
}

const MAX_RECORDING_BYTES = 16 * 1024 * 1024;

/** Read every `*.json` recording of `dir`, in file-name (= time) order; unreadable ones are skipped with the reason. */
export function readRecordings(dir: string): { recordings: Recording[]; skipped: Array<{ file: string; why: string }> } {
  const recordings: Recording[] = [];
  const skipped: Array<{ file: string; why: string }> = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".json")).sort()) {
    const file = join(dir, name);
    try {
      if (statSync(file).size > MAX_RECORDING_BYTES) throw new Error(`larger than ${MAX_RECORDING_BYTES} bytes`);
      const doc = JSON.parse(readFileSync(file, "utf8")) as Partial<Recording>;
      if (typeof doc.profile !== "string" || typeof doc.event !== "string" || typeof doc.input !== "object" || doc.input === null) throw new Error("not a vcp-hooks hook --record file (profile, event, input)");
      recordings.push({ file: name, profile: doc.profile, event: doc.event, input: doc.input, answer: doc.answer ?? null });
    } catch (err) {
      skipped.push({ file: name, why: (err as Error).message });
    }
  }
  return { recordings, skipped };
}

/** Paths where two JSON values differ (object keys in sorted order; arrays by index). */
export function jsonDifferences(a: unknown, b: unknown, path = ""): string[] {
  if (a === b) return [];
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null || Array.isArray(a) !== Array.isArray(b)) return [path || "/"];
  if (Array.isArray(a) && Array.isArray(b)) {
    const out: string[] = [];
    for (let i = 0; i < Math.max(a.length, b.length); i++) out.push(...jsonDifferences(a[i], b[i], `${path}/${i}`));
    return out;
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const out: string[] = [];
  for (const key of [...new Set([...Object.keys(ao), ...Object.keys(bo)])].sort()) {
    out.push(...jsonDifferences(ao[key], bo[key], `${path}/${key.replace(/~/g, "~0").replace(/\//g, "~1")}`));
  }
  return out;
}

/**
 * Replay each recording through `fire` (one at a time, in order) and list every answer that differs
 * from the recorded one: the native JSON field by field, and the exit code.
 *
 * @example
 * ```ts
 * const report = await replay(readRecordings("rec/").recordings, (p, e, input) => runtime.fireProfile(p, e, { input }));
 * for (const d of report.differences) console.log(d.file, d.paths.join(", "));
 * ```
 */
export async function replay(recordings: readonly Recording[], fire: Fire): Promise<ReplayReport> {
  const report: ReplayReport = { replayed: 0, same: 0, skipped: [], differences: [] };
  for (const r of recordings) {
    if (r.answer === null) {
      report.skipped.push({ file: r.file, why: "the recorded run has no answer (the adapter failed)" });
      continue;
    }
    let replayed: ReplayAnswer;
    try {
      replayed = await fire(r.profile, r.event, r.input);
    } catch (err) {
      report.skipped.push({ file: r.file, why: `the port failed: ${(err as Error).message}` });
      continue;
    }
    report.replayed++;
    const paths = jsonDifferences(r.answer.native, replayed.native).map((p) => `native${p}`);
    if (r.answer.exit_code !== replayed.exit_code) paths.push("exit_code");
    if (paths.length === 0) report.same++;
    else report.differences.push({ file: r.file, event: r.event, paths, recorded: r.answer, replayed: { native: replayed.native, exit_code: replayed.exit_code } });
  }
  return report;
}
