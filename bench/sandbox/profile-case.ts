/**
 * Corpus cases that attack through an event profile (sandbox/corpus/README.md "Profile cases"): the
 * bundle, the native input, the well-behaved companion hook that runs in the same chain, and the one
 * check of the outcome — shared by test/adversarial/corpus.test.ts and the sandbox bench, so both
 * judge a profile case the same way.
 *
 * SECURITY: the attack's code is hostile; it only ever reaches esbuild and the sandbox.
 */
import { isDeepStrictEqual } from "node:util";
import type { BundleSource, HookExecution, ProfileFireResult, Runtime } from "../../src/index.js";
import { buildGuestText } from "../lib/guest-build.js";
import type { CorpusCase, ProfileAttack } from "./corpus.js";

export const COMPANION_HOOK = "wb_companion";
export const COMPANION_TEXT = "companion-served";

export function companionBundleName(profile: string): string {
  return `wb-companion-${profile}`;
}

/** What the companion returns in each profile: a visible, harmless contribution to the answer. */
const COMPANION_OUTPUT: Record<string, unknown> = {
  "gemini-cli": { systemMessage: COMPANION_TEXT },
  llxprt: { systemMessage: COMPANION_TEXT },
  "claude-code": { systemMessage: COMPANION_TEXT },
  amplifier: { action: "continue", user_message: COMPANION_TEXT },
  "ai-memory": { action: "allow" },
  "repo-yaml": { logs: [{ level: "info", message: COMPANION_TEXT }] },
};

/** Amplifier runs lower priorities first; every other profile higher first. The companion runs after the attack. */
function companionPriority(profile: string): number {
  return profile === "amplifier" ? 90 : 10;
}

/** The profile's default native input for an event; the case's `profile.input` is merged over it (top level). */
export function profileAttackInput(c: CorpusCase, call: number): Record<string, unknown> {
  const p = c.profile!;
  const session = c.sessions[call] ?? `s-${c.id}`;
  let base: Record<string, unknown>;
  switch (p.id) {
    case "gemini-cli":
    case "llxprt":
      base = { session_id: session, transcript_path: "/tmp/t.jsonl", cwd: "/work/app", hook_event_name: p.event, timestamp: "2026-11-26T00:00:00Z" };
      break;
    case "claude-code":
      base = { session_id: session, transcript_path: "/tmp/t.jsonl", cwd: "/work/app", hook_event_name: p.event };
      break;
    case "amplifier":
      base = { event: p.event, data: { session_id: session } };
      break;
    case "ai-memory":
      base = { event: p.event, payload: {} };
      break;
    default:
      base = { session_id: session, event_type: p.event };
  }
  return { ...base, ...structuredClone(p.input) };
}

export function profileAttackBundle(c: CorpusCase, code: string, names: { bundle: string; hook: string; memoryMb: number }): BundleSource {
  const p = c.profile!;
  return {
    manifest: {
      bundle: names.bundle,
      version: "1.0.0",
      trust: c.hook.trust,
      profile: p.id,
      limits: { memory_mb: names.memoryMb },
      isolation: c.isolation,
      hooks: [
        {
          name: names.hook,
          event: p.event,
          action: "action",
          priority: 50,
          timeout_ms: c.hook.timeout_ms,
          fail_closed: c.hook.fail_closed,
          ...(p.matcher !== null ? { matcher: p.matcher } : {}),
          ...(p.sequential ? { sequential: true } : {}),
          ...(p.blocking ? { blocking: true } : {}),
          ...(p.match !== null ? { match: p.match } : {}),
          ...(c.hook.condition !== null ? { condition: c.hook.condition } : {}),
        },
      ],
    } as unknown as BundleSource["manifest"],
    code,
  };
}

const companionCode = new Map<string, Promise<string>>();

/** Install the profile's companion on the attack's event (built once per profile). */
export async function installCompanion(runtime: Runtime, p: ProfileAttack): Promise<void> {
  let code = companionCode.get(p.id);
  if (code === undefined) {
    code = buildGuestText(`export function companion() { return ${JSON.stringify(COMPANION_OUTPUT[p.id])}; }`);
    companionCode.set(p.id, code);
  }
  await runtime.bundles.install({
    manifest: {
      bundle: companionBundleName(p.id),
      version: "1.0.0",
      trust: "deployment",
      profile: p.id,
      limits: { memory_mb: 64 },
      hooks: [{ name: COMPANION_HOOK, event: p.event, action: "companion", priority: companionPriority(p.id), timeout_ms: 5000 }],
    } as unknown as BundleSource["manifest"],
    code: await code,
  });
}

