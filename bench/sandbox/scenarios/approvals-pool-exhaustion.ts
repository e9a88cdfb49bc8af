/**
 * Client A fills the runtime's pending-approval pool (PROFILES §3.4, `approvals.max_pending`) by
 * asking in session after session, each under `max_pending_per_session`. Then client B's agent asks
 * once. Contained: A is refused with APPROVAL_LIMIT (scope client) at its own share
 * (`max_pending_per_client`), and B's ask becomes a pending approval — one client cannot deny the
 * others their approvals (a refusal B's adapter might turn into a fail-open).
 */
import { Checks, type Scenario } from "../scenario.js";
import { TENANT_TOKENS, send, startTenantServer, type Reply } from "../http-tenants.js";
import type { BundleSource } from "../../../src/index.js";

const ASKER: BundleSource = {
  manifest: {
    bundle: "amp-pool",
    version: "1.0.0",
    trust: "deployment",
    profile: "amplifier",
    hooks: [{ name: "confirm", event: "tool:pre", action: "confirm", priority: 50, timeout_ms: 2000 }],
  } as unknown as BundleSource["manifest"],
  code: `var __vcp_bundle = { confirm: function (input) { return { action: "ask_user", approval_prompt: "Run " + input.data.tool + "?", approval_timeout: 600 }; } };`,
};

const LIMITS = { maxPending: 12, maxPendingPerSession: 2, maxPendingPerClient: 4 };

function ask(url: string, token: string, session: string, tool: string): Promise<Reply> {
  return send(url, "POST", "/v1/profiles/amplifier/events/tool:pre", token, { data: { session_id: session, tool } });
}

const stateOf = (r: Reply): string | undefined => (r.body as { native?: { approval?: { state?: string } } }).native?.approval?.state;
const codeOf = (r: Reply): string | undefined => (r.body as { error?: { code?: string } }).error?.code;

export const scenario: Scenario = {
  id: "approvals-pool-exhaustion",
  category: "profile-boundary",
  title: "client A asks in session after session to fill the runtime's pending-approval pool before client B asks",
  expected: "A is refused at max_pending_per_client (429 APPROVAL_LIMIT, scope client); B's ask is still a pending approval",
  async run() {
    const checks = new Checks();
    const t = await startTenantServer({ bundles: [ASKER], approvals: LIMITS });
    let servedAfter = false;
    const observed: string[] = [];
    try {
      let created = 0;
      let refused: Reply | undefined;
      for (let s = 0; s < LIMITS.maxPending / LIMITS.maxPendingPerSession + 1 && refused === undefined; s++) {
        for (let i = 0; i < LIMITS.maxPendingPerSession; i++) {
          const r = await ask(t.url, TENANT_TOKENS.a, `a-${s}`, `job-${i}`);
          if (r.status === 200 && stateOf(r) === "pending") created++;
          else {
            refused = r;
            break;
          }
        }
      }
      observed.push(`A created ${created}, then ${refused?.status ?? "-"} ${codeOf(refused ?? { status: 0, body: {} }) ?? ""}`);
      checks.check(created === LIMITS.maxPendingPerClient, `A holds ${created} pending approvals, expected its share ${LIMITS.maxPendingPerClient}`);
      const details = (refused?.body as { error?: { details?: { scope?: string } } } | undefined)?.error?.details;
      checks.check(refused?.status === 429 && codeOf(refused) === "APPROVAL_LIMIT" && details?.scope === "client", `A's refusal: ${refused?.status} ${JSON.stringify(refused?.body).slice(0, 200)}`);

      const b = await ask(t.url, TENANT_TOKENS.b, "b-1", "deploy");
      observed.push(`B ${b.status} ${stateOf(b) ?? codeOf(b) ?? ""}`);
      checks.check(b.status === 200 && stateOf(b) === "pending", `B's ask was refused after A's flood: ${b.status} ${JSON.stringify(b.body).slice(0, 200)}`);
      servedAfter = b.status === 200;
    } finally {
      await t.close();
    }
    return checks.outcome(observed.join(", "), servedAfter);
  },
};
