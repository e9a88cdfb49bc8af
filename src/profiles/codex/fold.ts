/**
 * The codex merge rules, and the translation of the merged answer into what Codex 0.171 accepts. Outputs
 * are folded in plan order (priority descending, then registration order). Pure.
 *
 *   PreToolUse          deny > ask > allow (a deprecated `decision: "block"` is a deny, `"approve"` an
 *                       allow; `continue: false` is a deny with its stopReason). The answer:
 *                         deny  ⇒ permissionDecision "deny" with the deny reasons joined "\n" (Codex
 *                                 refuses a deny without a reason: "blocked by policy" stands in)
 *                         ask   ⇒ a DENY whose reason says approval is required: Codex hooks cannot ask
 *                                 (it fails a hook that answers `ask`, and goes on without it)
 *                         allow ⇒ with an updatedInput: "allow" + the LAST updatedInput in plan order;
 *                                 without: no permissionDecision at all (Codex refuses a bare allow)
 *   PermissionRequest   deny > allow; deny messages joined "\n"
 *   PostToolUse, UserPromptSubmit, Stop, SubagentStop
 *                       any `decision: "block"` blocks, reasons joined "\n" (Codex refuses a block
 *                       without a reason: "blocked by policy" stands in)
 *   every event         systemMessage and additionalContext joined "\n"; continue:false if any, their
 *                       stopReasons joined; updatedMCPToolOutput last in plan order
 *   never answered      fields Codex refuses on the event (PreToolUse and PermissionRequest:
 *                       continue, stopReason, suppressOutput; PostToolUse: suppressOutput; Interrupt and
 *                       SessionEnd: all but systemMessage): one refused field would make Codex drop the
 *                       whole answer, deny included
 *
 * Codex launches matching hooks concurrently, lets the last hook to FINISH decide `updatedInput`
 * (`latest_updated_input`, by completion order) and fails open when a hook crashes or times out. Here the
 * last hook in plan order wins, every time, and a `fail_closed` hook that fails blocks.
 *
 * @module
 */
import { isObject, specificOf } from "../common/native.js";
import type { NativeObject } from "../types.js";
import { EVENT_TABLE, isCodexEvent } from "./events.js";
import type { HookEventName } from "./types.js";

/** The reason given when a hook blocked without one (Codex refuses an empty reason). */
export const DEFAULT_BLOCK_REASON = "blocked by vcp-hooks policy";
/** What an `ask` on PreToolUse becomes: Codex hooks cannot ask the user. */
export const ASK_PREFIX = "approval required (Codex hooks cannot ask; denied instead)";

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value.trim() !== "";
const joined = (parts: readonly string[]): string | undefined => (parts.length > 0 ? parts.join("\n") : undefined);

const PERMISSION_RANK: Readonly<Record<string, number>> = { allow: 0, ask: 1, deny: 2 };

/** The permission one PreToolUse output states (its hookSpecificOutput first, else the legacy decision). */
export function permissionOf(output: NativeObject): { decision: "allow" | "ask" | "deny"; reason?: string } | undefined {
  const hso = specificOf(output);
  const decision = hso?.["permissionDecision"];
  if (decision === "allow" || decision === "ask" || decision === "deny") {
    const why = hso?.["permissionDecisionReason"];
    return { decision, ...(nonEmpty(why) ? { reason: why } : {}) };
  }
  const reason = nonEmpty(output["reason"]) ? output["reason"] : undefined;
  if (output["decision"] === "block") return { decision: "deny", ...(reason !== undefined ? { reason } : {}) };
  if (output["decision"] === "approve") return { decision: "allow" };
  if (output["continue"] === false) return { decision: "deny", ...(nonEmpty(output["stopReason"]) ? { reason: output["stopReason"] } : {}) };
  return undefined;
}

/**
 * Fold outputs in plan order into the answer Codex accepts for `event`; `[]` is `{}` (Codex: no opinion).
 *
 * @example
 * ```ts
 * reduceCodex([{ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask", permissionDecisionReason: "rm" } }], "PreToolUse");
 * // { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny",
 * //   permissionDecisionReason: "approval required (Codex hooks cannot ask; denied instead): rm" } }
 * ```
 */
