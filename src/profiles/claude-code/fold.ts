/**
 * The claude-code merge rules: outputs folded in plan order (priority descending, then registration
 * order), so the answer never depends on which hook finished first. Pure.
 *
 *   permissionDecision      deny > defer > ask > allow (PreModelSwitch: deny > ask > allow); the reasons
 *                           of the winning level joined "\n"; top-level decision approve/block = allow/deny
 *   last in plan order      updatedInput, updatedToolOutput, updatedMCPToolOutput, sessionTitle,
 *                           initialUserMessage, displayContent
 *   first in plan order     worktreePath
 *   joined "\n"             additionalContext, classifierContext, systemMessage, stopReason, block reasons
 *   any true wins           continue:false, suppressOutput, suppressOriginalPrompt, reloadSkills, retry
 *   union, first seen first watchPaths
 *   concatenated            terminalSequence (Claude Code emits each hook's; here in plan order)
 *   decision "block"        any block wins, on the events that can block (others drop it)
 *   PermissionRequest       deny > allow; deny messages joined, interrupt if any; an allow keeps the
 *                           last updatedInput and every updatedPermissions entry, in plan order
 *   Elicitation, …Result    decline (or decision "block") > cancel > accept; accept keeps the last content
 *
 * Claude Code runs a parallel group's hooks concurrently and lets the last FINISHER's `updatedInput`
 * (and `updatedToolOutput`) win — anthropics/claude-code#83353: hook latency decides which rewrite
 * runs. Here the last hook in plan order wins, every time.
 *
 * @module
 */
import { isObject, specificOf } from "../common/native.js";
import type { NativeObject } from "../types.js";
import { EVENT_TABLE, isClaudeEvent, permissionLevels } from "./events.js";
import type { HookEventName } from "./types.js";

type FieldRule = "last" | "first" | "join" | "any" | "union";

/** How each plain hookSpecificOutput field is folded (the structured ones have their own code below). */
const FIELD_RULES: Readonly<Record<string, FieldRule>> = {
  additionalContext: "join",
  classifierContext: "join",
  updatedInput: "last",
  updatedToolOutput: "last",
  updatedMCPToolOutput: "last",
  sessionTitle: "last",
  initialUserMessage: "last",
  displayContent: "last",
  worktreePath: "first",
  suppressOriginalPrompt: "any",
  reloadSkills: "any",
  retry: "any",
  watchPaths: "union",
};

/**
 * The permission an output states on a permission event: `hookSpecificOutput.permissionDecision`, else
 * the deprecated top-level `decision` (`approve` = allow, `block` = deny), as Claude Code reads it.
 */
export function permissionOf(output: NativeObject, event: HookEventName): { decision: string; reason?: string } | undefined {
  const levels = permissionLevels(event);
  if (levels === undefined) return undefined;
  const hso = specificOf(output);
  const decision = hso?.["permissionDecision"];
  if (typeof decision === "string" && levels.includes(decision)) {
    const why = hso?.["permissionDecisionReason"];
    return { decision, reason: typeof why === "string" ? why : undefined };
  }
  const legacy = output["decision"];
  const reason = typeof output["reason"] === "string" ? output["reason"] : undefined;
  if (legacy === "approve") return { decision: "allow", reason };
  if (legacy === "block") return { decision: "deny", reason };
  return undefined;
}

const ELICITATION_RANK: Readonly<Record<string, number>> = { accept: 1, cancel: 2, decline: 3 };

/** The elicitation answer an output states: a top-level `decision: "block"` declines, as Claude Code reads it. */
function elicitationOf(output: NativeObject): string | undefined {
  if (output["decision"] === "block") return "decline";
  const action = specificOf(output)?.["action"];
  return typeof action === "string" && ELICITATION_RANK[action] !== undefined ? action : undefined;
}

function joinInto(target: NativeObject, key: string, parts: readonly string[]): void {
  if (parts.length > 0) target[key] = parts.join("\n");
}

const nonEmpty = (value: unknown): value is string => typeof value === "string" && value !== "";

/**
 * Fold outputs in plan order; `[]` is the neutral answer `{}` (a valid empty http-hook body).
 *
 * @example
 * ```ts
 * reduceClaude([{ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "ask" } },
 *               { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "defer" } }], "PreToolUse");
 * // { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "defer" } }
 * ```
 */
