/**
 * `vcp-hooks fire <type> --bundle <file.vcpb|dir…> --input <json|->`: one chain, locally, over the
 * given bundles (directories are built on the fly), printed as a trace: the order, predicate skips,
 * statuses and outcomes, durations, annotations and the keys the chain changed.
 */
import { readFile } from "node:fs/promises";
import { HOOK_TYPES, type ChainResult, type HookType, type ProfileFireResult } from "../index.js";
import { getProfile, isProfileEvent } from "../profile-kit.js";
import { loadKeyring, type Keyring } from "../tooling.js";
import { CheckFailed, escapeControl, EXIT_OK, parseCommand, printJson, progress, requireOption, stringOption, UsageError, type Command } from "./common.js";
import { changedKeys, show, type Change } from "./json-match.js";
import { LOCAL_TRUST_NOTE, loadLocalBundle, loadProfileModules, prepareChainInput, startLocalRuntime, type GuestLog } from "./local.js";

const USAGE = `usage: vcp-hooks fire <type> --bundle <file.vcpb|dir> [--bundle …] --input <file.json|-|'{…}'> [--keyring <file>] [--json]
       vcp-hooks fire --profile <name> <Event> --bundle … --input <native.json|-|'{…}'> [--profile-module <file>] [--json]

Run one <type> chain (${HOOK_TYPES.join(", ")}) locally over the given bundles and print the
trace: hook order, predicate skips, status and outcome per hook, durations, annotations, guest logs,
and the context/constitution keys that changed (before → after).

The input is JSON: { "context": {…}, "constitution": {…}, "event": {…}, "session"?: {"id": …} }
("-" reads it from stdin).

Bundles: a policy directory is built first; a .vcpb has its digest and manifest verified, and its
signatures too when --keyring is given (without one they are not checked). Nothing is installed
anywhere: ${LOCAL_TRUST_NOTE}.

With --profile (an event profile: gemini-cli, llxprt, claude-code, …) the input is the agent's
native input JSON, exactly what its command hook reads on stdin, and the output is the trace and the
merged native answer with its exit code.

Options:
  --profile <name>  run <Event> of this event profile instead of a VCP hook type
  --profile-module <file>  load an event profile module (default export) first (repeatable)
  --bundle <path>   a .vcpb file or a policy directory (repeatable)
  --input <input>   chain input: a JSON file, - for stdin, or inline JSON ('{"context":…}')
  --keyring <file>  verify .vcpb signatures against this keyring
  --json            print { result, changes, skips } as JSON
Exit: 0 the chain ran (completed or aborted), 1 a bundle or the input was refused, 2 usage error.`;

export const fireCommand: Command = {
  name: "fire",
  summary: "run one chain locally over bundles or policy dirs and print the trace",
  usage: USAGE,
  async run(args, io) {
    const { values, positionals, help } = parseCommand(
      "fire",
      args,
      {
        bundle: { type: "string", multiple: true, short: "b" },
        input: { type: "string", short: "i" },
        keyring: { type: "string" },
        profile: { type: "string" },
        "profile-module": { type: "string", multiple: true },
      },
      { min: 1, max: 1, names: "<type>" },
    );
    if (help) {
      io.out(USAGE);
      return EXIT_OK;
    }
    const profile = stringOption("fire", values, "profile");
    if (profile !== undefined) return fireProfileEvent(profile, positionals[0]!, values, io);
    const type = positionals[0]!;
    if (!(HOOK_TYPES as readonly string[]).includes(type)) throw new UsageError(`fire: unknown hook type '${type}' (expected one of ${HOOK_TYPES.join(", ")})`);
    const bundles = (values["bundle"] as string[] | undefined) ?? [];
    if (bundles.length === 0) throw new UsageError("fire: option '--bundle' is required");
    const inputPath = requireOption("fire", values, "input");
    const keyringPath = stringOption("fire", values, "keyring");

    const input = prepareChainInput(await readInput(inputPath), isInlineJson(inputPath) ? "--input" : inputPath === "-" ? "stdin" : inputPath);
    const keyring: Keyring | undefined = keyringPath === undefined ? undefined : await loadKeyring(keyringPath);
    const loaded = [];
    for (const path of bundles) loaded.push(await loadLocalBundle(path, io, keyring));
    for (const b of loaded) {
      if (b.source === "file") io.err(b.signedBy !== null ? `${b.path}: signature verified (key ${b.signedBy})` : `${b.path}: signatures not checked (no --keyring)`);
    }

    const logs: GuestLog[] = [];
    const skips = new Map<string, unknown>();
    const runtime = await startLocalRuntime(io, (line) => {
      logs.push(line);
      if (!io.json) io.out(`  [guest ${line.bundle}/${line.hook}] ${line.level}: ${escapeControl(line.message)}${line.fields ? ` ${escapeControl(JSON.stringify(line.fields))}` : ""}`);
    });
    try {
      runtime.on("hook.skipped", (e) => {
        if (e.reason === "predicate_false") skips.set(e.hook, e.predicate);
      });
      for (const b of loaded) {
        progress(io, `installing ${b.artifact.manifest.bundle} ${b.artifact.manifest.version}`);
        await runtime.bundles.install(b.artifact);
      }
      const chain = await runtime.hooks.chain(type as HookType, typeof input.session === "object" ? String(input.session["id"]) : input.session);
      const priorities = new Map(chain.map((h) => [h.name, h.priority]));
      if (chain.length === 0) io.err(`note: no hook of type ${type} in the given bundles; the chain is empty`);
      const session = input.session ?? { id: "local" };
      const result = await runtime.fire(type as HookType, {
        session: session as { id: string },
        context: input.context,
        constitution: input.constitution as never,
        event: input.event as never,
      });
      const changes = [...changedKeys(input.context, result.context, "context"), ...changedKeys(input.constitution, result.constitution, "constitution")];
      if (io.json) {
        printJson(io, { note: LOCAL_TRUST_NOTE, result, changes, skips: Object.fromEntries(skips), logs });
      } else {
        io.out(formatTrace(result, { priorities, skips, changes }));
      }
    } finally {
      await runtime.close();
    }
    return EXIT_OK;
  },
};

