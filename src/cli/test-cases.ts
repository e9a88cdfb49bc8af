/**
 * `tests/*.yaml` of a policy directory (DESIGN §3.1): the cases `vcp-hooks test` runs, and how a
 * ChainResult is checked against a case's `expect`.
 *
 * ```yaml
 * defaults:                       # optional: used by every case that leaves the field out
 *   type: pre_inject
 *   input: { constitution: {...} }
 * cases:
 *   - name: redacts an email
 *     type: pre_inject            # one of the six hook types
 *     input: { context: {...}, constitution: {...}, event: {...}, session: { id: s1 } }
 *     expect:
 *       status: completed         # completed | aborted
 *       aborted_by: null          # hook name or null
 *       reason: "exact text"      # or { matches: "regex" }, or null
 *       hooks:                    # per hook (by name): status, outcome, reason, annotations (subset)
 *         strip_pii_before_inject: { status: modify, outcome: ok }
 *       context: {...}            # subset of the final context   (context_equals: exact)
 *       constitution: {...}       # subset of the final constitution (constitution_equals: exact)
 *       annotations: {...}        # subset of all hooks' annotations merged in chain order
 * ```
 */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { parseDocument } from "yaml";
import { z } from "zod";
import { OUTCOMES } from "../index.js";
import { HOOK_TYPES, VcpError, type ChainResult, type HookType, type ProfileFireResult } from "../index.js";
import { matchExact, matchSubset, show, type Mismatch } from "./json-match.js";

const Json = z.record(z.string(), z.unknown());
const Reason = z.union([z.string(), z.null(), z.object({ matches: z.string() }).strict()]);

const HookExpectSchema = z
  .object({
    status: z.enum(["continue", "abort", "modify"]).optional(),
    outcome: z
      .enum(OUTCOMES)
      .optional(),
    reason: Reason.optional(),
    annotations: Json.optional(),
    /** Event-profile policies: allow | block | modify | ask | observe. */
    verdict: z.enum(["allow", "block", "modify", "ask", "observe"]).optional(),
  })
  .strict();

const ExpectSchema = z
  .object({
    status: z.enum(["completed", "aborted"]).optional(),
    aborted_by: z.string().nullable().optional(),
    reason: Reason.optional(),
    cascade_failure: z.boolean().optional(),
    hooks: z.record(z.string(), HookExpectSchema).optional(),
    context: Json.optional(),
    context_equals: Json.optional(),
    constitution: Json.optional(),
    constitution_equals: Json.optional(),
    annotations: Json.optional(),
    // Event-profile policies (PROFILES §2): the merged native answer (exact), its exit code and stderr.
    native: Json.optional(),
    exit_code: z.union([z.literal(0), z.literal(1), z.literal(2)]).optional(),
    stderr: z.string().optional(),
  })
  .strict();

const HookTypeSchema = z.enum(HOOK_TYPES as unknown as [HookType, ...HookType[]], { error: `must be one of ${HOOK_TYPES.join(", ")}` });

const CaseSchema = z
  .object({
    name: z.string({ error: "must be a string" }).min(1, "must not be empty"),
    type: HookTypeSchema.optional(),
    /** Event-profile policies: the profile event (the input is the agent's native input JSON). */
    event: z.string().min(1).max(128).optional(),
    input: Json.optional(),
    expect: ExpectSchema,
  })
  .strict();

const FileSchema = z
  .object({
    defaults: z.object({ type: HookTypeSchema.optional(), event: z.string().min(1).max(128).optional(), input: Json.optional() }).strict().optional(),
    cases: z.array(CaseSchema, { error: "must be a list of cases" }).min(1, "must hold at least one case"),
  })
  .strict();

export type CaseExpect = z.infer<typeof ExpectSchema>;

export interface TestCase {
  file: string;
  index: number;
  name: string;
  /** The hook type, or for an event-profile policy the profile event. */
  type: HookType | string;
  /** True when the case names an `event` (an event-profile policy's case). */
  native: boolean;
  /** Raw input; `prepareChainInput` checks it when the case runs. */
  input: Record<string, unknown>;
  expect: CaseExpect;
}

/** The cases of `<dir>/tests/*.yaml`, in file-name order; errors name the file and the path. */
export async function loadTestCases(dir: string): Promise<TestCase[]> {
  const testsDir = join(dir, "tests");
  const files = (await readdir(testsDir).catch(() => [] as string[])).filter((f) => /\.ya?ml$/.test(f)).sort();
  const cases: TestCase[] = [];
  for (const name of files) {
    const file = join(testsDir, name);
    const doc = parseDocument(await readFile(file, "utf8"), { prettyErrors: true });
    if (doc.errors.length > 0) {
      const e = doc.errors[0]!;
      const pos = e.linePos?.[0];
      throw new VcpError("INVALID_INPUT", `${file}: YAML syntax error at line ${pos?.line ?? "?"}: ${e.message.split("\n")[0]}`, { file });
    }
    const parsed = FileSchema.safeParse(doc.toJS());
    if (!parsed.success) {
      const problems = parsed.error.issues.map((i) => `${formatPath(i.path)}: ${i.code === "unrecognized_keys" ? `unknown field(s) ${i.keys.join(", ")}` : i.message}`);
      throw new VcpError("INVALID_INPUT", `${file}: ${problems.join("; ")}`, { file, problems });
    }
    const { defaults, cases: fileCases } = parsed.data;
    fileCases.forEach((c, index) => {
      const event = c.event ?? (c.type === undefined ? defaults?.event : undefined);
      const type = event ?? c.type ?? defaults?.type;
      if (type === undefined) throw new VcpError("INVALID_INPUT", `${file}: cases[${index}].type: missing (and no defaults.type; an event-profile policy's case names an event)`, { file });
      cases.push({ file, index, name: c.name, type, native: event !== undefined, input: { ...defaults?.input, ...c.input }, expect: c.expect });
    });
  }
  return cases;
}