export function reduceCodex(outputs: readonly NativeObject[], event: string): NativeObject {
  if (outputs.length === 0 || !isCodexEvent(event)) return {};
  const row = EVENT_TABLE[event];
  const systemMessages: string[] = [];
  const contexts: string[] = [];
  const stopReasons: string[] = [];
  let stopped = false;
  let suppress = false;
  // PreToolUse
  let permission: "allow" | "ask" | "deny" | undefined;
  let permissionReasons: string[] = [];
  let updatedInput: NativeObject | undefined;
  // PermissionRequest
  let behavior: "allow" | "deny" | undefined;
  let denyMessages: string[] = [];
  // decision "block" events
  let blocked = false;
  const blockReasons: string[] = [];
  let mcpOutput: unknown;

  for (const output of outputs) {
    const hso = specificOf(output);
    if (nonEmpty(output["systemMessage"])) systemMessages.push(output["systemMessage"]);
    if (nonEmpty(hso?.["additionalContext"])) contexts.push(hso["additionalContext"]);
    if (output["suppressOutput"] === true) suppress = true;
    if (event === "PreToolUse") {
      const own = permissionOf(output);
      if (own !== undefined) {
        const rank = PERMISSION_RANK[own.decision]!;
        const current = permission === undefined ? -1 : PERMISSION_RANK[permission]!;
        if (rank > current) {
          permission = own.decision;
          permissionReasons = [];
        }
        if (rank >= current && own.reason !== undefined) permissionReasons.push(own.reason);
        if (own.decision === "allow" && isObject(hso?.["updatedInput"])) updatedInput = hso["updatedInput"];
      }
      continue;
    }
    if (output["continue"] === false) {
      stopped = true;
      if (nonEmpty(output["stopReason"])) stopReasons.push(output["stopReason"]);
    }
    if (event === "PermissionRequest") {
      const decision = hso?.["decision"];
      if (isObject(decision) && decision["behavior"] === "deny") {
        if (behavior !== "deny") denyMessages = [];
        behavior = "deny";
        if (nonEmpty(decision["message"])) denyMessages.push(decision["message"]);
      } else if (isObject(decision) && decision["behavior"] === "allow") {
        behavior ??= "allow";
      }
      continue;
    }
    if (output["decision"] === "block") {
      blocked = true;
      if (nonEmpty(output["reason"])) blockReasons.push(output["reason"]);
    }
    if (hso !== undefined && hso["updatedMCPToolOutput"] !== undefined) mcpOutput = hso["updatedMCPToolOutput"];
  }

  const answer: NativeObject = {};
  const specific: NativeObject = {};
  if (event === "PreToolUse") {
    if (permission === "deny") {
      specific["permissionDecision"] = "deny";
      specific["permissionDecisionReason"] = joined(permissionReasons) ?? DEFAULT_BLOCK_REASON;
    } else if (permission === "ask") {
      // SECURITY: Codex cannot ask and would drop an `ask` (the tool runs): the safe reading is a deny.
      specific["permissionDecision"] = "deny";
      const why = joined(permissionReasons);
      specific["permissionDecisionReason"] = why === undefined ? ASK_PREFIX : `${ASK_PREFIX}: ${why}`;
    } else if (permission === "allow" && updatedInput !== undefined) {
      specific["permissionDecision"] = "allow";
      specific["updatedInput"] = updatedInput;
    }
  } else if (event === "PermissionRequest") {
    // SECURITY: continue:false on a permission request is a refusal; Codex itself refuses the field.
    if (behavior === "deny" || stopped) {
      const message = joined([...denyMessages, ...stopReasons]);
      specific["decision"] = { behavior: "deny", ...(message !== undefined ? { message } : {}) };
    } else if (behavior === "allow") {
      specific["decision"] = { behavior: "allow" };
    }
  } else {
    if (row.topLevel.includes("continue") && stopped) {
      answer["continue"] = false;
      const why = joined(stopReasons);
      if (why !== undefined) answer["stopReason"] = why;
    }
    // Codex refuses suppressOutput on PostToolUse (it would drop the block with it).
    if (row.topLevel.includes("suppressOutput") && suppress && event !== "PostToolUse") answer["suppressOutput"] = true;
    if (row.topLevel.includes("decision") && blocked) {
      answer["decision"] = "block";
      answer["reason"] = joined(blockReasons) ?? DEFAULT_BLOCK_REASON;
    }
    if (row.specific.includes("updatedMCPToolOutput") && mcpOutput !== undefined) specific["updatedMCPToolOutput"] = mcpOutput;
  }
  const message = joined(systemMessages);
  if (message !== undefined) answer["systemMessage"] = message;
  const context = joined(contexts);
  if (context !== undefined && row.specific.includes("additionalContext")) specific["additionalContext"] = context;
  if (Object.keys(specific).length > 0) answer["hookSpecificOutput"] = { hookEventName: event, ...orderedLike(specific, row.specific) };
  return answer;
}

function orderedLike(fields: NativeObject, order: readonly string[]): NativeObject {
  const out: NativeObject = {};
  for (const key of order) if (key in fields) out[key] = fields[key];
  return out;
}

/** The event's own refusal carrying `reason` (what exit 2 with `reason` on stderr amounts to). */
export function blockingAnswer(reason: string, event: HookEventName): NativeObject {
  // SECURITY: the most restrictive answer the event can carry.
  switch (EVENT_TABLE[event].refusal) {
    case "permission":
      return { hookSpecificOutput: { hookEventName: event, permissionDecision: "deny", permissionDecisionReason: reason } };
    case "request":
      return { hookSpecificOutput: { hookEventName: event, decision: { behavior: "deny", message: reason } } };
    case "block":
      return { decision: "block", reason };
    case "stop":
      return { continue: false, stopReason: reason };
    case "none":
      return { systemMessage: reason };
  }
}