export function reduceClaude(outputs: readonly NativeObject[], event: string): NativeObject {
  if (outputs.length === 0 || !isClaudeEvent(event)) return {};
  const row = EVENT_TABLE[event];
  const levels = permissionLevels(event);
  const merged: NativeObject = {};
  const specific: NativeObject = {};
  const stopReasons: string[] = [];
  const systemMessages: string[] = [];
  const blockReasons: string[] = [];
  let terminal = "";
  let blocked = false;
  // Plain hookSpecificOutput fields: joined texts, first/last values, unions.
  const joined = new Map<string, string[]>();
  const unions = new Map<string, string[]>();
  // Permission events.
  let permission: string | undefined;
  let permissionReasons: string[] = [];
  // PermissionRequest.
  let behavior: string | undefined;
  let denyMessages: string[] = [];
  let interrupt = false;
  let requestInput: NativeObject | undefined;
  const grants: unknown[] = [];
  // Elicitation, ElicitationResult.
  let answer: string | undefined;
  let answerContent: NativeObject | undefined;

  for (const output of outputs) {
    if (output["continue"] === false) {
      merged["continue"] = false;
      if (nonEmpty(output["stopReason"])) stopReasons.push(output["stopReason"]);
    }
    if (output["suppressOutput"] === true) merged["suppressOutput"] = true;
    if (nonEmpty(output["systemMessage"])) systemMessages.push(output["systemMessage"]);
    if (nonEmpty(output["terminalSequence"])) terminal += output["terminalSequence"];
    const hso = specificOf(output);

    if (levels !== undefined) {
      const own = permissionOf(output, event);
      if (own !== undefined) {
        const rank = levels.indexOf(own.decision);
        const current = permission === undefined ? -1 : levels.indexOf(permission);
        if (rank > current) {
          permission = own.decision;
          permissionReasons = [];
        }
        if (rank >= current && nonEmpty(own.reason)) permissionReasons.push(own.reason);
      }
    } else if (event === "PermissionRequest") {
      const decision = hso?.["decision"];
      if (isObject(decision)) {
        if (decision["behavior"] === "deny") {
          if (behavior !== "deny") denyMessages = [];
          behavior = "deny";
          if (nonEmpty(decision["message"])) denyMessages.push(decision["message"]);
          if (decision["interrupt"] === true) interrupt = true;
        } else if (decision["behavior"] === "allow") {
          behavior ??= "allow";
          if (isObject(decision["updatedInput"])) requestInput = decision["updatedInput"];
          if (Array.isArray(decision["updatedPermissions"])) grants.push(...decision["updatedPermissions"]);
        }
      }
    } else if (row.refusal === "elicitation") {
      const action = elicitationOf(output);
      if (action !== undefined) {
        if (answer === undefined || ELICITATION_RANK[action]! > ELICITATION_RANK[answer]!) answer = action;
        if (action === "accept" && isObject(hso?.["content"])) answerContent = hso["content"];
      }
    }
    // decision "block" on a non-permission event that can block (Stop: keep going; PostToolBatch: stop the loop …).
    if (levels === undefined && row.spec.can_block && output["decision"] === "block") {
      blocked = true;
      if (nonEmpty(output["reason"])) blockReasons.push(output["reason"]);
    }

    if (hso === undefined) continue;
    for (const field of row.specific) {
      const rule = FIELD_RULES[field];
      const value = hso[field];
      if (rule === undefined || value === undefined || value === null) continue;
      if (rule === "join") {
        if (typeof value === "string") joined.set(field, [...(joined.get(field) ?? []), value]);
      } else if (rule === "last") {
        specific[field] = value;
      } else if (rule === "first") {
        if (!(field in specific) && nonEmpty(value)) specific[field] = value;
      } else if (rule === "any") {
        if (value === true) specific[field] = true;
      } else if (Array.isArray(value)) {
        const seen = unions.get(field) ?? [];
        for (const item of value) if (typeof item === "string" && !seen.includes(item)) seen.push(item);
        unions.set(field, seen);
      }
    }
  }

  joinInto(merged, "stopReason", stopReasons);
  joinInto(merged, "systemMessage", systemMessages);
  if (terminal !== "") merged["terminalSequence"] = terminal;
  if (blocked) {
    merged["decision"] = "block";
    joinInto(merged, "reason", blockReasons);
  }
  if (permission !== undefined) {
    specific["permissionDecision"] = permission;
    joinInto(specific, "permissionDecisionReason", permissionReasons);
  }
  if (behavior === "deny") {
    const decision: NativeObject = { behavior };
    joinInto(decision, "message", denyMessages);
    if (interrupt) decision["interrupt"] = true;
    specific["decision"] = decision;
  } else if (behavior === "allow") {
    specific["decision"] = { behavior, ...(requestInput !== undefined ? { updatedInput: requestInput } : {}), ...(grants.length > 0 ? { updatedPermissions: grants } : {}) };
  }
  if (answer !== undefined) {
    specific["action"] = answer;
    if (answer === "accept" && answerContent !== undefined) specific["content"] = answerContent;
  }
  // A blocked WorktreeCreate creates no worktree, whatever path another hook gave.
  if (blocked && event === "WorktreeCreate") delete specific["worktreePath"];
  for (const [field, parts] of joined) joinInto(specific, field, parts);
  for (const [field, items] of unions) if (items.length > 0) specific[field] = items;
  if (Object.keys(specific).length > 0) merged["hookSpecificOutput"] = { hookEventName: event, ...orderedLike(specific, row.specific) };
  return merged;
}

/** `fields` in the event's own field order, so the answer reads the same whatever hook set what first. */
function orderedLike(fields: NativeObject, order: readonly string[]): NativeObject {
  const out: NativeObject = {};
  for (const key of order) if (key in fields) out[key] = fields[key];
  return out;
}
