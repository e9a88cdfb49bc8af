/**
 * Client A's agent answers its own Amplifier approvals (issue 24, the second review): it "allows
 * always" the ask it raised, has a harmless command granted once by its human and then sends a
 * different command whose first 4,096 characters are the same, and opens event streams without end.
 * A's token may read its approvals but never decide them (only A's approver or an operator does);
 * "allow always" holds for the same full prompt only, and the approver can read all of it; a token
 * holds at most `limits.streams_per_principal` streams (429 STREAM_LIMIT past them).
 */
import { Checks, type Scenario } from "../scenario.js";
import { TENANT_TOKENS, send, startTenantServer, type Reply } from "../http-tenants.js";
import type { BundleSource } from "../../../src/index.js";

const ASKER: BundleSource = {
  manifest: {
    bundle: "amp-shell-guard",
    version: "1.0.0",
    trust: "deployment",
    profile: "amplifier",
    hooks: [{ name: "confirm_shell", event: "tool:pre", action: "confirm", priority: 50, timeout_ms: 2000 }],
  } as unknown as BundleSource["manifest"],
  code: `var __vcp_bundle = {
  confirm: function (input) {
    return { action: "ask_user", approval_prompt: "Run " + input.data.command + "?", approval_options: ["Allow once", "Allow always", "Deny"], approval_timeout: 600 };
  }
};`,
};

/** Harmless padding past the 4,096 characters an approval shows; only the tails differ. */
const PADDING = `echo ${"a".repeat(4200)}`;
const SAFE = `${PADDING} && ls`;
const EVIL = `${PADDING} && rm -rf ~`;
const STREAMS = 4;

interface Shown {
  id?: string;
  state?: string;
  decided_by?: string;
  prompt?: string;
  prompt_truncated?: boolean;
}

const approvalOf = (reply: Reply): Shown => ((reply.body as { native?: { approval?: Shown } }).native?.approval ?? {});

export const scenario: Scenario = {
  id: "approvals-self-approval",
  category: "profile-boundary",
  title: "client A's agent answers its own approvals ('allow always'), reuses a grant for a command equal to it for 4,096 characters, and opens streams without end",
  expected: "A's decisions are 403 and change nothing; A's approver decides; 'allow always' grants only the same full prompt, whose whole text the approver can read; A's stream past limits.streams_per_principal is 429 STREAM_LIMIT, B's still opens",
  async run() {
    const checks = new Checks();
    const t = await startTenantServer({ bundles: [ASKER], streams: { perPrincipal: STREAMS } });
    const observed: string[] = [];
    const streams: AbortController[] = [];
    let servedAfter = false;
    try {
      const ask = (command: string) => send(t.url, "POST", "/v1/profiles/amplifier/events/tool:pre", TENANT_TOKENS.a, { data: { session_id: "amp-self", command } });
      const first = approvalOf(await ask(SAFE));
      if (typeof first.id !== "string") throw new Error("A's ask did not create an approval");
      const self = await send(t.url, "POST", `/v1/approvals/${first.id}`, TENANT_TOKENS.a, { decision: "Allow always" });
      observed.push(`A self-decide ${self.status}`);
      checks.check(self.status === 403 && (self.body as { error?: { code?: string } }).error?.code === "FORBIDDEN", `A answered its own approval: ${self.status} ${JSON.stringify(self.body).slice(0, 160)}`);
      const still = await send(t.url, "GET", `/v1/approvals/${first.id}`, TENANT_TOKENS.a);
      checks.check((still.body as Shown).state === "pending", `A's own decision changed its approval: ${JSON.stringify(still.body).slice(0, 160)}`);

      const human = await send(t.url, "POST", `/v1/approvals/${first.id}`, TENANT_TOKENS.approverA, { decision: "Allow always" });
      checks.check(human.status === 200 && (human.body as Shown).state === "granted", `A's approver could not decide: ${human.status}`);

      const evil = approvalOf(await ask(EVIL));
      observed.push(`equal-for-4096 command ${evil.state ?? "?"}${evil.decided_by !== undefined ? ` by ${evil.decided_by}` : ""}`);
      checks.check(evil.state === "pending", `a different command granted by 'allow always' of a clipped prompt: ${JSON.stringify(evil).slice(0, 160)}`);
      checks.check(evil.prompt_truncated === true, "the approval does not say its prompt is clipped");
      if (typeof evil.id === "string") {
        const full = await send(t.url, "GET", `/v1/approvals/${evil.id}?full=1`, TENANT_TOKENS.approverA);
        checks.check(full.status === 200 && (full.body as Shown).prompt === `Run ${EVIL}?`, `the approver cannot read the full prompt: ${full.status} …${String((full.body as Shown).prompt).slice(-40)}`);
        await send(t.url, "POST", `/v1/approvals/${evil.id}`, TENANT_TOKENS.approverA, { decision: "Deny" });
      }
      const same = approvalOf(await ask(SAFE));
      checks.check(same.state === "granted" && same.decided_by === "allow_always", `'allow always' did not grant the same full prompt again: ${same.state} ${same.decided_by}`);

      const statuses: number[] = [];
      for (let i = 0; i <= STREAMS; i++) {
        const controller = new AbortController();
        streams.push(controller);
        const res = await fetch(`${t.url}/v1/approvals/stream`, { headers: { authorization: `Bearer ${TENANT_TOKENS.a}` }, signal: controller.signal });
        statuses.push(res.status);
        if (res.status !== 200) await res.text();
      }
      observed.push(`A streams ${statuses.join("/")}`);
      checks.check(statuses.slice(0, STREAMS).every((s) => s === 200) && statuses[STREAMS] === 429, `A's streams answered ${statuses.join(", ")} (limit ${STREAMS})`);
      const controller = new AbortController();
      streams.push(controller);
      const other = await fetch(`${t.url}/v1/approvals/stream`, { headers: { authorization: `Bearer ${TENANT_TOKENS.b}` }, signal: controller.signal });
      checks.check(other.status === 200, `B's stream refused because of A's: ${other.status}`);

      const operator = await send(t.url, "GET", `/v1/approvals/${first.id}`, TENANT_TOKENS.operator);
      servedAfter = operator.status === 200 && (operator.body as Shown).state === "granted";
    } finally {
      for (const s of streams) s.abort();
      await t.close();
    }
    return checks.outcome(observed.join(", "), servedAfter);
  },
};
