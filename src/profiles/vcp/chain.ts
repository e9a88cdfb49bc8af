/**
 * The parts of the `vcp@1` descriptor the executor (chain/execute.ts) asks when it runs a VCP chain:
 * the composed HookInput (spec §4.2) and how a hook's result changes it (modify, spec §5.1.3; chain
 * state, §5.6; the integrity check of a modified constitution, DESIGN §4.5), how a result is decoded
 * (compiled schema, §4.3), what an observer may not do (§8.3) and why a periodic abort is none (§3.6).
 */
import type { ChainRequest, ConstitutionProvenance, HookExecution } from "../../model/chain.js";
import { parseGuestJson, parseHookResult } from "../../model/result-json.js";
import type { Constitution } from "../../model/constitution.js";
import type { ResolvedHook } from "../../model/hook.js";
import type { InputSummary, VcpContext } from "../../model/input.js";
import { jsonTextExceeds } from "../../model/json-bounds.js";
import type { ChainIntegrity, ComposedInput, Decoded, NativeObject } from "../types.js";

/**
 * The chain's evolving HookInput. Each part is serialized to JSON once and again only after a `modify`
 * replaced it, so an N-hook chain without modifications stringifies the input once, not N times; the
 * assembled HookInput string is kept too, until a `modify` or a chain_state change.
 */
class HookInputState implements ComposedInput {
  context: VcpContext;
  constitution: Constitution;
  private stateJson = "{}";
  private contextJson: string | undefined;
  private constitutionJson: string | undefined;
  private inputJson: string | undefined;
  private readonly fixedJson: string;
  private chainStateCache: { json: string; value: Record<string, unknown> } | undefined;

  constructor(
    private readonly request: ChainRequest,
    private readonly type: string,
  ) {
    this.context = request.context;
    this.constitution = request.constitution;
    this.fixedJson = `,"event":${JSON.stringify(request.event)},"session":${JSON.stringify(request.session)}`;
  }

  json(): string {
    if (this.inputJson !== undefined) return this.inputJson;
    this.contextJson ??= JSON.stringify(this.context);
    this.constitutionJson ??= JSON.stringify(this.constitution);
    this.inputJson = `{"context":${this.contextJson},"constitution":${this.constitutionJson}${this.fixedJson},"chain_state":${this.stateJson}}`;
    return this.inputJson;
  }

  /** HookInput-shaped view for predicates; chain_state is parsed only if a predicate reads it. */
  conditionView(): object {
    const owner = this;
    return {
      context: this.context,
      constitution: this.constitution,
      event: this.request.event,
      session: this.request.session,
      get chain_state(): Record<string, unknown> {
        return owner.chainState();
      },
    };
  }

  summary(inputBytes: number): InputSummary {
    return {
      session_id: this.request.session.id,
      constitution_id: this.constitution.id,
      context_keys: Object.keys(this.context).length,
      input_bytes: inputBytes,
    };
  }

  adoptChainState(chainStateJson: string, jsonDepth: number): string | undefined {
    if (jsonTextExceeds(chainStateJson, jsonDepth)) return `chain_state nests deeper than ${jsonDepth} levels (limits.json_depth)`;
    if (chainStateJson === this.stateJson) return undefined;
    if (chainStateJson.length < 2 || chainStateJson[0] !== "{") return "chain_state must stay a JSON object";
    this.stateJson = chainStateJson;
    this.inputJson = undefined;
    return undefined;
  }

  apply(output: NativeObject, hook: ResolvedHook, execution: HookExecution, integrity: ChainIntegrity): string | undefined {
    const modifiedConstitution = output["modified_constitution"] as Constitution | null | undefined;
    const modifiedContext = output["modified_context"] as VcpContext | null | undefined;
    // The constitution is checked first: a rejected modification is rejected whole, so a hook cannot
    // land its context change while its constitution change is refused.
    let nextConstitution: Constitution | undefined;
    let provenance: ConstitutionProvenance | undefined;
    if (modifiedConstitution != null) {
      const verdict = integrity.check
        ? integrity.check(this.constitution, modifiedConstitution, hook, constitutionsToKeep(this.type, this.request.event, modifiedConstitution))
        : { ok: true as const, constitution: modifiedConstitution };
      if (!verdict.ok) return verdict.reason;
      nextConstitution = verdict.constitution;
      provenance = verdict.provenance;
    }
    const before = integrity.diff ? { context: this.context, constitution: this.constitution } : undefined;
    if (nextConstitution !== undefined) {
      this.constitution = nextConstitution;
      this.constitutionJson = undefined;
      this.inputJson = undefined;
      execution.modified_constitution = true;
      if (provenance !== undefined) execution.provenance = provenance;
    }
    if (modifiedContext != null) {
      this.context = modifiedContext;
      this.contextJson = undefined;
      this.inputJson = undefined;
      execution.modified_context = true;
    }
    if (integrity.diff && before) execution.modification = integrity.diff(before, { context: this.context, constitution: this.constitution });
    return undefined;
  }

  private chainState(): Record<string, unknown> {
    if (this.chainStateCache?.json !== this.stateJson) {
      this.chainStateCache = { json: this.stateJson, value: parseGuestJson(this.stateJson) as Record<string, unknown> };
    }
    return this.chainStateCache.value;
  }
}

/**
 * Constitutions whose safety-critical rules a modified constitution must keep besides those of the
 * one the hook was given (spec §8.2.4, integrity/check.ts `keepsSafetyRulesOf`):
 * - `on_conflict`: every constitution being composed (`event.constitutions`), since the hook is handed
 *   only the composition base, which leaves the conflicting rules out;
 * - `post_select`: the candidate the replacement names by id, so "selecting" a candidate cannot
 *   strip that candidate's safety rules. (Candidates are alternatives: a replacement need not keep
 *   the rules of candidates it does not name.)
 */
function constitutionsToKeep(type: string, event: ChainRequest["event"], proposed: Constitution): readonly Constitution[] {
  if (type === "on_conflict") return constitutionList((event as { constitutions?: unknown }).constitutions);
  if (type === "post_select") return constitutionList((event as { candidates?: unknown }).candidates).filter((c) => c.id === proposed.id);
  return [];
}

/** The event's constitutions (validated at the boundary, assertChainInput); anything else is none. */
function constitutionList(value: unknown): readonly Constitution[] {
  return Array.isArray(value) ? (value as Constitution[]) : [];
}

/** `composeInput` of the vcp@1 descriptor. */
export function composeHookInput(request: ChainRequest, type: string): ComposedInput {
  return new HookInputState(request, type);
}

/** `decodeResult` of the vcp@1 descriptor: the compiled HookResult schema (model/result-json.ts). */
export function decodeHookResult(resultJson: string, _type: string, jsonDepth: number): Decoded<NativeObject> {
  // SECURITY: host backstop of the isolate's depth bound, before the text is parsed: what this
  // worker accepts must survive the structured clone and the IPC copy that carry it home.
  const parsed = parseHookResult(resultJson, jsonDepth);
  return parsed.ok ? { ok: true, value: parsed.result as unknown as NativeObject } : { ok: false, error: parsed.message };
}

/** `observerDenial` of the vcp@1 descriptor: a session-trust hook observes and annotates; it cannot modify or abort (spec §8.3). */
export function hookResultDenial(output: NativeObject): string | undefined {
  const status = output["status"];
  return status !== "continue" ? `a session-trust hook cannot ${String(status)} (spec §8.3)` : undefined;
}