/** `fire --profile <name> <Event>`: one event of an agent's hook system, its native answer and exit code. */
async function fireProfileEvent(profile: string, event: string, values: Record<string, unknown>, io: Parameters<Command["run"]>[1]): Promise<number> {
  const bundles = (values["bundle"] as string[] | undefined) ?? [];
  if (bundles.length === 0) throw new UsageError("fire: option '--bundle' is required");
  const inputPath = requireOption("fire", values, "input");
  const keyringPath = stringOption("fire", values, "keyring");
  const modules = await loadProfileModules((values["profile-module"] as string[] | undefined) ?? []);
  // Unknown profile or event: refused before anything is built or started.
  const known = getProfile(profile);
  if (!isProfileEvent(known, event)) throw new UsageError(`fire: profile ${known.id} has no event '${event}' (its events: ${Object.keys(known.events).join(", ")})`);
  const input = await readInput(inputPath);
  const keyring: Keyring | undefined = keyringPath === undefined ? undefined : await loadKeyring(keyringPath);
  const loaded = [];
  for (const path of bundles) loaded.push(await loadLocalBundle(path, io, keyring));
  const logs: GuestLog[] = [];
  const runtime = await startLocalRuntime(io, (line) => {
    logs.push(line);
    if (!io.json) io.out(`  [guest ${line.bundle}/${line.hook}] ${line.level}: ${escapeControl(line.message)}${line.fields ? ` ${escapeControl(JSON.stringify(line.fields))}` : ""}`);
  }, modules);
  try {
    for (const b of loaded) {
      progress(io, `installing ${b.artifact.manifest.bundle} ${b.artifact.manifest.version}`);
      await runtime.bundles.install(b.artifact);
    }
    const plan = runtime.profiles.plan(profile, event);
    if (plan.length === 0) io.err(`note: no ${known.id} hook for ${event} in the given bundles; the answer is the neutral one`);
    const out = await runtime.fireProfile(profile, event, { input });
    if (io.json) printJson(io, { note: LOCAL_TRUST_NOTE, ...out, logs });
    else io.out(formatProfileTrace(out, new Map(plan.map((h) => [h.name, h.priority]))));
  } finally {
    await runtime.close();
  }
  return EXIT_OK;
}

/** The human trace of one profile chain and its native answer. Guest-controlled text is escaped. */
export function formatProfileTrace(out: ProfileFireResult, priorities: Map<string, number>): string {
  const r = out.result;
  const lines: string[] = [];
  lines.push(`${r.profile} ${escapeControl(r.event)} chain ${r.chain_id.slice(0, 8)}: exit ${out.exit_code} (${r.mode}${r.aborted_by !== null ? `, blocked by ${escapeControl(r.aborted_by)}` : ""})`);
  lines.push(`  ${r.hook_results.length} hook(s), ${r.duration_ms.toFixed(2)} ms`);
  const nameWidth = Math.max(4, ...r.hook_results.map((h) => h.hook.length));
  const bundleWidth = Math.max(6, ...r.hook_results.map((h) => h.bundle.length));
  lines.push(`  ${"#".padStart(2)}  ${"hook".padEnd(nameWidth)}  ${"bundle".padEnd(bundleWidth)}  prio  ${"verdict".padEnd(8)}  ${"outcome".padEnd(18)}  ms`);
  r.hook_results.forEach((h, i) => {
    const prio = String(priorities.get(h.hook) ?? "").padStart(4);
    lines.push(`  ${String(i + 1).padStart(2)}  ${h.hook.padEnd(nameWidth)}  ${h.bundle.padEnd(bundleWidth)}  ${prio}  ${(h.verdict ?? "-").padEnd(8)}  ${h.outcome.padEnd(18)}  ${h.duration_ms.toFixed(3)}`);
    const pad = " ".repeat(8);
    if (h.reason) lines.push(`${pad}reason: ${escapeControl(h.reason)}`);
    if (h.error) lines.push(`${pad}error: ${escapeControl(h.error)}`);
    if (h.stripped && h.stripped.length > 0) lines.push(`${pad}stripped (session trust): ${h.stripped.map(escapeControl).join(", ")}`);
  });
  lines.push(`  native answer (exit ${out.exit_code}):`);
  for (const line of JSON.stringify(out.native, null, 2).split("\n")) lines.push(`    ${escapeControl(line)}`);
  if (out.stderr !== undefined) lines.push(`  stderr: ${escapeControl(out.stderr)}`);
  return lines.join("\n");
}

