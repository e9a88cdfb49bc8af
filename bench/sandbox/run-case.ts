/**
 * One corpus case against the real runtime, with the background load running: the same checks as
 * test/adversarial/corpus.test.ts, but every failed check becomes a reason in the report instead of
 * an assertion, and the case is timed (regained control, recovery, background latency).
 *
 * SECURITY: corpus files are hostile. They are bundled by esbuild (parsed, never run) and handed to
 * the sandbox; nothing here imports or evaluates them.
 */
import { isDeepStrictEqual } from "node:util";
import type { ChainResult, HookExecution, ProfileFireResult, Runtime } from "../../src/index.js";
import { buildGuestFile } from "../lib/guest-build.js";
import { nowNs } from "../lib/stats.js";
import type { CorpusCase } from "./corpus.js";
import { attackBundle, attackBundleName, attackHookName, attackInput, checkWellBehaved, wellBehavedInput } from "./fixtures.js";
import type { BackgroundLoad } from "./load.js";
import { checkProfileAttack, companionBundleName, installCompanion, profileAttackInput } from "./profile-case.js";
import type { CaseObserved, CaseReport, CaseWindow, RecycleKind, ReportCategory, WindowStats } from "./report.js";
import { fireDeadlineMs, startStarvationMeter } from "./starvation.js";

export interface CaseEnv {
  runtime: Runtime;
  load: BackgroundLoad;
  baseline: WindowStats;
  probe: { url: string; hits: () => number };
  /** The background window of a case lasts at least this long from the attack's start. */
  minWindowMs: number;
}

/** Raised inside a case when a runtime call does not return within its deadline. */
export class WedgedError extends Error {}

export function withDeadline<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new WedgedError(`${what} did not return within ${ms} ms`)), ms);
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const RECOVERY_DEADLINE_MS = 20_000;
const RESTART_WAIT_MS = 15_000;
const ERROR_TEXT_MAX = 300;

/** Coarse class of a hook error or install refusal, for the tables and for --compare. */
export function classifyError(outcome: string | null, error: string | null | undefined, installCode?: string | null): string | null {
  if (installCode) return installCode;
  if (outcome === "timeout") return "Timeout";
  if (outcome === "crashed") return /quarantin/i.test(error ?? "") ? "Quarantined" : "HostCrash";
  if (outcome === "capability_denied") return "TrustGate";
  if (error === null || error === undefined || error === "") return null;
  if (/memory limit|out of memory|heap/i.test(error)) return "MemoryLimit";
  if (/timed out/i.test(error)) return "Timeout";
  const named = /\b([A-Z][A-Za-z]*Error)\b/.exec(error);
  if (named?.[1]) return named[1];
  if (outcome === "invalid_result") {
    if (/too large|over the limit|bytes/i.test(error)) return "ResultTooLarge";
    if (/schema|must/i.test(error)) return "SchemaInvalid";
    return "InvalidResult";
  }
  return "Error";
}

/** Isolate recycling is not exposed by the public API: infer it from the outcome (marked `inferred`). */
export function inferRecycle(outcome: string | null, error: string | null | undefined, processRestarts: number): { observed: RecycleKind; basis: "measured" | "inferred" } {
  if (processRestarts > 0) return { observed: "process", basis: "measured" };
  if (outcome === "error" && /memory limit|disposed/i.test(error ?? "")) return { observed: "isolate", basis: "inferred" };
  if (outcome === "timeout") return { observed: "isolate", basis: "inferred" };
  return { observed: "none", basis: "inferred" };
}

