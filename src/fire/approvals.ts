/**
 * The profile answer's side of approvals (PROFILES §8.9): an Amplifier `ask_user` answer of
 * `fireProfile` becomes a pending approval of the coordinator (src/pipeline/approvals.ts, where the
 * rules live), and the answer carries it — or, once settled, the decided `continue` / `deny`.
 */
import type { Approval, Approvals } from "../pipeline/approvals.js";
import type { ProfileFireInput, ProfileFireResult, ProfileFirer } from "./profile.js";

/** An answer's outcome once its approval is settled: granted, or the default allow at the timeout. */
export function approvalAllows(approval: Approval): boolean {
  return approval.state === "granted" || (approval.state === "expired" && approval.default === "allow");
}

/** The wire view of an approval inside a native answer (PROFILES §8.9 `approval`). */
function answerView(approval: Approval): Record<string, unknown> {
  return {
    id: approval.id,
    hook: approval.hook,
    prompt: approval.prompt,
    prompt_sha256: approval.prompt_sha256,
    prompt_chars: approval.prompt_chars,
    prompt_truncated: approval.prompt_truncated,
    options: approval.options,
    default: approval.default,
    timeout_s: approval.timeout_s,
    expires_at: approval.expires_at,
    state: approval.state,
    ...(approval.decision !== undefined ? { decision: approval.decision, decided_by: approval.decided_by } : {}),
  };
}

/**
 * The native answer with its approval's id and expiry added; once settled (cached "allow always",
 * a decision, the timeout) the answer is the decided `continue` or `deny` ("User denied: <prompt>").
 */
export function answerWithApproval(out: ProfileFireResult, approval: Approval): ProfileFireResult {
  const native: Record<string, unknown> = { ...out.native, approval: answerView(approval) };
  if (approval.state !== "pending") {
    if (approvalAllows(approval)) {
      native.action = "continue";
      native.reason = null;
    } else {
      native.action = "deny";
      native.reason = approval.state === "denied" ? `User denied: ${approval.prompt}` : `Approval timed out after ${approval.timeout_s} s: denied by default (${approval.prompt})`;
    }
  }
  return { ...out, native };
}

/**
 * The hook whose `ask_user` the fold kept: the first hook of the chain whose verdict is `ask` (the
 * fold keeps the first), else the name the fold reported.
 */
export function askingHook(out: ProfileFireResult, fallback: string): string {
  return out.result.hook_results.find((h) => h.verdict === "ask")?.hook ?? fallback;
}

/** The tool call an Amplifier event's `data` names (`tool_name`, `tool_input`); undefined for an event without one. */
function toolInput(data: { tool_name?: unknown; tool_input?: unknown } | undefined): { tool_name: unknown; tool_input: unknown } | undefined {
  if (typeof data !== "object" || data === null || (data.tool_name === undefined && data.tool_input === undefined)) return undefined;
  return { tool_name: data.tool_name ?? null, tool_input: data.tool_input ?? null };
}

/**
 * The coordinator's side of a profile answer (PROFILES §8.9): an Amplifier `ask_user` becomes a
 * pending approval (or is granted at once from the session's "allow always" cache); with
 * `waitApproval` the answer is the decided continue / deny.
 *
 * @example
 * ```ts
 * const out = await fireWithApproval({ firer, approvals }, "amplifier", "tool:pre", { input, waitApproval: true });
 * ```
 */
export async function fireWithApproval(
  deps: { firer: Pick<ProfileFirer, "fire">; approvals: Pick<Approvals, "request" | "wait"> },
  profile: string,
  event: string,
  input: ProfileFireInput,
): Promise<ProfileFireResult> {
  const { firer, approvals } = deps;
  const out = await firer.fire(profile, event, input);
  const asked = out.native.approval;
  if (out.result.profile !== "amplifier" || out.native.action !== "ask_user" || typeof asked !== "object" || asked === null || Array.isArray(asked)) return out;
  const a = asked as { hook?: unknown; prompt?: unknown; options?: unknown; default?: unknown; timeout_s?: unknown };
  const data = (input.input as { data?: { session_id?: unknown; tool_name?: unknown; tool_input?: unknown } } | null)?.data;
  const session = input.session ?? (typeof data?.session_id === "string" ? data.session_id : "");
  // Implicit sessions are per owner (fire-profile.ts): the session that asked is the sender's own.
  const owner = input.principal?.id ?? null;
  const approval = await approvals.request({
    profile: "amplifier",
    event,
    session,
    owner,
    chainId: out.result.chain_id,
    hook: askingHook(out, typeof a.hook === "string" ? a.hook : "(unknown)"),
    prompt: typeof a.prompt === "string" ? a.prompt : "Allow this operation?",
    options: Array.isArray(a.options) ? a.options.filter((o): o is string => typeof o === "string") : ["Allow", "Deny"],
    // What the agent asked to do, as its native input has it; the coordinator redacts and bounds it.
    input: toolInput(data),
    default: a.default === "allow" ? "allow" : "deny",
    timeoutS: typeof a.timeout_s === "number" ? a.timeout_s : 300,
  });
  if (input.waitApproval !== true || approval.state !== "pending") return answerWithApproval(out, approval);
  const signal = input.signal;
  if (signal === undefined) return answerWithApproval(out, await approvals.wait(approval.id));
  // The caller went away (or the server is closing): the approval stays pending, nobody waits for it.
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    if (signal.aborted) resolve(undefined);
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    const settled = await Promise.race([approvals.wait(approval.id), aborted]);
    return answerWithApproval(out, settled ?? approval);
  } finally {
    signal.removeEventListener("abort", onAbort!);
  }
}