/** `--input` names inline JSON when it starts with `{` (a file name never does in practice). */
function isInlineJson(value: string): boolean {
  return value.trimStart().startsWith("{");
}

async function readInput(path: string): Promise<unknown> {
  let text: string;
  try {
    text = isInlineJson(path) ? path : path === "-" ? await readStdin() : await readFile(path, "utf8");
  } catch (err) {
    throw new CheckFailed(`cannot read --input ${path}: ${(err as Error).message}`, "NOT_FOUND");
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CheckFailed(`--input ${isInlineJson(path) ? "(inline)" : path === "-" ? "stdin" : path} is not JSON: ${(err as Error).message}`, "INVALID_INPUT");
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * The human trace of one chain. Exported for unit tests. Every string a guest or the input controls
 * (reasons, errors, annotations, values) goes through `escapeControl` or `show` (JSON, then escaped).
 */
export function formatTrace(result: ChainResult, extra: { priorities: Map<string, number>; skips: Map<string, unknown>; changes: Change[] }): string {
  const lines: string[] = [];
  const head = `${result.type} chain ${result.chain_id.slice(0, 8)}: ${result.status.toUpperCase()}`;
  lines.push(result.status === "aborted" ? `${head} by ${escapeControl(result.aborted_by ?? "?")}: ${escapeControl(result.reason ?? "")}` : head);
  lines.push(`  ${result.hook_results.length} hook(s), ${result.duration_ms.toFixed(2)} ms${result.cascade_failure ? ", CASCADE FAILURE (spec §7.3)" : ""}`);
  const nameWidth = Math.max(4, ...result.hook_results.map((h) => h.hook.length));
  const bundleWidth = Math.max(6, ...result.hook_results.map((h) => h.bundle.length));
  lines.push(`  ${"#".padStart(2)}  ${"hook".padEnd(nameWidth)}  ${"bundle".padEnd(bundleWidth)}  prio  ${"status".padEnd(8)}  ${"outcome".padEnd(18)}  ms`);
  result.hook_results.forEach((h, i) => {
    const prio = String(extra.priorities.get(h.hook) ?? "").padStart(4);
    lines.push(`  ${String(i + 1).padStart(2)}  ${h.hook.padEnd(nameWidth)}  ${h.bundle.padEnd(bundleWidth)}  ${prio}  ${h.status.padEnd(8)}  ${h.outcome.padEnd(18)}  ${h.duration_ms.toFixed(3)}`);
    const pad = " ".repeat(8);
    if (h.outcome === "skipped_predicate") lines.push(`${pad}skipped: condition false: ${describePredicate(extra.skips.get(h.hook))}`);
    if (h.outcome === "skipped_disabled") lines.push(`${pad}skipped: hook disabled`);
    if (h.reason) lines.push(`${pad}reason: ${escapeControl(h.reason)}`);
    if (h.error) lines.push(`${pad}error: ${escapeControl(h.error)}`);
    const modified = [h.modified_context ? "context" : "", h.modified_constitution ? "constitution" : ""].filter(Boolean);
    if (modified.length > 0) lines.push(`${pad}modified: ${modified.join(", ")}`);
    if (h.annotations && Object.keys(h.annotations).length > 0) lines.push(`${pad}annotations: ${show(h.annotations, 400)}`);
  });
  if (extra.changes.length === 0) lines.push("  changes: none (context and constitution as given)");
  else {
    lines.push(`  changes (input → final):`);
    for (const c of extra.changes) {
      if (c.kind === "added") lines.push(`    + ${c.path}: ${show(c.after)}`);
      else if (c.kind === "removed") lines.push(`    - ${c.path}: ${show(c.before)}`);
      else lines.push(`    ~ ${c.path}: ${show(c.before)} → ${show(c.after)}`);
    }
  }
  return lines.join("\n");
}

/** `field operator value`, and/or trees in brackets. */
export function describePredicate(p: unknown): string {
  if (typeof p !== "object" || p === null) return "(predicate not reported)";
  const pred = p as { field?: string; operator?: string; value?: unknown; combine?: string; children?: unknown[] };
  if (pred.combine !== undefined && Array.isArray(pred.children)) return `(${pred.children.map(describePredicate).join(` ${pred.combine} `)})`;
  return `${escapeControl(String(pred.field ?? "?"))} ${escapeControl(String(pred.operator ?? "?"))} ${show(pred.value)}`;
}