function at(value: unknown, path: string): unknown {
  let v = value;
  for (const key of path.split(".")) {
    if (typeof v !== "object" || v === null || !Object.prototype.hasOwnProperty.call(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

function clip(text: string, max = 160): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** Any object in `value` whose prototype is not Object.prototype / Array.prototype (a smuggled `__proto__`). */
function foreignPrototype(value: unknown, path = "native", depth = 0): string | null {
  if (typeof value !== "object" || value === null || depth > 64) return null;
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== Array.prototype) return path;
  for (const [k, v] of Object.entries(value)) {
    const found = foreignPrototype(v, `${path}.${k}`, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Everything a profile case asserts about the last call's answer, as reasons (empty: contained):
 * the attack hook's outcome and status, the companion ran `ok` (unless the attack may stop the chain),
 * the native answer's expected keys, size and prototypes, and this process's Object.prototype.
 */
export function checkProfileAttack(c: CorpusCase, out: ProfileFireResult, attackBundle: string, attackHook: string): { hook: HookExecution | undefined; reasons: string[] } {
  const p = c.profile!;
  const e = c.expect;
  const reasons: string[] = [];
  if (e.kind !== "outcome") return { hook: undefined, reasons: ["a profile case expects an outcome"] };
  const mine = out.result.hook_results.filter((h) => h.bundle === attackBundle);
  if (mine.length !== 1) reasons.push(`${mine.length} results of the attack hook, expected 1`);
  const hook = mine[0];
  if (hook !== undefined) {
    const detail = `outcome=${hook.outcome} status=${hook.status} error=${clip(String(hook.error))}`;
    const accepted = [e.outcome, ...e.outcomeAlso];
    if (!accepted.includes(hook.outcome as never)) reasons.push(`outcome ${hook.outcome}, expected ${accepted.join(" or ")} (${detail})`);
    if (hook.status !== e.status) reasons.push(`status ${hook.status}, expected ${e.status} (${detail})`);
    if (hook.hook !== attackHook) reasons.push(`hook reported as '${hook.hook}'`);
    if (e.errorMatches && hook.outcome === e.outcome && !e.errorMatches.test(String(hook.error))) reasons.push(`error does not match /${e.errorMatches.source}/ (${detail})`);
    if (e.errorNotMatches && e.errorNotMatches.test(String(hook.error ?? ""))) reasons.push(`error matches /${e.errorNotMatches.source}/ (must not)`);
    if (!(Number.isFinite(hook.duration_ms) && hook.duration_ms >= 0)) reasons.push(`duration_ms ${String(hook.duration_ms)} is not a runtime measurement`);
    if (e.maxDurationMs !== null && hook.duration_ms > e.maxDurationMs) reasons.push(`duration ${hook.duration_ms} ms over ${e.maxDurationMs} ms`);
  }
  if (p.companion) {
    const companion = out.result.hook_results.find((h) => h.bundle === companionBundleName(p.id));
    if (companion === undefined) reasons.push("the companion hook did not run: the attack took its chain down");
    else if (companion.outcome !== "ok") reasons.push(`the companion hook ended ${companion.outcome}: ${clip(String(companion.error))}`);
  }
  const native = out.native as Record<string, unknown>;
  for (const [path, value] of Object.entries(p.native)) {
    if (!isDeepStrictEqual(at(native, path), value)) reasons.push(`native.${path} is ${clip(JSON.stringify(at(native, path)) ?? "absent")}, expected ${clip(JSON.stringify(value))}`);
  }
  for (const [path, re] of Object.entries(p.nativeMatches)) {
    const text = JSON.stringify(at(native, path)) ?? "";
    if (!re.test(text)) reasons.push(`native.${path} = ${clip(text)} does not match /${re.source}/`);
  }
  for (const path of p.nativeAbsent) if (at(native, path) !== undefined) reasons.push(`native.${path} is present: ${clip(JSON.stringify(at(native, path)))}`);
  if (p.exitCode !== null && out.exit_code !== p.exitCode) reasons.push(`exit code ${out.exit_code}, expected ${p.exitCode}`);
  const size = Buffer.byteLength(JSON.stringify(native), "utf8");
  if (size > p.maxNativeBytes) reasons.push(`the native answer is ${size} bytes, over ${p.maxNativeBytes}`);
  const foreign = foreignPrototype(native);
  if (foreign !== null) reasons.push(`${foreign} has a foreign prototype (a smuggled __proto__)`);
  // This process (the runtime's host side) must not have been polluted by parsing or merging outputs.
  if (({} as Record<string, unknown>)["polluted"] !== undefined || Object.getOwnPropertyNames(Object.prototype).includes("polluted")) {
    reasons.push("Object.prototype of the host process was polluted");
  }
  return { hook, reasons };
}
