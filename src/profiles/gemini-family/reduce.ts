/**
 * The merge rules of Gemini CLI and LLxprt Code (PROFILES §3.2), applied to every chain — even to a
 * single output, as upstream does, so defaults such as `decision: "allow"` appear consistently.
 *
 *   BeforeTool AfterTool BeforeAgent AfterAgent SessionStart ─► OR-decision   (any block wins)
 *   BeforeModel AfterModel                                 ─► field replacement (later wins; strict: block wins)
 *   BeforeToolSelection                                    ─► mode NONE > ANY > AUTO; names: union (gemini)
 *                                                             or intersection (llxprt, and gemini strict)
 *   Notification SessionEnd PreCompress                    ─► shallow merge
 *
 * LLxprt differs for two fields: `stopReason` from the first `continue:false`, `systemMessage` the
 * first non-empty one (OR-decision and shallow merges).
 *
 * Where PROFILES §3.2 and the upstream code read for `upstream.commit` disagree, PROFILES wins (it was
 * researched from later upstream code): Gemini's aggregator folds an unblocked `ask` to `allow` (kept
 * here); LLxprt's hookAggregator.ts at 1f48986 still takes the union of tool lists and does not merge
 * hookSpecificOutput in the OR merge (intersection and shallow merge here).
 *
 * @module
 */
import { isObject, specificOf } from "../common/native.js";
import type { NativeObject, ProfileContext } from "../types.js";

export type GeminiVariant = "gemini-cli" | "llxprt";

/** LLxprt's stop reason when the first `continue:false` output gives none. */
export const LLXPRT_STOP_FALLBACK = "Execution stopped by hook";

