// Who decides an approval, and what "allow always" remembers (issue 24, the second review), with the
// local coordinator and the shared one on a real redis-server (node:vm test backend):
// - the client whose agent asked may read its approval but never answer it — not even "allow always";
//   an operator or an `approver` (for the clients it `approves`) decides;
// - "allow always" keys on the digest of the full prompt: a different command whose first 4,096
//   characters equal the granted one's is asked again, and the approver can read the full text.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash } from "node:crypto";
import { describe, expect, test } from "vitest";
import { createRuntime, type Approval, type Runtime, type RuntimeOptions } from "../../../src/index.js";
import { profileBundle } from "../../support/bundles.js";
import { createVmBackend } from "../../support/vm-backend.js";
import { useRedisServer } from "../../support/redis-server.js";

const alice = { id: "alice", role: "client" } as const;
const bob = { id: "bob", role: "client" } as const;
const ops = { id: "ops", role: "operator" } as const;
const aliceApprover = { id: "alice-human", role: "approver", approves: ["alice"] } as const;
const bobApprover = { id: "bob-human", role: "approver", approves: ["bob"] } as const;

const ASKER = profileBundle("asker", "amplifier", [{ name: "shell_guard", event: "tool:pre" }], {
  shell_guard: `(input) => ({
    action: "ask_user",
    approval_prompt: "Run " + input.data.command + "?",
    approval_options: ["Allow once", "Allow always", "Deny"],
    approval_timeout: 600,
    approval_default: "deny"
  })`,
});

/** A command whose first 4,096 characters are harmless padding; only the tail differs. */
const PADDING = `echo ${"a".repeat(4200)}`;
const SAFE = `${PADDING} && ls`;
const EVIL = `${PADDING} && rm -rf ~`;

const redis = useRedisServer<Runtime>();
const { runtimes, dirs } = redis;

async function start(kind: "local" | "redis"): Promise<Runtime> {
  const dataDir = mkdtempSync(join(tmpdir(), "vcp-deciders-"));
  dirs.push(dataDir);
  const store: RuntimeOptions["store"] = kind === "local" ? { kind: "local" } : { kind: "redis", url: redis.url, prefix: `dec${dirs.length}`, heartbeatMs: 200, reconcileMs: 500, commandTimeoutMs: 2000, connectTimeoutMs: 5000, maxBackoffMs: 300 };
  const rt = await createRuntime({ backend: createVmBackend(), dataDir, requireSignatures: false, profiles: { amplifier: {} }, store, sharedSessions: { approvalPollMs: 100 } });
  runtimes.push(rt);
  await rt.bundles.install(ASKER);
  return rt;
}

const ask = async (rt: Runtime, session: string, command: string, principal: typeof alice | typeof bob = alice) => {
  const out = await rt.fireProfile("amplifier", "tool:pre", { input: { event: "tool:pre", data: { session_id: session, tool_name: "bash", command } }, principal });
  return out.native.approval as Approval;
};

describe.each(["local", "redis"] as const)("approvals with the %s store", (kind) => {
  test("the client that asked cannot answer its own approval, not even 'allow always'; its approver and operators can; another client's approver sees nothing", async () => {
    const rt = await start(kind);
    const asked = await ask(rt, "s1", "rm -rf build");
    expect(asked.state).toBe("pending");
    // The client still reads its approval (its agent waits on it).
    await expect(rt.approvals.get(asked.id, { principal: alice })).resolves.toMatchObject({ state: "pending" });
    for (const decision of ["Allow always", "allow", "Deny"]) {
      await expect(rt.approvals.decide(asked.id, decision, { principal: alice })).rejects.toMatchObject({ code: "FORBIDDEN" });
    }
    await expect(rt.approvals.get(asked.id, { principal: ops })).resolves.toMatchObject({ state: "pending" });
    await expect(rt.approvals.get(asked.id, { principal: bob })).rejects.toMatchObject({ code: "APPROVAL_NOT_FOUND" });

    // An approver for bob: alice's approval does not exist for it.
    await expect(rt.approvals.get(asked.id, { principal: bobApprover })).rejects.toMatchObject({ code: "APPROVAL_NOT_FOUND" });
    await expect(rt.approvals.decide(asked.id, "allow", { principal: bobApprover })).rejects.toMatchObject({ code: "APPROVAL_NOT_FOUND" });
    expect(await rt.approvals.list({ principal: bobApprover })).toEqual([]);

    expect((await rt.approvals.list({ principal: aliceApprover })).map((a) => a.id)).toEqual([asked.id]);
    await expect(rt.approvals.decide(asked.id, "Allow once", { principal: aliceApprover })).resolves.toMatchObject({ state: "granted", decided_by: "alice-human" });

    const again = await ask(rt, "s1", "rm -rf dist");
    await expect(rt.approvals.decide(again.id, "deny", { principal: ops })).resolves.toMatchObject({ state: "denied", decided_by: "ops" });
  }, 60_000);

  test("'allow always' keys on the full prompt's digest: a command equal to the granted one for 4,096 characters is asked again; the full text is readable", async () => {
    const rt = await start(kind);
    const first = await ask(rt, "s2", SAFE);
    await rt.approvals.decide(first.id, "Allow always", { principal: ops });
    const evil = await ask(rt, "s2", EVIL);
    expect(evil.state).toBe("pending");
    const same = await ask(rt, "s2", SAFE);
    expect(same).toMatchObject({ state: "granted", decided_by: "allow_always" });

    // What the approver is shown says it is clipped, and the full text is one field away.
    const fullPrompt = `Run ${EVIL}?`;
    expect(evil).toMatchObject({ prompt_truncated: true, prompt_chars: fullPrompt.length, prompt_sha256: createHash("sha256").update(fullPrompt).digest("hex") });
    expect(evil.prompt.length).toBeLessThan(fullPrompt.length);
    expect(evil.prompt_sha256).not.toBe(first.prompt_sha256);
    const listed = (await rt.approvals.list({ principal: aliceApprover, state: "pending" })).find((a) => a.id === evil.id);
    expect(listed).toMatchObject({ prompt_truncated: true, prompt_sha256: evil.prompt_sha256 });
    const full = await rt.approvals.get(evil.id, { principal: aliceApprover, full: true });
    expect(full.prompt).toBe(fullPrompt);
    expect(full.prompt_truncated).toBe(false);
    await expect(rt.approvals.decide(evil.id, "Deny", { principal: aliceApprover })).resolves.toMatchObject({ state: "denied" });
  }, 60_000);
});
