// `refusalAnswer` (issue 24): what the runtime answers for an event it refused while a fail-closed
// hook guards it. For every built-in agent profile and every one of its events: the profile's own
// verdict of the answer is "block" wherever the profile can say so, the exit code is 2, the reason is
// in the native answer and on stderr — and it is exactly the answer a failed fail_closed hook yields,
// folded and presented the profile's way. A profile without it is refused at registration.
import { describe, expect, test } from "vitest";
import { listProfiles, registerProfile, VCP_PROFILE_ID } from "../../../src/profiles/index.js";
import type { EventProfile } from "../../../src/profiles/types.js";
import echoProfile from "../../support/echo-profile.js";

const ctx = { strict: false, settings: {} };
const REASON = "vcp-hooks refused this event (PAYLOAD_TOO_LARGE: request body exceeds 1048576 bytes); the fail-closed guard g/h blocks it";

/** What a failed fail_closed hook makes of the event: its failure output, folded and presented. */
function failedClosed(profile: EventProfile, event: string) {
  const output = profile.failureOutput("h", "why", true, event, ctx);
  const aggregated = profile.reduceWithHooks !== undefined
    ? profile.reduceWithHooks([{ hook: "h", output, failed: true, blocking: true }], event, ctx, {})
    : profile.reduce([output], event, ctx);
  return profile.present(aggregated, event, ctx).native;
}

const agents = listProfiles().filter((p) => p.id !== VCP_PROFILE_ID && p.id !== "echo");

describe.each(agents.map((p) => [p.id, p] as const))("%s", (_id, profile) => {
  test.each(Object.keys(profile.events))("%s: blocks with exit code 2, naming the refusal", (event) => {
    const answer = profile.refusalAnswer(REASON, event, ctx);
    expect(answer.exit_code).toBe(2);
    expect(answer.stderr).toBe(REASON);
    if (event === "BeforeToolSelection") {
      // Gemini's merged tool selection carries no text: no tool at all is the block (the reason is on stderr).
      expect(answer.native).toMatchObject({ hookSpecificOutput: { toolConfig: { mode: "NONE", allowedFunctionNames: [] } } });
    } else if (!((profile.id === "cursor" && profile.events[event]!.advisory === true) || ((profile.id === "openhands" || profile.id === "goose") && profile.events[event]!.can_block !== true))) {
      expect(JSON.stringify(answer.native)).toContain("PAYLOAD_TOO_LARGE");
    }
    if (profile.id === "repo-yaml") {
      // The orchestrator stops on the error on every event (as the adapter's `--on-error block`); only
      // before an ability call is that a block in repo-yaml's own terms.
      expect(answer.native).toMatchObject({ error: "blocked_by_policy" });
      if (event === "PreAbilityCall") expect(profile.verdictOf(answer.native, event)).toBe("block");
      return;
    }
    // (BeforeToolSelection cannot block: taking every tool away is its most restrictive answer. Codex
    // reads nothing but a systemMessage on Interrupt and SessionEnd: there the refusal is only said.)
    // Cursor's fire-and-forget events and OpenHands' non-blocking ones read nothing a refusal could say;
    // Cursor's context events only take context.
    const saysNothing = (profile.id === "cursor" && profile.events[event]!.advisory === true) || ((profile.id === "openhands" || profile.id === "goose") && profile.events[event]!.can_block !== true);
    const unrefusable =
      event === "BeforeToolSelection" ||
      (profile.id === "codex" && (event === "Interrupt" || event === "SessionEnd")) ||
      (profile.id === "cursor" && profile.events[event]!.can_block !== true);
    if (saysNothing) {
      expect(answer.native).toEqual({});
      return;
    }
    if (!unrefusable) expect(profile.verdictOf(answer.native, event)).toBe("block");
    // The shape of a failed fail_closed hook's answer, with this reason.
    expect(Object.keys(answer.native).sort()).toEqual(Object.keys(failedClosed(profile, event)).sort());
  });
});

test("a profile without refusalAnswer is refused at registration", () => {
  const { refusalAnswer: _dropped, ...without } = echoProfile;
  expect(() => registerProfile({ ...without, id: "no-refusal" } as EventProfile)).toThrow(/refusalAnswer/);
});
