/**
 * `vcp-hooks test <dir…>`: run each policy's `tests/*.yaml` cases through the real sandbox
 * (isolated-vm in the sandbox process, exactly as installed bundles run) and report pass/fail with a
 * readable diff, plus the hooks that no case exercised.
 *
 * One sandbox serves all directories; each bundle is installed alone, tested, and removed, so a
 * bundle's chains never include another directory's hooks.
 */
import { watch } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import { SKIPPED_OUTCOME_LIST, type ChainResult, type HookType, type Runtime } from "../index.js";
import { CheckFailed, describeError, escapeControl, EXIT_FAILED, EXIT_OK, parseCommand, printJson, stringOption, UsageError, type Command, type Io } from "./common.js";
import type { Mismatch } from "./json-match.js";
import { LOCAL_TRUST_NOTE, loadLocalBundle, loadProfileModules, prepareChainInput, startLocalRuntime, type GuestLog } from "./local.js";
import { checkProfileResult, checkResult, loadTestCases } from "./test-cases.js";
import { readRecordings, replay, type Difference, type ReplayAnswer } from "../tooling/replay.js";

const USAGE = `usage: vcp-hooks test <dir…> [--filter <regex>] [--watch | --json]
       vcp-hooks test --replay <dir> --bundle <port.vcpb|dir> [--bundle …] [--json]

Run the cases in <dir>/tests/*.yaml of each policy directory through the real sandbox.
A directory without policy.yaml whose subdirectories have one (e.g. policies/) tests each of them;
plain files among the arguments (e.g. from a shell glob) are skipped.

Each case names a hook type, an input (context, constitution, event, session?) and what to expect:
status (completed|aborted), aborted_by, reason (exact, or { matches: regex }), per hook status,
outcome, reason and annotations (subset), context/constitution (subset, or *_equals for exact),
annotations (subset of all hooks' annotations). Matchers: { $matches: regex }, { $absent: true },
{ $type: string|number|boolean|object|array|null }; { $now_ms: offset } in an input is the current
time plus offset. See docs/policies.md, "Test cases".

An event-profile policy (policy.yaml \`profile: gemini-cli\`, …) has cases that name an \`event\`
and give the agent's native input JSON as \`input\`; they expect \`native\` (the merged native
answer, exact), \`exit_code\`, \`stderr\`, status/aborted_by, and per hook outcome and verdict.

Bundles are built from source and installed unsigned (${LOCAL_TRUST_NOTE}).

Shadow replay (--replay): the events that 'vcp-hooks hook --record <dir>' saved are run again through
the given bundles (a JS port of your old hook scripts) and every answer that differs from the recorded
one is listed, field by field (native JSON paths, exit_code). Recordings without an answer (the adapter
failed) are skipped and said so.

Options:
  --filter <regex>  run only cases whose name matches
  --profile-module <file>  load an event profile module (default export) first (repeatable)
  --watch, -w       keep running: re-run a policy's cases whenever a file under it changes (Ctrl-C stops;
                    the exit code is the last run's)
  --replay <dir>    shadow replay of the recordings in <dir> (needs --bundle)
  --bundle <path>   with --replay: a .vcpb file or a policy directory (repeatable)
  --json            print the report as JSON
Exit: 0 all cases pass (replay: every replayed answer is the recorded one), 1 a case failed, a replayed
answer differs, nothing could be replayed, or a policy did not build/load, 2 usage error.`;

export interface CaseReport {
  file: string;
  name: string;
  type: string;
  passed: boolean;
  duration_ms: number;
  mismatches: Mismatch[];
  error?: string;
  result?: Pick<ChainResult, "status" | "reason" | "aborted_by"> & { hooks: Array<{ hook: string; status: string; outcome: string; annotations?: unknown; error?: string }> };
  logs: GuestLog[];
}

export interface PolicyReport {
  dir: string;
  bundle?: string;
  version?: string;
  passed: boolean;
  error?: string;
  cases: CaseReport[];
  uncovered_hooks: string[];
}