function truncate(text: string | null | undefined, max = ERROR_TEXT_MAX): string | null {
  if (text === null || text === undefined) return null;
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function truncateAnnotations(a: Record<string, unknown> | undefined): Record<string, unknown> | null {
  if (a === undefined || a === null) return null;
  const json = JSON.stringify(a);
  return json.length <= 1000 ? a : { truncated: `${json.slice(0, 1000)}…` };
}

/** The well-behaved chain, retried while the failure is transient (host restarting), until it is served exactly. */
async function waitServed(runtime: Runtime, deadlineMs: number): Promise<{ ok: boolean; atNs: bigint; detail: string | null }> {
  const end = Date.now() + deadlineMs;
  let detail: string | null = null;
  for (let attempt = 0; ; attempt++) {
    const text = `after-${attempt}`;
    let transient = false;
    try {
      const result = await withDeadline(runtime.fire("on_transition", wellBehavedInput("s-served-after", text)), 15_000, "the well-behaved chain");
      const bad = checkWellBehaved(result, text);
      if (bad === null) return { ok: true, atNs: nowNs(), detail: null };
      detail = bad.detail;
      transient = bad.kind === "hook:crashed";
    } catch (err) {
      if (err instanceof WedgedError) throw err;
      detail = `rejected: ${(err as Error).message}`;
      transient = /SANDBOX|restart|closed|overload/i.test(`${(err as { code?: string }).code ?? ""} ${(err as Error).message}`);
    }
    if (!transient || Date.now() > end) return { ok: false, atNs: nowNs(), detail };
    await sleep(20);
  }
}

function caseWindow(stats: WindowStats, baseline: WindowStats): CaseWindow {
  const ratio = (a: number | null, b: number | null): number | null => (a !== null && b !== null && b > 0 ? a / b : null);
  return { ...stats, p50_ratio: ratio(stats.p50_ms, baseline.p50_ms), p99_ratio: ratio(stats.p99_ms, baseline.p99_ms) };
}

function emptyObserved(): CaseObserved {
  return { outcome: null, status: null, install_error: null, error_class: null, error: null, annotations: null, duration_ms: null, chain_status: null };
}

/**
 * Run one case. Never throws for what the attack does; returns `wedged: true` when the runtime did
 * not return in time (the caller replaces it).
 */
export async function runCorpusCase(env: CaseEnv, c: CorpusCase): Promise<{ report: CaseReport; wedged: boolean }> {
  const { runtime, load } = env;
  const e = c.expect;
  const reasons: string[] = [];
  const observed = emptyObserved();
  let regainedMs: number | null = null;
  /** Of regainedMs, the time the host waited for a CPU (starvation.ts): the caps apply to the rest. */
  let starvedMs = 0;
  let recoveredMs: number | null = null;
  let servedAfter = false;
  let wedged = false;
  const code = await buildGuestFile(c.file);
  const source = attackBundle(c, code);
  const restartsBefore = runtime.status().sandbox.restarts;
  const hitsBefore = env.probe.hits();

  // A multi-call case asserts state one call leaves for the next in the same isolate. Isolates are
  // per (worker, bundle), and under load consecutive calls land on different workers, which would
  // make such a probe vacuous (call 2 on a fresh isolate), so these run with the load paused.
  const paused = c.calls > 1;
  const notes: string[] = [];
  if (paused) {
    await load.stop(5_000);
    notes.push("background load paused: the case needs its calls on the same worker's isolate");
  }
  load.reset();
  if (c.profile?.companion === true) await withDeadline(installCompanion(runtime, c.profile), 30_000, `install the ${c.profile.id} companion`);
  const windowStart = nowNs();
  let attackStart = windowStart;
  let installed = false;
  try {
    if (e.kind === "install_error") {
      attackStart = nowNs();
      const error = await withDeadline(
        runtime.bundles.install(source).then(
          () => undefined,
          (err: unknown) => err,
        ),
        30_000,
        `install of ${c.id}`,
      );
      regainedMs = Number(nowNs() - attackStart) / 1e6;
      if (error === undefined) {
        installed = true;
        observed.outcome = "installed";
        reasons.push(`install accepted, expected refusal ${e.code}`);
      } else {
        const code = (error as { code?: unknown }).code;
        const name = (error as { name?: unknown }).name;
        observed.outcome = "install_refused";
        observed.install_error = typeof code === "string" ? code : String(name);
        observed.error = truncate((error as Error).message);
        observed.error_class = classifyError(null, observed.error, observed.install_error);
        if (name !== "VcpError") reasons.push(`install refused with ${String(name)}, not a VcpError`);
        if (code !== e.code) reasons.push(`install refused with ${String(code)}, expected ${e.code}`);
      }
    } else {
      let info;
      try {
        info = await withDeadline(runtime.bundles.install(source), 30_000, `install of ${c.id}`);
        installed = true;
      } catch (err) {
        if (err instanceof WedgedError) throw err;
        observed.outcome = "install_refused";
        observed.install_error = String((err as { code?: unknown }).code ?? (err as Error).name);
        observed.error = truncate((err as Error).message);
        observed.error_class = classifyError(null, observed.error, observed.install_error);
        reasons.push(`install refused (${observed.install_error}), expected the attack to run`);
      }
      if (info !== undefined && c.profile !== null) {
        // A profile case: the attack (and the companion after it) on one native event.
        let out: ProfileFireResult | undefined;
        for (let call = 0; call < c.calls; call++) {
          attackStart = nowNs();
          const meter = startStarvationMeter(() => runtime.status().sandbox.hostPid);
          try {
            out = await withDeadline(runtime.fireProfile(c.profile.id, c.profile.event, { input: profileAttackInput(c, call) }), fireDeadlineMs(e.maxFireMs), `fire #${call + 1} of ${c.id}`);
          } finally {
            starvedMs = meter.stop().starvedMs;
          }
          regainedMs = Number(nowNs() - attackStart) / 1e6;
        }
        if (out === undefined) throw new Error("no call was made");
        observed.chain_status = out.result.status;
        const checked = checkProfileAttack(c, out, attackBundleName(c), attackHookName(c));
        reasons.push(...checked.reasons);
        const hook = checked.hook;
        if (hook !== undefined) {
          observed.outcome = hook.outcome;
          observed.status = hook.status;
          observed.error = truncate(hook.error);
          observed.error_class = classifyError(hook.outcome, hook.error);
          observed.duration_ms = hook.duration_ms;
          if (e.outcome === "crashed" && !runtime.status().sandbox.quarantined.includes(info.digest)) reasons.push("crashed but the bundle was not quarantined");
        }
        if (regainedMs !== null && regainedMs - starvedMs > e.maxFireMs) reasons.push(`host regained control after ${regainedMs.toFixed(0)} ms (${starvedMs.toFixed(0)} ms of it waiting for a CPU), cap ${e.maxFireMs} ms`);
      } else if (info !== undefined) {
        let result: ChainResult | undefined;
        let input = attackInput(c, 0, env.probe.url);
        for (let call = 0; call < c.calls; call++) {
          input = attackInput(c, call, env.probe.url);
          const sentContext = structuredClone(input.context);
          attackStart = nowNs();
          const meter = startStarvationMeter(() => runtime.status().sandbox.hostPid);
          try {
            result = await withDeadline(runtime.fire(c.hook.type!, input), fireDeadlineMs(e.maxFireMs), `fire #${call + 1} of ${c.id}`);
          } finally {
            starvedMs = meter.stop().starvedMs;
          }
          regainedMs = Number(nowNs() - attackStart) / 1e6;
          input.context = sentContext;
        }
        if (result === undefined) throw new Error("no call was made");
        observed.chain_status = result.status;
        const mine = result.hook_results.filter((h: HookExecution) => h.bundle === attackBundleName(c));
        if (mine.length !== 1) reasons.push(`${mine.length} results of the attack hook, expected 1`);
        const hook = mine[0];
        if (hook !== undefined) {
          observed.outcome = hook.outcome;
          observed.status = hook.status;
          observed.error = truncate(hook.error);
          observed.error_class = classifyError(hook.outcome, hook.error);
          observed.annotations = truncateAnnotations(hook.annotations);
          observed.duration_ms = hook.duration_ms;
          const accepted = [e.outcome, ...e.outcomeAlso];
          if (!accepted.includes(hook.outcome as never)) reasons.push(`outcome ${hook.outcome}, expected ${accepted.join(" or ")}`);
          if (hook.status !== e.status) reasons.push(`status ${hook.status}, expected ${e.status}`);
          if (hook.hook !== attackHookName(c)) reasons.push(`hook reported as '${hook.hook}'`);
          if (e.errorMatches && hook.outcome === e.outcome && !e.errorMatches.test(String(hook.error))) reasons.push(`error does not match /${e.errorMatches.source}/`);
          if (e.errorNotMatches && e.errorNotMatches.test(String(hook.error ?? ""))) reasons.push(`error matches /${e.errorNotMatches.source}/ (must not)`);
          if (e.annotations) {
            for (const [key, value] of Object.entries(e.annotations)) {
              const has = hook.annotations !== undefined && hook.annotations !== null && Object.prototype.hasOwnProperty.call(hook.annotations, key);
              if (!has) reasons.push(`probe annotation '${key}' missing`);
              else if (!isDeepStrictEqual(hook.annotations?.[key], value)) reasons.push(`probe annotation '${key}' = ${truncate(JSON.stringify(hook.annotations?.[key]), 120)}, safe value ${truncate(JSON.stringify(value), 120)}`);
            }
          }
          if (!(Number.isFinite(hook.duration_ms) && hook.duration_ms >= 0)) reasons.push(`duration_ms ${String(hook.duration_ms)} is not a runtime measurement`);
          if (e.maxDurationMs !== null && hook.duration_ms - starvedMs > e.maxDurationMs) reasons.push(`duration ${hook.duration_ms} ms (${starvedMs.toFixed(0)} ms of the fire waiting for a CPU) over ${e.maxDurationMs} ms`);
          if (e.outcome === "crashed" && !runtime.status().sandbox.quarantined.includes(info.digest)) reasons.push("crashed but the bundle was not quarantined");
        }
        if (regainedMs !== null && regainedMs - starvedMs > e.maxFireMs) reasons.push(`host regained control after ${regainedMs.toFixed(0)} ms (${starvedMs.toFixed(0)} ms of it waiting for a CPU), cap ${e.maxFireMs} ms`);
        if (result.status !== "completed") reasons.push(`chain ${result.status}, expected completed`);
        if (result.aborted_by !== null) reasons.push(`chain aborted by ${String(result.aborted_by)}`);
        if (!isDeepStrictEqual(result.constitution, input.constitution)) reasons.push("the constitution changed");
        if (e.context) {
          for (const [key, value] of Object.entries(e.context)) if (!isDeepStrictEqual(result.context[key], value)) reasons.push(`context.${key} is ${truncate(JSON.stringify(result.context[key]), 80)}`);
        } else if (e.status !== "modify" && !isDeepStrictEqual(result.context, input.context)) {
          reasons.push("the attack changed the context the next hook sees");
        }
        if (Object.getPrototypeOf(result.context) !== Object.prototype || (result.context as Record<string, unknown>)["polluted"] !== undefined) reasons.push("the result context carries a polluted prototype");
      }
    }

    // Recycling: a process restart is measured; wait for it when expected (the supervisor restarts asynchronously).
    if (e.recycled === "process" || observed.outcome === "crashed") {
      const end = Date.now() + RESTART_WAIT_MS;
      while (runtime.status().sandbox.restarts <= restartsBefore && Date.now() < end) await sleep(50);
    }
    const served = await waitServed(runtime, RECOVERY_DEADLINE_MS);
    servedAfter = served.ok;
    recoveredMs = Number(served.atNs - attackStart) / 1e6;
    if (!served.ok) reasons.push(`the runtime no longer serves a well-behaved chain: ${served.detail ?? "?"}`);
  } catch (err) {
    if (!(err instanceof WedgedError)) throw err;
    wedged = true;
    reasons.unshift(`runtime wedged: ${err.message}`);
  }

  // The background window: from the attack's start until it was served again, at least minWindowMs.
  const minEnd = windowStart + BigInt(env.minWindowMs) * 1_000_000n;
  while (nowNs() < minEnd) await sleep(Math.max(1, Number(minEnd - nowNs()) / 1e6));
  const windowEnd = nowNs();
  let background: CaseWindow | null = null;
  if (paused) {
    load.start(runtime);
  } else {
    await load.settle(windowEnd, wedged ? 0 : 5_000);
    background = caseWindow(load.window(windowStart, windowEnd), env.baseline);
  }

  const restarts = runtime.status().sandbox.restarts - restartsBefore;
  if (!wedged) {
    if (e.recycled === "process" && restarts === 0) reasons.push("expected a sandbox process restart, none happened");
    if (e.recycled !== "process" && restarts > 0) reasons.push(`the sandbox process restarted ${restarts} time(s): the attack took down the host`);
    if (env.probe.hits() !== hitsBefore) reasons.push(`${env.probe.hits() - hitsBefore} connection(s) reached the network probe listener`);
  }
  if (installed && !wedged) {
    try {
      await withDeadline(runtime.bundles.remove(attackBundleName(c)), 15_000, `remove ${attackBundleName(c)}`);
    } catch (err) {
      if (!(err instanceof WedgedError)) throw err;
      wedged = true;
      reasons.push(`runtime wedged: ${err.message}`);
    }
  }
  if (!wedged && runtime.bundles.get(attackBundleName(c)) !== undefined) reasons.push("the attack bundle is still installed");
  if (!wedged && c.profile?.companion === true) {
    await withDeadline(runtime.bundles.remove(companionBundleName(c.profile.id)), 15_000, "remove the companion").catch((err: unknown) => {
      reasons.push(`the companion could not be removed: ${(err as Error).message}`);
    });
  }

  const recycle = inferRecycle(observed.outcome, observed.error, restarts);
  const report: CaseReport = {
    id: c.id,
    category: c.category as ReportCategory,
    title: c.title,
    source: "corpus",
    contained: reasons.length === 0,
    reasons,
    expected: {
      outcome: e.kind === "outcome" ? [e.outcome, ...e.outcomeAlso].join(" or ") : null,
      status: e.kind === "outcome" ? e.status : null,
      install_error: e.kind === "install_error" ? e.code : null,
      error_matches: e.kind === "outcome" && e.errorMatches ? e.errorMatches.source : null,
      annotations: e.kind === "outcome" ? e.annotations : null,
      recycled: e.recycled,
    },
    observed,
    control: { regained_ms: wedged ? null : regainedMs, starved_ms: wedged || regainedMs === null ? null : starvedMs, recovered_ms: servedAfter ? recoveredMs : null, wedged },
    recycled: { expected: e.recycled, observed: recycle.observed, basis: recycle.basis, process_restarts: restarts },
    served_after: servedAfter,
    background,
    notes,
  };
  return { report, wedged };
}
