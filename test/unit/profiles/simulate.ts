/**
 * Test helper: what the profile framework does with a plan, simulated in-process and pure — matcher,
 * priority order (descending, registration order on ties), dedup of identical action + matcher,
 * sequential vs parallel input, decode / failureOutput / chainInput, then reduce and
 * present. Used by the conformance-case runner and by the example-policy tests. A thrown Error's
 * message is the failure's `why`, as the sandbox reports it.
 */
import type { EventProfile, NativeObject, ProfileContext } from "../../../src/profiles/types.js";

export interface SimHook {
  readonly name: string;
  readonly matcher?: string;
  readonly sequential?: boolean;
  readonly priority?: number;
  readonly fail_closed?: boolean;
  readonly trust?: "system" | "deployment" | "session";
  /** Hooks sharing the action (default: the hook name) and the matcher are one definition. */
  readonly action_name?: string;
  readonly run: (input: NativeObject) => unknown;
}

export interface Simulated {
  readonly native: NativeObject;
  readonly exit_code: number;
  readonly stderr?: string;
  readonly ran: string[];
  readonly outcomes: Record<string, string>;
}

export function simulate(profile: EventProfile, event: string, rawInput: unknown, hooks: readonly SimHook[], strict = false): Simulated {
  const ctx: ProfileContext = { strict, settings: {} };
  const valid = profile.validateInput(rawInput, event);
  if (!valid.ok) throw new Error(`input refused: ${valid.error}`);
  const input = rawInput as NativeObject;

  const ordered = hooks.map((h, i) => ({ h, i })).sort((a, b) => (b.h.priority ?? 50) - (a.h.priority ?? 50) || a.i - b.i).map((x) => x.h);
  const outcomes: Record<string, string> = {};
  const planned: SimHook[] = [];
  const seen = new Set<string>();
  for (const hook of ordered) {
    if (!profile.compileMatcher(hook.matcher, event)(input)) {
      outcomes[hook.name] = "skipped_matcher";
      continue;
    }
    const key = `${hook.action_name ?? hook.name}\u0000${hook.matcher ?? ""}`;
    if (seen.has(key)) {
      outcomes[hook.name] = "deduplicated";
      continue;
    }
    seen.add(key);
    planned.push(hook);
  }
  const sequential = profile.execution === "sequential" || (profile.execution === "per_definition" && planned.some((h) => h.sequential === true));

  const ran: string[] = [];
  const outputs: NativeObject[] = [];
  let current = input;
  for (const hook of planned) {
    ran.push(hook.name);
    let raw: unknown;
    let why: string | undefined;
    try {
      raw = hook.run(structuredClone(sequential ? current : input));
    } catch (err) {
      why = err instanceof Error ? err.message : String(err);
    }
    let output: NativeObject;
    let ok = false;
    if (why !== undefined) {
      outcomes[hook.name] = "error";
      output = profile.failureOutput(hook.name, why, hook.fail_closed ?? false, event, ctx);
    } else {
      const decoded = profile.decode(raw, event, ctx);
      if (!decoded.ok) {
        outcomes[hook.name] = "invalid_result";
        output = profile.failureOutput(hook.name, decoded.error, hook.fail_closed ?? false, event, ctx);
      } else {
        ok = true;
        outcomes[hook.name] = "ok";
        output = decoded.value;
        // As the executor: an output that does not fit its input (VS Code: updatedInput vs the tool's schema).
        const misfit = hook.trust === "session" ? undefined : profile.checkOutput?.(output, sequential ? current : input, event, hook.name);
        if (misfit !== undefined) {
          outcomes[hook.name] = "invalid_result";
          if (hook.fail_closed === true) {
            ok = false;
            output = profile.failureOutput(hook.name, misfit.error, true, event, ctx);
          } else output = misfit.kept;
        }
      }
    }
    if (hook.trust === "session") {
      // As the executor: an observer's output (or failure) is withheld; what it said makes it capability_denied (spec §8.3).
      if (ok && profile.answerFields(output, event).length > 0) outcomes[hook.name] = "capability_denied";
      continue;
    }
    outputs.push(output);
    // As the executor: an output after which no later hook may run (OpenHands' first block) ends the chain.
    if (profile.stopsChain?.(output, event, ctx) === true) break;
    if (sequential && ok && profile.chainInput) current = profile.chainInput(current, output, event, ctx);
  }
  const answer = profile.present(profile.reduce(outputs, event, ctx), event, ctx);
  return { ...answer, ran, outcomes };
}