export const testCommand: Command = {
  name: "test",
  summary: "run a policy's tests/*.yaml cases through the real sandbox",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals, help } = parseCommand(
      "test",
      args,
      {
        filter: { type: "string" },
        watch: { type: "boolean", short: "w" },
        "profile-module": { type: "string", multiple: true },
        replay: { type: "string" },
        bundle: { type: "string", multiple: true, short: "b" },
      },
      { min: 0, max: Infinity, names: "<dir…>" },
    );
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const replayDir = stringOption("test", values, "replay");
    const bundles = (values["bundle"] as string[] | undefined) ?? [];
    if (replayDir !== undefined) {
      if (positionals.length > 0) throw new UsageError(`test: --replay takes no policy directories (got '${positionals[0]}'); give the port with --bundle`);
      if (bundles.length === 0) throw new UsageError("test: --replay needs --bundle <port.vcpb|dir> (the port to compare with the recorded answers)");
      if (values["watch"] === true || values["filter"] !== undefined) throw new UsageError("test: --replay does not combine with --watch or --filter");
      const modules = await loadProfileModules((values["profile-module"] as string[] | undefined) ?? []);
      return runReplay(replayDir, bundles, io, modules);
    }
    if (bundles.length > 0) throw new UsageError("test: --bundle is for --replay; policy directories are given as arguments");
    if (positionals.length === 0) throw new UsageError("test: missing <dir…>");
    const filterText = stringOption("test", values, "filter");
    let filter: RegExp | undefined;
    try {
      filter = filterText === undefined ? undefined : new RegExp(filterText);
    } catch (err) {
      throw new UsageError(`test: --filter is not a regular expression: ${(err as Error).message}`);
    }
    const watching = values["watch"] === true;
    if (watching && io.json) throw new UsageError("test: --watch reports for a person and does not combine with --json");
    const dirs = await policyDirs(positionals, io);
    if (dirs.length === 0) throw new UsageError("test: no policy directory among the arguments");

    const logs: GuestLog[] = [];
    const modules = await loadProfileModules((values["profile-module"] as string[] | undefined) ?? []);
    const runtime = await startLocalRuntime(io, (line) => logs.push(line), modules);
    const runDirs = async (which: readonly string[]): Promise<number> => {
      const reports: PolicyReport[] = [];
      for (const dir of which) reports.push(await testPolicy(runtime, dir, io, filter, logs));
      const failed = reports.filter((r) => !r.passed).length;
      const cases = reports.flatMap((r) => r.cases);
      const summary = { policies: reports.length, cases: cases.length, passed: cases.filter((c) => c.passed).length, failed: cases.filter((c) => !c.passed).length, policies_failed: failed };
      if (io.json) printJson(io, { ok: failed === 0, note: LOCAL_TRUST_NOTE, summary, policies: reports });
      else {
        io.out(`\n${summary.passed}/${summary.cases} case(s) passed in ${summary.policies} polic${summary.policies === 1 ? "y" : "ies"}` + (failed > 0 ? `; ${failed} polic${failed === 1 ? "y" : "ies"} failed` : ""));
      }
      return failed === 0 ? EXIT_OK : EXIT_FAILED;
    };
    if (!watching) {
      try {
        return await runDirs(dirs);
      } finally {
        await runtime.close();
      }
    }
    return watchAndRerun(dirs, runDirs, io, () => runtime.close());
  },
};

/** Files whose change does not re-run a policy's cases (build output, dependencies, editor droppings). */
const IGNORED_CHANGE = /(^|[\\/])(dist|node_modules|\.git)([\\/]|$)|(~|\.swp|\.tmp)$/;

/**
 * `--watch`: run every policy once, then re-run a policy whenever a file under it changes (debounced;
 * one run at a time, on the same sandbox) until SIGINT/SIGTERM. Resolves with the last run's exit code.
 */