function formatPath(path: readonly PropertyKey[]): string {
  return path.map((k, i) => (typeof k === "number" ? `[${k}]` : `${i === 0 ? "" : "."}${String(k)}`)).join("") || "(root)";
}

/** Every way `result` differs from `expect`; empty when the case passes. */
export function checkResult(expect: CaseExpect, result: ChainResult): Mismatch[] {
  const out: Mismatch[] = [];
  if (expect.status !== undefined && expect.status !== result.status) out.push({ path: "status", expected: expect.status, actual: result.status });
  if (expect.aborted_by !== undefined && expect.aborted_by !== result.aborted_by) {
    out.push({ path: "aborted_by", expected: show(expect.aborted_by), actual: show(result.aborted_by) });
  }
  if (expect.reason !== undefined) checkReason(expect.reason, result.reason, "reason", out);
  if (expect.cascade_failure !== undefined && expect.cascade_failure !== result.cascade_failure) {
    out.push({ path: "cascade_failure", expected: String(expect.cascade_failure), actual: String(result.cascade_failure) });
  }
  for (const [hook, want] of Object.entries(expect.hooks ?? {})) {
    const got = result.hook_results.find((h) => h.hook === hook);
    const path = `hooks.${hook}`;
    if (got === undefined) {
      out.push({ path, expected: "the hook in the chain", actual: `not in the chain (ran: ${result.hook_results.map((h) => h.hook).join(", ") || "none"})` });
      continue;
    }
    if (want.status !== undefined && want.status !== got.status) out.push({ path: `${path}.status`, expected: want.status, actual: got.status });
    if (want.outcome !== undefined && want.outcome !== got.outcome) {
      out.push({ path: `${path}.outcome`, expected: want.outcome, actual: got.outcome + (got.error ? ` (${got.error})` : "") });
    }
    if (want.reason !== undefined) checkReason(want.reason, got.reason ?? null, `${path}.reason`, out);
    if (want.annotations !== undefined) out.push(...matchSubset(want.annotations, got.annotations ?? {}, `${path}.annotations`));
  }
  if (expect.context !== undefined) out.push(...matchSubset(expect.context, result.context, "context"));
  if (expect.context_equals !== undefined) out.push(...matchExact(expect.context_equals, result.context, "context"));
  if (expect.constitution !== undefined) out.push(...matchSubset(expect.constitution, result.constitution, "constitution"));
  if (expect.constitution_equals !== undefined) out.push(...matchExact(expect.constitution_equals, result.constitution, "constitution"));
  if (expect.annotations !== undefined) {
    const merged = Object.assign({}, ...result.hook_results.map((h) => h.annotations ?? {})) as Record<string, unknown>;
    out.push(...matchSubset(expect.annotations, merged, "annotations"));
  }
  return out;
}

/**
 * Every way an event-profile answer differs from `expect`: the native answer (exact), exit code,
 * stderr, chain status and blocker, and per hook outcome, verdict and reason.
 */
export function checkProfileResult(expect: CaseExpect, out: ProfileFireResult): Mismatch[] {
  const result = out.result;
  const mismatches: Mismatch[] = [];
  if (expect.native !== undefined) mismatches.push(...matchExact(expect.native, out.native, "native"));
  if (expect.exit_code !== undefined && expect.exit_code !== out.exit_code) mismatches.push({ path: "exit_code", expected: String(expect.exit_code), actual: String(out.exit_code) });
  if (expect.stderr !== undefined && expect.stderr !== out.stderr) mismatches.push({ path: "stderr", expected: show(expect.stderr), actual: show(out.stderr ?? null) });
  if (expect.status !== undefined && expect.status !== result.status) mismatches.push({ path: "status", expected: expect.status, actual: result.status });
  if (expect.aborted_by !== undefined && expect.aborted_by !== result.aborted_by) mismatches.push({ path: "aborted_by", expected: show(expect.aborted_by), actual: show(result.aborted_by) });
  for (const [hook, want] of Object.entries(expect.hooks ?? {})) {
    const got = result.hook_results.find((h) => h.hook === hook);
    const path = `hooks.${hook}`;
    if (got === undefined) {
      mismatches.push({ path, expected: "the hook in the chain", actual: `not in the chain (hooks: ${result.hook_results.map((h) => h.hook).join(", ") || "none"})` });
      continue;
    }
    if (want.outcome !== undefined && want.outcome !== got.outcome) mismatches.push({ path: `${path}.outcome`, expected: want.outcome, actual: got.outcome + (got.error ? ` (${got.error})` : "") });
    if (want.verdict !== undefined && want.verdict !== got.verdict) mismatches.push({ path: `${path}.verdict`, expected: want.verdict, actual: String(got.verdict ?? "none") });
    if (want.status !== undefined && want.status !== got.status) mismatches.push({ path: `${path}.status`, expected: want.status, actual: got.status });
    if (want.reason !== undefined) checkReason(want.reason, got.reason ?? null, `${path}.reason`, mismatches);
  }
  return mismatches;
}

function checkReason(want: string | null | { matches: string }, got: string | null, path: string, out: Mismatch[]): void {
  if (want === null || typeof want === "string") {
    if (want !== got) out.push({ path, expected: show(want), actual: show(got) });
    return;
  }
  const re = new RegExp(want.matches);
  if (got === null || !re.test(got)) out.push({ path, expected: `a reason matching ${String(re)}`, actual: show(got) });
}
