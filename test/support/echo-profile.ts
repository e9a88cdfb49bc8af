/**
 * `echo@1`: a toy event profile for testing the profile framework (not an agent's hook system).
 * Written as plain erasable TypeScript with type-only imports from src/, so a sandbox worker running
 * the compiled runtime can load this very file (Node strips the types) through
 * `RuntimeOptions.profileModules`, while tests import it through vitest.
 *
 * Events: `Check` (pre, can block, matcher on `tool`, sequential chaining merges `input`), `Notice`
 * (advisory). Per-definition execution (parallel unless a matching definition is sequential), priority
 * descending, OR-merge of `decision` (any block wins), `reason`/`message` joined with "\n", `input`
 * shallow-merged in plan order (later wins), `stop: true` ends the chain. Failures fail open with a
 * `message: "Warning: <hook>: <why>"`; `fail_closed` blocks; `strict` makes every failure block.
 */
import { RE2JS } from "re2js";
import type { Decoded, EventProfile, NativeObject, ProfileContext } from "../../src/profiles/types.js";

const OUTPUT_KEYS = new Set(["decision", "reason", "message", "input", "stop"]);

function isObject(value: unknown): value is NativeObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function decodeOutput(raw: unknown): Decoded<NativeObject> {
  if (raw === null || raw === undefined) return { ok: true, value: {} };
  if (!isObject(raw)) return { ok: false, error: "output must be a JSON object" };
  for (const key of Object.keys(raw)) if (!OUTPUT_KEYS.has(key)) return { ok: false, error: `${key}: unknown output field` };
  if (raw["decision"] !== undefined && raw["decision"] !== "allow" && raw["decision"] !== "block") return { ok: false, error: "decision: must be allow or block" };
  for (const key of ["reason", "message"]) if (raw[key] !== undefined && typeof raw[key] !== "string") return { ok: false, error: `${key}: must be a string` };
  if (raw["input"] !== undefined && !isObject(raw["input"])) return { ok: false, error: "input: must be an object" };
  if (raw["stop"] !== undefined && typeof raw["stop"] !== "boolean") return { ok: false, error: "stop: must be a boolean" };
  return { ok: true, value: raw };
}

const echoProfile: EventProfile = {
  id: "echo",
  version: "1",
  upstream: { repo: "test/support/echo-profile.ts", commit: "0000000" },
  events: {
    Check: { matcher: "tool", pre: true, can_block: true, modifiable: ["input"] },
    Notice: { pre: false, can_block: false, advisory: true },
  },
  ordering: "priority_desc",
  execution: "per_definition",
  timeouts: { default_ms: 1000, max_ms: 30_000, config_unit: "ms" },
  failure: { default: "open", term_grace_ms: 0 },
  strictFixes: ["every failed hook blocks"],
  sessionIdOf(input) {
    return typeof input["session_id"] === "string" ? input["session_id"] : undefined;
  },
  validateInput(input, event) {
    if (!isObject(input)) return { ok: false, error: "(root): must be a JSON object" };
    if (input["session_id"] !== undefined && typeof input["session_id"] !== "string") return { ok: false, error: "session_id: must be a string" };
    if (event === "Check" && typeof input["tool"] !== "string") return { ok: false, error: "tool: must be a string" };
    return { ok: true, value: input };
  },
  compileMatcher(pattern, event) {
    const all = Object.assign(() => true, { cost: 0 });
    if (pattern === undefined || pattern === "" || pattern === "*") return all;
    const field = echoProfile.events[event]?.matcher;
    if (field === undefined) return all;
    // Throws (RE2JSSyntaxException) for a pattern RE2 refuses: a build error, never an exact match.
    const re = RE2JS.compile(pattern);
    // Test inputs are small: the cost is nominal (one short field), and the scan is not metered.
    return Object.assign((input: Record<string, unknown>) => typeof input[field] === "string" && re.matcher(input[field] as string).find(), { cost: 1024 * re.programSize() });
  },
  decode(raw) {
    return decodeOutput(raw);
  },
  failureOutput(hook, why, failClosed, _event, ctx: ProfileContext) {
    return failClosed || ctx.strict ? { decision: "block", reason: `fail-closed: ${hook}: ${why}` } : { message: `Warning: ${hook}: ${why}` };
  },
  answerFields(output) {
    return Object.keys(output).filter((k) => output[k] !== undefined && !(k === "decision" && output[k] === "allow"));
  },
  verdictOf(output) {
    return output["decision"] === "block" ? "block" : output["input"] !== undefined ? "modify" : "allow";
  },
  chainInput(input, output) {
    return isObject(output["input"]) ? { ...input, ...output["input"] } : input;
  },
  stopsChain(output) {
    return output["stop"] === true;
  },
  reduce(outputs) {
    const agg: NativeObject = {};
    const reasons: string[] = [];
    const messages: string[] = [];
    let input: NativeObject | undefined;
    for (const o of outputs) {
      if (o["decision"] === "block") agg["decision"] = "block";
      else if (o["decision"] === "allow" && agg["decision"] === undefined) agg["decision"] = "allow";
      if (typeof o["reason"] === "string") reasons.push(o["reason"]);
      if (typeof o["message"] === "string") messages.push(o["message"]);
      if (isObject(o["input"])) input = { ...input, ...o["input"] };
    }
    if (reasons.length > 0) agg["reason"] = reasons.join("\n");
    if (messages.length > 0) agg["message"] = messages.join("\n");
    if (input !== undefined) agg["input"] = input;
    return agg;
  },
  present(aggregated) {
    const blocked = aggregated["decision"] === "block";
    return {
      native: aggregated,
      exit_code: blocked ? 2 : 0,
      ...(blocked && typeof aggregated["reason"] === "string" ? { stderr: aggregated["reason"] } : {}),
    };
  },
  refusalAnswer(reason) {
    return { native: { decision: "block", reason }, exit_code: 2, stderr: reason };
  },
};

export default echoProfile;
