import type { HookOutputEntry, NativeObject, ProfileContext } from "../types.js";

/** One queued AskUser, with the hook that asked (upstream `AskUserPrompt.origin_command`). */
export interface QueuedAsk {
  prompt: string;
  options: string[];
  default?: string;
  hook: string;
}

/** upstream `ChainResult`, as JSON. */
export type ChainResult =
  | { result: "allow"; warnings: string[] }
  | { result: "modified_allow"; delta: NativeObject; warnings: string[] }
  | { result: "deny"; reason: string; code: number; warnings: string[] }
  | { result: "ask_user"; queued: QueuedAsk[]; warnings: string[] };

function isObject(v: unknown): v is NativeObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * The chain fold of upstream `HookChain::fire`, over the outputs in plan order (priority descending,
 * stable):
 *
 * ```
 *  allow ──────► clears queued AskUsers (upstream; `strict` keeps them)   a failed hook under fail-open
 *  modify ─────► delta merged into the accumulated delta (later wins),      is an allow (with a warning)
 *                clears queued AskUsers
 *  deny ───────► the answer (the chain stopped there)
 *  ask_user ───► queued
 *  end ────────► queued AskUsers ? AskUser : modified ? ModifiedAllow(delta) : Allow
 * ```
 * (The payload later hooks see is `chainInput`'s business: the same delta over the payload.)
 */
export function foldAiMemory(entries: readonly HookOutputEntry[], ctx: ProfileContext): ChainResult {
  const delta: NativeObject = {};
  let modified = false;
  let queue: QueuedAsk[] = [];
  const warnings: string[] = [];
  for (const { hook, output } of entries) {
    if (typeof output.warning === "string") warnings.push(`${hook}: ${output.warning}`);
    switch (output.action) {
      case "deny":
        return {
          result: "deny",
          reason: typeof output.reason === "string" ? output.reason : "denied",
          code: typeof output.code === "number" ? output.code : 403,
          warnings,
        };
      case "modify":
        if (isObject(output.delta)) Object.assign(delta, output.delta);
        modified = true;
        queue = [];
        break;
      case "ask_user": {
        const ask: QueuedAsk = {
          prompt: String(output.prompt ?? ""),
          options: Array.isArray(output.options) ? (output.options as string[]) : [],
          hook,
        };
        if (typeof output.default === "string") ask.default = output.default;
        queue.push(ask);
        break;
      }
      default:
        if (!ctx.strict) queue = [];
    }
  }
  if (queue.length > 0) return { result: "ask_user", queued: queue, warnings };
  if (modified) return { result: "modified_allow", delta, warnings };
  return { result: "allow", warnings };
}

/**
 * The one decision line ai-memory reads (PROFILES §3.5, §8.10): `{"action":"allow"}`,
 * `{"action":"modify","delta":…}`, `{"action":"deny","reason":…,"code":…}`, or the first queued
 * AskUser plus `queued: [all of them]`.
 */
export function decisionLine(result: ChainResult): NativeObject {
  switch (result.result) {
    default:
    case "allow":
      return { action: "allow" };
    case "modified_allow":
      return { action: "modify", delta: result.delta };
    case "deny":
      return { action: "deny", reason: result.reason, code: result.code };
    case "ask_user": {
      const first = result.queued[0]!;
      const line: NativeObject = { action: "ask_user", prompt: first.prompt, options: first.options };
      if (first.default !== undefined) line.default = first.default;
      line.queued = result.queued;
      return line;
    }
  }
}
