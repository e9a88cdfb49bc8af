// The agent-event members of the Runtime (fire/profiles-api.ts) and runtime.approvals
// (pipeline/approvals.ts approvalsApi): a non-Amplifier answer passes through untouched, the profiles
// members are the firer's, and runtime.approvals hands out no lifecycle member (start, close, request).
import { expect, test } from "vitest";
import { createProfilesApi } from "../../../src/fire/profiles-api.js";
import type { ProfileFirer } from "../../../src/fire/profile.js";
import { approvalsApi, createApprovals } from "../../../src/pipeline/approvals.js";
import { createLocalApprovalStore } from "../../../src/pipeline/approvals-local.js";
import { systemClock } from "../../../src/observe/events.js";

test("fireProfile answers the firer's result when no approval is asked; profiles are the firer's members", async () => {
  const out = { native: { decision: "allow" }, exit_code: 0, result: { profile: "gemini-cli" } };
  const firer = { fire: async () => out, list: () => ["l"], plan: () => ["p"], guard: () => "g", refuse: async () => undefined } as unknown as ProfileFirer;
  const asked: unknown[] = [];
  const api = createProfilesApi({ firer, approvals: { request: async (a: unknown) => (asked.push(a), {}) as never, wait: async () => ({}) as never } });
  expect(await api.fireProfile("gemini-cli", "BeforeTool", { input: {} } as never)).toBe(out);
  expect(asked).toEqual([]);
  expect([api.profiles.list(), api.profiles.plan("x", "y"), api.profiles.guard("x")]).toEqual([["l"], ["p"], "g"]);
});

test("runtime.approvals has the reading and deciding members only", async () => {
  const approvals = createApprovals({ store: createLocalApprovalStore(), clock: systemClock, audit: () => undefined });
  const api = approvalsApi(approvals);
  expect(Object.keys(api).sort()).toEqual(["decide", "get", "list", "on", "wait"]);
  expect(await api.list()).toEqual([]);
  await approvals.close();
});
