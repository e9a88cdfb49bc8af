import type { HookOutputEntry, NativeObject, ProfileContext } from "../types.js";
import { decodeHookResult, defaultResult, type HookResult, type InjectionRole, type MessageLevel } from "./output.js";

/** Default of `profiles.amplifier.injection_size_limit` (characters), upstream's 10 KB. */
export const DEFAULT_INJECTION_SIZE_LIMIT = 10_240;
/** Default of `profiles.amplifier.injection_budget_per_turn` (tokens = characters / 4, soft). */
export const DEFAULT_INJECTION_BUDGET_PER_TURN = 1_000;
const CHARS_PER_TOKEN = 4;

/** One injection as it enters the agent's context, with provenance (PROFILES §8.9). */
export interface Injection {
  hook: string;
  role: InjectionRole;
  content: string;
  ephemeral: boolean;
  /** The chain's runtime-stamped `data.timestamp`; `null` only if the input carried none. */
  timestamp: string | null;
}

export interface UserMessage {
  message: string;
  level: MessageLevel;
  /** `user_message_source`, or the hook's name when the hook gave none. */
  source: string;
  hook: string;
}

/** What an `ask_user` answer asks; the coordinator adds `id` and `expires_at` (PROFILES §8.9). */
export interface ApprovalRequest {
  hook: string;
  prompt: string;
  options: string[];
  default: "allow" | "deny";
  timeout_s: number;
}

export interface CoordinatorNote {
  code: "INJECTION_TOO_LARGE" | "INJECTION_BUDGET_EXCEEDED";
  hook: string;
  message: string;
  [key: string]: unknown;
}

/** The native Amplifier answer: the folded HookResult plus the coordinator's fields. */
export interface AmplifierAnswer extends HookResult {
  injections: Injection[];
  user_messages: UserMessage[];
  approval?: ApprovalRequest;
  /** Refused parts of the answer (the rest stands), e.g. an injection over the size limit. */
  errors: CoordinatorNote[];
  /** Soft limits crossed (the per-turn injection budget): reported, never a block. */
  warnings: CoordinatorNote[];
}

function positiveSetting(ctx: ProfileContext, key: string, fallback: number): number {
  const v = ctx.settings[key];
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : fallback;
}

function normalize(output: NativeObject): HookResult {
  const d = decodeHookResult(output);
  return d.ok ? d.value : defaultResult();
}

/** Characters as Python's `len()` counts them (code points, not UTF-16 units). */
function chars(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * Merge several `inject_context` results (upstream `merge_inject_context_results`): contents joined
 * with a blank line; role and `suppress_output` from the first; `append_to_last_tool_result` OR.
 * `ephemeral` is OR as PROFILES §3.4 specifies (upstream takes the first's: a merged message that holds
 * any ephemeral content is treated as ephemeral here). One result is returned unchanged, as upstream.
 */
function mergeInjections(results: readonly HookResult[]): HookResult {
  if (results.length === 1) return { ...results[0]! };
  const first = results[0]!;
  return {
    ...defaultResult(),
    action: "inject_context",
    context_injection: results.map((r) => r.context_injection ?? "").join("\n\n"),
    context_injection_role: first.context_injection_role,
    ephemeral: results.some((r) => r.ephemeral),
    suppress_output: first.suppress_output,
    append_to_last_tool_result: results.some((r) => r.append_to_last_tool_result),
  };
}

/**
 * Amplifier's fold (`HookRegistry::emit`), over the outputs in plan order, plus the coordinator.
 *
 * ```
 *  deny ─────────► answer = that result (the chain already stopped there)
 *  ask_user ─────► first one kept                      precedence:
 *  inject_context► collected (size-checked), merged    deny > ask_user > inject_context > modify > continue
 *  modify + data ► current data = its data
 *  continue ─────► answer = continue with the current data (stamped input, as modified)
 * ```
 * Compatibility mode returns the ask/inject result as the hook built it, dropping data accumulated by
 * earlier `modify` results (upstream); `strict` puts the accumulated data on it.
 */
export function foldAmplifier(
  entries: readonly HookOutputEntry[],
  ctx: ProfileContext,
  input: NativeObject,
): AmplifierAnswer {
  const limit = positiveSetting(ctx, "injection_size_limit", DEFAULT_INJECTION_SIZE_LIMIT);
  const budget = positiveSetting(ctx, "injection_budget_per_turn", DEFAULT_INJECTION_BUDGET_PER_TURN);
  const inputData = typeof input.data === "object" && input.data !== null && !Array.isArray(input.data) ? (input.data as NativeObject) : {};
  const stamp = typeof inputData.timestamp === "string" ? inputData.timestamp : null;

  let current: NativeObject = inputData;
  let denied: HookResult | undefined;
  let ask: { hook: string; result: HookResult } | undefined;
  const injected: Array<{ hook: string; result: HookResult }> = [];
  const userMessages: UserMessage[] = [];
  const errors: CoordinatorNote[] = [];
  const warnings: CoordinatorNote[] = [];

  for (const { hook, output } of entries) {
    const r = normalize(output);
    if (r.user_message !== null && r.action !== "ask_user") {
      userMessages.push({ message: r.user_message, level: r.user_message_level, source: r.user_message_source ?? hook, hook });
    }
    if (r.action === "deny") {
      denied = r;
      break;
    }
    if (r.action === "modify" && r.data !== null) current = r.data;
    if (r.action === "inject_context" && r.context_injection !== null) {
      const size = chars(r.context_injection);
      if (size > limit) {
        errors.push({
          code: "INJECTION_TOO_LARGE", hook, limit, size,
          message: `context injection from hook ${hook} is ${size} characters, over injection_size_limit ${limit}: refused`,
        });
      } else {
        injected.push({ hook, result: r });
      }
    }
    if (r.action === "ask_user" && ask === undefined) ask = { hook, result: r };
  }

  let folded: HookResult;
  let injections: Injection[] = [];
  let approval: ApprovalRequest | undefined;
  if (denied !== undefined) {
    folded = denied;
  } else if (ask !== undefined) {
    folded = { ...ask.result };
    const r = ask.result;
    approval = {
      hook: ask.hook,
      prompt: r.approval_prompt ?? "Allow this operation?",
      options: r.approval_options ?? ["Allow", "Deny"],
      default: r.approval_default,
      timeout_s: r.approval_timeout,
    };
    if (ctx.strict) folded.data = current;
  } else if (injected.length > 0) {
    folded = mergeInjections(injected.map((i) => i.result));
    if (ctx.strict) folded.data = current;
    let used = 0;
    injections = injected.map(({ hook, result }) => {
      const content = result.context_injection ?? "";
      const tokens = Math.floor(chars(content) / CHARS_PER_TOKEN);
      if (used + tokens > budget) {
        warnings.push({
          code: "INJECTION_BUDGET_EXCEEDED", hook, current: used, attempted: tokens, budget,
          message: `context injection from hook ${hook} (${tokens} tokens) exceeds injection_budget_per_turn ${budget} (already ${used})`,
        });
      }
      used += tokens;
      return { hook, role: result.context_injection_role, content, ephemeral: result.ephemeral, timestamp: stamp };
    });
  } else {
    folded = { ...defaultResult(), data: current };
  }

  const answer: AmplifierAnswer = { ...folded, injections, user_messages: userMessages, errors, warnings };
  if (approval !== undefined) answer.approval = approval;
  return answer;
}
