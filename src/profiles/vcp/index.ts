/**
 * `vcp@1`: the VCP Hook System 1.0.0 itself as a profile (PROFILES §3.1). Its six hook types are its
 * events, and the executor (chain/execute.ts `runChain`, the one executor of every profile) runs a VCP
 * chain by this descriptor: the composed HookInput and its changes (chain.ts), the merge rules
 * (continue / modify / abort: the first abort stops the chain; a failed hook continues unless it is
 * fail_closed, spec §7), the integrity check of a modified constitution (through `apply`), annotations
 * and cascades (spec §7.3).
 */
import { HOOK_TYPES } from "../../model/hook-type.js";
import { HookResultSchema } from "../../model/result.js";
import type { EventProfile, EventSpec, NativeObject } from "../types.js";
import { answerFieldsOf, MATCH_ALL } from "../common/native.js";
import { composeHookInput, decodeHookResult, hookResultDenial } from "./chain.js";

export const VCP_PROFILE_ID = "vcp";

/** spec §3: every hook type can abort except `periodic` (§3.6), and only `modify` changes anything. */
const EVENTS: Readonly<Record<string, EventSpec>> = Object.freeze(
  Object.fromEntries(
    HOOK_TYPES.map((type) => [
      type,
      Object.freeze({ pre: type !== "periodic", can_block: type !== "periodic", modifiable: Object.freeze(["modified_context", "modified_constitution"]) }),
    ]),
  ),
);

function isObject(value: unknown): value is NativeObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const CONTINUE: NativeObject = Object.freeze({ status: "continue" });

export const vcpProfile: EventProfile = Object.freeze({
  id: VCP_PROFILE_ID,
  version: "1",
  upstream: Object.freeze({ repo: "spec/vcp-hook-system-1.0.0.md", commit: "1.0.0" }),
  events: EVENTS,
  // spec §5.1: priority descending, then registration order; one hook after another (§5.3).
  ordering: "priority_desc",
  execution: "sequential",
  // spec §5.4: timeout_ms is required in [1, 30000]; DESIGN §3.1 examples use 5000.
  timeouts: Object.freeze({ default_ms: 5_000, max_ms: 30_000, config_unit: "ms" }),
  // spec §7: failures continue unless the hook is fail_closed (§7.4).
  failure: Object.freeze({ default: "open", term_grace_ms: 0 }),
  strictFixes: Object.freeze([]),
  sessionIdOf(input: NativeObject): string | undefined {
    const session = input["session"];
    return isObject(session) && typeof session["id"] === "string" ? session["id"] : undefined;
  },
  validateInput(input: unknown) {
    return isObject(input) ? { ok: true, value: input } : { ok: false, error: "(root): must be a JSON object (a HookInput, spec §4.2)" };
  },
  compileMatcher(pattern: string | undefined) {
    if (pattern !== undefined && pattern !== "" && pattern !== "*") throw new Error("vcp@1 hooks have no matcher: use a condition (spec §4.4)");
    return MATCH_ALL;
  },
  decode(raw: unknown) {
    const parsed = HookResultSchema.safeParse(raw);
    return parsed.success ? { ok: true, value: parsed.data as NativeObject } : { ok: false, error: parsed.error.issues.map((i) => i.message).join("; ") };
  },
  subjectOf(_input: NativeObject, event: string) {
    return { kind: "vcp" as const, vcp_type: event };
  },
  failureOutput(hook: string, why: string, failClosed: boolean, event: string) {
    // spec §7.4 fail-closed, except for periodic hooks, which are part of no event and cannot abort (§3.6).
    return failClosed && event !== "periodic" ? { status: "abort", reason: `fail-closed: ${hook}: ${why}` } : CONTINUE;
  },
  answerFields(output: NativeObject) {
    return answerFieldsOf(output, CONTINUE);
  },
  verdictOf(output: NativeObject) {
    return output["status"] === "abort" ? "block" : output["status"] === "modify" ? "modify" : "allow";
  },
  stopsChain(output: NativeObject) {
    return output["status"] === "abort";
  },
  reduce(outputs: readonly NativeObject[]) {
    return outputs.find((o) => o["status"] === "abort") ?? CONTINUE;
  },
  present(aggregated: NativeObject) {
    return { native: aggregated, exit_code: aggregated["status"] === "abort" ? 2 : 0 };
  },
  refusalAnswer(reason: string) {
    return { native: { status: "abort", reason }, exit_code: 2 as const, stderr: reason };
  },
  composeInput: composeHookInput,
  decodeResult: decodeHookResult,
  reasonOf(output: NativeObject) {
    return typeof output["reason"] === "string" && output["reason"] !== "" ? output["reason"] : undefined;
  },
  observerDenial: hookResultDenial,
  blockIgnored(output: NativeObject, event: string) {
    // spec §3.6: periodic hooks are not part of a pipeline event and cannot abort it.
    return event === "periodic" ? `periodic abort treated as continue (spec §3.6): ${typeof output["reason"] === "string" ? output["reason"] : ""}` : undefined;
  },
  annotations: true,
  cascade: true,
  keepDuplicates: true,
} satisfies EventProfile);