async function watchAndRerun(dirs: readonly string[], runDirs: (which: readonly string[]) => Promise<number>, io: Io, close: () => Promise<void>): Promise<number> {
  let code = await runDirs(dirs).catch((err: unknown) => {
    io.err(`vcp-hooks test: ${describeError(err)}`);
    return EXIT_FAILED;
  });
  io.out(`watching ${dirs.length} polic${dirs.length === 1 ? "y" : "ies"} for changes (Ctrl-C to stop)`);
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const flush = (): void => {
    const batch = dirs.filter((d) => pending.has(d));
    pending.clear();
    running = running.then(async () => {
      io.out(`\nchanged: ${batch.map((d) => escapeControl(d)).join(", ")} — running again`);
      code = await runDirs(batch).catch((err: unknown) => {
        io.err(`vcp-hooks test: ${describeError(err)}`);
        return EXIT_FAILED;
      });
      io.out(`watching for changes (Ctrl-C to stop)`);
    });
  };
  const watchers = dirs.map((dir) =>
    watch(dir, { recursive: true }, (_event, file) => {
      if (file !== null && IGNORED_CHANGE.test(String(file))) return;
      pending.add(dir);
      clearTimeout(timer);
      timer = setTimeout(flush, 200);
    }),
  );
  return new Promise<number>((resolve) => {
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      clearTimeout(timer);
      for (const w of watchers) w.close();
      void running.then(close).then(() => resolve(code));
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

/** Directories to test: each argument that has policy.yaml, or its subdirectories that do. */
async function policyDirs(args: string[], io: Io): Promise<string[]> {
  const dirs: string[] = [];
  for (const arg of args) {
    const info = await stat(arg).catch(() => undefined);
    if (info === undefined) throw new CheckFailed(`${arg}: no such file or directory`, "NOT_FOUND");
    if (!info.isDirectory()) {
      io.err(`skipping ${arg}: not a directory`);
      continue;
    }
    if (await exists(join(arg, "policy.yaml"))) {
      dirs.push(arg);
      continue;
    }
    const children = (await readdir(arg, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => join(arg, e.name)).sort();
    const policies: string[] = [];
    for (const child of children) if (await exists(join(child, "policy.yaml"))) policies.push(child);
    // A directory with neither: keep it, so the build reports the missing policy.yaml by name.
    dirs.push(...(policies.length > 0 ? policies : [arg]));
  }
  return dirs;
}

async function exists(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined)) !== undefined;
}

async function testPolicy(runtime: Runtime, dir: string, io: Io, filter: RegExp | undefined, logs: GuestLog[]): Promise<PolicyReport> {
  const report: PolicyReport = { dir, passed: false, cases: [], uncovered_hooks: [] };
  let installed: string | undefined;
  try {
    const cases = (await loadTestCases(dir)).filter((c) => filter === undefined || filter.test(c.name));
    const { artifact } = await loadLocalBundle(dir, io);
    const manifest = artifact.manifest;
    report.bundle = manifest.bundle;
    report.version = manifest.version;
    if (!io.json) io.out(`${manifest.bundle} ${manifest.version} (${escapeControl(dir)})`);
    if (cases.length === 0) {
      throw new CheckFailed(filter === undefined ? `${dir}: no test cases in tests/*.yaml` : `${dir}: no case matches --filter ${String(filter)}`, "NO_TESTS");
    }
    await runtime.bundles.install(artifact);
    installed = manifest.bundle;
    const exercised = new Set<string>();
    for (const c of cases) {
      logs.length = 0;
      const started = performance.now();
      const entry: CaseReport = { file: c.file, name: c.name, type: c.type, passed: false, duration_ms: 0, mismatches: [], logs: [] };
      try {
        if (manifest.profile !== undefined && !/^vcp(@|$)/.test(manifest.profile)) {
          // An event-profile policy: the input is the agent's native JSON; the answer is checked natively.
          if (!c.native) throw new CheckFailed(`${c.file}: case '${c.name}': a ${manifest.profile} policy's case names an event, not a type`, "INVALID_INPUT");
          const out = await runtime.fireProfile(manifest.profile, c.type, { input: c.input });
          for (const h of out.result.hook_results) if (!SKIPPED_OUTCOME_LIST.includes(h.outcome)) exercised.add(h.hook);
          entry.mismatches = checkProfileResult(c.expect, out);
          entry.passed = entry.mismatches.length === 0;
          entry.result = {
            status: out.result.status,
            reason: `exit ${out.exit_code}: ${JSON.stringify(out.native)}`,
            aborted_by: out.result.aborted_by,
            hooks: out.result.hook_results.map((h) => ({ hook: h.hook, status: h.verdict ?? h.status, outcome: h.outcome, ...(h.error ? { error: h.error } : {}) })),
          };
          entry.duration_ms = Math.round((performance.now() - started) * 100) / 100;
          entry.logs = [...logs];
          report.cases.push(entry);
          if (!io.json) printCase(io, entry);
          continue;
        }
        const input = prepareChainInput(c.input, `${c.file}: case '${c.name}' input`);
        const result = await runtime.fire(c.type as HookType, {
          session: input.session === undefined ? { id: `test-${c.index}` } : (input.session as { id: string }),
          context: input.context,
          constitution: input.constitution as never,
          event: input.event as never,
        });
        for (const h of result.hook_results) if (!h.outcome.startsWith("skipped_")) exercised.add(h.hook);
        entry.mismatches = checkResult(c.expect, result);
        entry.passed = entry.mismatches.length === 0;
        entry.result = {
          status: result.status,
          reason: result.reason,
          aborted_by: result.aborted_by,
          hooks: result.hook_results.map((h) => ({ hook: h.hook, status: h.status, outcome: h.outcome, ...(h.annotations ? { annotations: h.annotations } : {}), ...(h.error ? { error: h.error } : {}) })),
        };
      } catch (err) {
        entry.error = describeError(err);
      }
      entry.duration_ms = Math.round((performance.now() - started) * 100) / 100;
      entry.logs = [...logs];
      report.cases.push(entry);
      if (!io.json) printCase(io, entry);
    }
    // Hooks that fire per session (scope: session) are not in the deployment chain and cannot be covered here.
    report.uncovered_hooks = manifest.hooks.filter((h) => (h.scope ?? "deployment") === "deployment" && !exercised.has(h.name)).map((h) => h.name);
    if (!io.json && report.uncovered_hooks.length > 0) io.out(`  ! not covered by any case (never ran): ${report.uncovered_hooks.join(", ")}`);
    report.passed = report.cases.every((c) => c.passed);
  } catch (err) {
    report.error = describeError(err);
    if (!io.json) io.out(`  ✗ ${escapeControl(dir)}: ${escapeControl(report.error)}`);
  } finally {
    if (installed !== undefined) await runtime.bundles.remove(installed).catch((err: unknown) => io.err(`warning: removing ${installed}: ${describeError(err)}`));
  }
  return report;
}

function printCase(io: Io, c: CaseReport): void {
  // Case names come from the policy's test files, errors, reasons and logs from guest code.
  const where = escapeControl(`${c.file.split("/").pop()}`);
  const name = escapeControl(c.name);
  if (c.passed) {
    io.out(`  ✓ ${name} [${c.type}] ${c.duration_ms} ms`);
    return;
  }
  io.out(`  ✗ ${name} [${c.type}] (${where})`);
  if (c.error !== undefined) io.out(`      error: ${escapeControl(c.error)}`);
  for (const m of c.mismatches) {
    io.out(`      ${escapeControl(m.path)}`);
    io.out(`        - expected ${escapeControl(m.expected)}`);
    io.out(`        + actual   ${escapeControl(m.actual)}`);
  }
  if (c.result !== undefined && c.mismatches.length > 0) {
    io.out(
      `      chain: ${c.result.status}${c.result.reason ? ` (${escapeControl(c.result.reason)})` : ""}; hooks: ${c.result.hooks.map((h) => `${escapeControl(h.hook)}=${h.status}/${h.outcome}`).join(", ") || "none"}`,
    );
  }
  for (const l of c.logs) io.out(`      [guest ${escapeControl(l.hook)}] ${l.level}: ${escapeControl(l.message)}${l.fields ? ` ${escapeControl(JSON.stringify(l.fields))}` : ""}`);
}

// ── shadow replay (PROFILES §7) ───────────────────────────────────────────────────────────────────

/**
 * `test --replay DIR --bundle port.vcpb…`: run every recording of `dir` through the port (installed
 * unsigned on a local sandbox) and list each answer that differs from the recorded one.
 */
async function runReplay(dir: string, bundlePaths: readonly string[], io: Io, modules: readonly string[]): Promise<number> {
  const info = await stat(dir).catch(() => undefined);
  if (info === undefined || !info.isDirectory()) throw new CheckFailed(`--replay ${dir}: no such directory`, "NOT_FOUND");
  const { recordings, skipped } = readRecordings(dir);
  if (recordings.length === 0) {
    throw new CheckFailed(`--replay ${dir}: no recordings (write them with 'vcp-hooks hook <Event> --dialect … --record ${dir}')${skipped.length > 0 ? `; unreadable: ${skipped.map((s) => `${s.file} (${s.why})`).join(", ")}` : ""}`, "NOT_FOUND");
  }
  const loaded = [];
  for (const path of bundlePaths) loaded.push(await loadLocalBundle(path, io));
  const logs: GuestLog[] = [];
  const runtime = await startLocalRuntime(io, (line) => logs.push(line), modules);
  let report;
  try {
    for (const b of loaded) await runtime.bundles.install(b.artifact);
    report = await replay(recordings, (profile, event, input) => runtime.fireProfile(profile, event, { input }));
  } finally {
    await runtime.close();
  }
  report.skipped.unshift(...skipped);
  const ok = report.differences.length === 0 && report.replayed > 0;
  if (io.json) {
    printJson(io, { ok, note: LOCAL_TRUST_NOTE, dir, bundles: loaded.map((b) => ({ path: b.path, bundle: b.artifact.manifest.bundle, version: b.artifact.manifest.version })), ...report });
  } else {
    for (const d of report.differences) io.out(formatDifference(d));
    for (const s of report.skipped) io.out(`  - ${escapeControl(s.file)}: skipped: ${escapeControl(s.why)}`);
    io.out(
      `\n${report.replayed} recording(s) replayed: ${report.same} same, ${report.differences.length} different` +
        (report.skipped.length > 0 ? `, ${report.skipped.length} skipped` : "") +
        (report.replayed === 0 ? " (nothing could be replayed)" : ""),
    );
  }
  return ok ? EXIT_OK : EXIT_FAILED;
}

/** One difference: the file and event, then each path with the recorded and the replayed value. */
function formatDifference(d: Difference): string {
  const lines = [`  ✗ ${escapeControl(d.file)} [${escapeControl(d.event)}]`];
  for (const path of d.paths) {
    lines.push(`      ${escapeControl(path)}: recorded ${showAt(d.recorded, path)} → port ${showAt(d.replayed, path)}`);
  }
  return lines.join("\n");
}

/** The value at `native/a/b` or `exit_code` of an answer, as short escaped JSON ("(absent)" when missing). */
function showAt(answer: ReplayAnswer, path: string): string {
  let value: unknown = answer;
  const parts = path === "exit_code" ? ["exit_code"] : ["native", ...path.slice("native".length).split("/").filter((p) => p !== "").map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))];
  for (const part of parts) {
    if (typeof value !== "object" || value === null) return "(absent)";
    value = (value as Record<string, unknown>)[part];
  }
  if (value === undefined) return "(absent)";
  const text = JSON.stringify(value);
  return escapeControl(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}