const OR_EVENTS = new Set(["BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "SessionStart"]);
const FIELD_REPLACEMENT_EVENTS = new Set(["BeforeModel", "AfterModel"]);

export function isBlockingDecision(decision: unknown): boolean {
  return decision === "block" || decision === "deny";
}

/**
 * LLxprt reads `hookSpecificOutput.permissionDecision` on BeforeTool, but only when one hook ran
 * (upstream checks it after the OR merge, which reads only top-level `decision`). Strict reads it always.
 */
function permissionBlocks(output: NativeObject): boolean {
  return isBlockingDecision(specificOf(output)?.["permissionDecision"]);
}

function mergeWithOrDecision(outputs: readonly NativeObject[], variant: GeminiVariant, event: string, ctx: ProfileContext): NativeObject {
  const merged: NativeObject = { continue: true, suppressOutput: false };
  const stopReasons: string[] = [];
  const reasons: string[] = [];
  const systemMessages: string[] = [];
  const contexts: string[] = [];
  let blocked = false;
  let stopped = false;
  let asked = false;
  let specific: NativeObject | undefined;
  const honourPermission = variant === "llxprt" && event === "BeforeTool" && (outputs.length === 1 || ctx.strict);

  for (const output of outputs) {
    if (output["continue"] === false) {
      merged["continue"] = false;
      const stopReason = output["stopReason"];
      if (variant === "llxprt") {
        if (!stopped) stopReasons.push(typeof stopReason === "string" && stopReason.trim() !== "" ? stopReason.trim() : LLXPRT_STOP_FALLBACK);
      } else if (typeof stopReason === "string" && stopReason !== "") {
        stopReasons.push(stopReason);
      }
      stopped = true;
    }
    const hso = specificOf(output);
    if (isBlockingDecision(output["decision"])) {
      blocked = true;
      merged["decision"] = output["decision"];
    } else if (honourPermission && permissionBlocks(output)) {
      blocked = true;
      merged["decision"] = "deny";
      const why = hso?.["permissionDecisionReason"];
      if (typeof why === "string" && why !== "" && typeof output["reason"] !== "string") reasons.push(why);
    }
    if (output["decision"] === "ask") asked = true;
    if (typeof output["reason"] === "string" && output["reason"] !== "") reasons.push(output["reason"]);
    const systemMessage = output["systemMessage"];
    if (typeof systemMessage === "string" && systemMessage !== "") {
      if (variant === "gemini-cli" || systemMessages.length === 0) systemMessages.push(systemMessage);
    }
    if (output["suppressOutput"] === true) merged["suppressOutput"] = true;
    if (hso !== undefined) {
      const { clearContext, ...rest } = hso;
      specific = { ...specific, ...rest };
      if (clearContext === true) specific["clearContext"] = true; // any true wins; never reset
      if (typeof hso["additionalContext"] === "string") contexts.push(hso["additionalContext"]);
    }
  }

  if (!blocked && !stopped) merged["decision"] = variant === "gemini-cli" && asked ? "ask" : "allow";
  if (stopReasons.length > 0) merged["stopReason"] = stopReasons.join("\n");
  if (reasons.length > 0) merged["reason"] = reasons.join("\n");
  if (systemMessages.length > 0) merged["systemMessage"] = systemMessages.join("\n");
  if (contexts.length > 0) specific = { ...specific, additionalContext: contexts.join("\n") };
  if (specific !== undefined) merged["hookSpecificOutput"] = specific;
  return merged;
}

function mergeWithFieldReplacement(outputs: readonly NativeObject[], ctx: ProfileContext): NativeObject {
  let merged: NativeObject = {};
  let lastBlock: NativeObject | undefined;
  let firstStop: NativeObject | undefined;
  for (const output of outputs) {
    merged = { ...merged, ...output, hookSpecificOutput: { ...specificOf(merged), ...specificOf(output) } };
    if (isBlockingDecision(output["decision"])) lastBlock = output;
    if (output["continue"] === false) firstStop ??= output;
  }
  // strict: a block (or a stop) is never undone by a later hook's allow (PROFILES §3.2).
  if (ctx.strict && lastBlock !== undefined) {
    merged["decision"] = lastBlock["decision"];
    if (typeof lastBlock["reason"] === "string") merged["reason"] = lastBlock["reason"];
  }
  if (ctx.strict && firstStop !== undefined) {
    merged["continue"] = false;
    if (typeof firstStop["stopReason"] === "string") merged["stopReason"] = firstStop["stopReason"];
  }
  return merged;
}

function mergeToolSelection(outputs: readonly NativeObject[], variant: GeminiVariant, ctx: ProfileContext): NativeObject {
  const intersect = variant === "llxprt" || ctx.strict;
  let none = false;
  let any = false;
  const union = new Set<string>();
  let intersection: Set<string> | undefined; // undefined: no explicit list yet (unrestricted)
  for (const output of outputs) {
    const toolConfig = specificOf(output)?.["toolConfig"];
    if (!isObject(toolConfig)) continue;
    if (toolConfig["mode"] === "NONE") none = true;
    else if (toolConfig["mode"] === "ANY") any = true;
    const names = toolConfig["allowedFunctionNames"];
    if (!Array.isArray(names)) continue;
    const list = names.filter((n): n is string => typeof n === "string");
    for (const name of list) union.add(name);
    intersection = intersection === undefined ? new Set(list) : new Set(list.filter((n) => intersection!.has(n)));
  }
  const mode = none ? "NONE" : any ? "ANY" : "AUTO";
  const config: NativeObject = { mode };
  if (none) config["allowedFunctionNames"] = [];
  else if (!intersect) config["allowedFunctionNames"] = [...union].sort();
  else if (intersection !== undefined) config["allowedFunctionNames"] = [...intersection].sort();
  return { hookSpecificOutput: { hookEventName: "BeforeToolSelection", toolConfig: config } };
}

function mergeSimple(outputs: readonly NativeObject[], variant: GeminiVariant): NativeObject {
  let merged: NativeObject = {};
  let firstMessage: string | undefined;
  let firstStop: string | undefined;
  for (const output of outputs) {
    merged = { ...merged, ...output };
    const message = output["systemMessage"];
    if (firstMessage === undefined && typeof message === "string" && message !== "") firstMessage = message;
    if (firstStop === undefined && output["continue"] === false) {
      const stopReason = output["stopReason"];
      firstStop = typeof stopReason === "string" && stopReason.trim() !== "" ? stopReason.trim() : LLXPRT_STOP_FALLBACK;
    }
  }
  if (variant === "llxprt") {
    if (firstMessage !== undefined) merged["systemMessage"] = firstMessage;
    if (firstStop !== undefined) {
      merged["stopReason"] = firstStop;
      merged["continue"] = false;
    }
  }
  return merged;
}

/** Fold outputs (plan order) by the event's rule; `[]` is the neutral answer `{}` (no hook ran). */
export function reduceGemini(outputs: readonly NativeObject[], event: string, variant: GeminiVariant, ctx: ProfileContext): NativeObject {
  if (outputs.length === 0) return {};
  if (OR_EVENTS.has(event)) return mergeWithOrDecision(outputs, variant, event, ctx);
  if (FIELD_REPLACEMENT_EVENTS.has(event)) return mergeWithFieldReplacement(outputs, ctx);
  if (event === "BeforeToolSelection") return mergeToolSelection(outputs, variant, ctx);
  return mergeSimple(outputs, variant);
}
