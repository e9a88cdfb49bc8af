/**
 * One client opens sessions until the cap (limits.sessions_per_client), then keeps going: each
 * session holds a context, constitutions and timers, so without a cap one token can exhaust the
 * server's memory for every tenant. The next open must be refused with 429 SESSION_LIMIT and change
 * nothing; another client must still open sessions; closing one must free a slot.
 */
import { Checks, type Scenario } from "../scenario.js";
import { CONSTITUTION, PRE_INJECT_EVENT, TENANT_IDS, TENANT_TOKENS, send, startTenantServer } from "../http-tenants.js";

const CAP = 5;
const FLOOD = 40;
/** A context big enough that FLOOD sessions would be noticed (~64 KiB JSON each, under body_bytes). */
const bulky = (i: number) => ({ user: `a-${i}`, padding: "x".repeat(60_000) });

export const scenario: Scenario = {
  id: "http-session-cap",
  category: "tenant-isolation",
  title: "one client opens sessions far past limits.sessions_per_client",
  expected: "opens past the cap get 429 SESSION_LIMIT and store nothing; another client still opens; a close frees a slot",
  async run() {
    const checks = new Checks();
    const t = await startTenantServer({ maxSessionsPerOwner: CAP, bodyBytes: 256 * 1024 });
    let servedAfter = false;
    let opened = 0;
    let refused = 0;
    try {
      for (let i = 0; i < FLOOD; i++) {
        const r = await send(t.url, "POST", "/v1/sessions", TENANT_TOKENS.a, { session_id: `flood-${i}`, context: bulky(i), constitution: CONSTITUTION });
        if (r.status === 201) opened++;
        else if (r.status === 429 && (r.body as { error?: { code?: string } }).error?.code === "SESSION_LIMIT") refused++;
        else checks.check(false, `open #${i} answered ${r.status} ${JSON.stringify(r.body).slice(0, 160)}`);
      }
      checks.check(opened === CAP, `client A opened ${opened} sessions with a cap of ${CAP}`);
      checks.check(refused === FLOOD - CAP, `${refused} of ${FLOOD - CAP} opens past the cap were refused with 429 SESSION_LIMIT`);
      const held = (await t.runtime.sessions.list({ principal: { id: TENANT_IDS.a, role: "client" } })).length;
      checks.check(held === CAP, `the runtime holds ${held} sessions of client A, not ${CAP}`);
      const refusedOne = await send(t.url, "GET", `/v1/sessions/flood-${FLOOD - 1}`, TENANT_TOKENS.a);
      checks.check(refusedOne.status === 404, `a refused open left a session behind (${refusedOne.status})`);

      const other = await send(t.url, "POST", "/v1/sessions", TENANT_TOKENS.b, { session_id: "b-1", context: { user: "b" }, constitution: CONSTITUTION });
      checks.check(other.status === 201, `client B could not open a session while A is at its cap (${other.status})`);

      const closed = await send(t.url, "DELETE", "/v1/sessions/flood-0", TENANT_TOKENS.a);
      const again = await send(t.url, "POST", "/v1/sessions", TENANT_TOKENS.a, { session_id: "flood-again", context: { user: "a" }, constitution: CONSTITUTION });
      checks.check(closed.status === 204 && again.status === 201, `closing a session did not free a slot (close ${closed.status}, open ${again.status})`);

      const fired = await send(t.url, "POST", "/v1/sessions/b-1/chains/pre_inject", TENANT_TOKENS.b, { event: PRE_INJECT_EVENT });
      servedAfter = fired.status === 200;
    } finally {
      await t.close();
    }
    return checks.outcome(`${opened} opened, ${refused} refused of ${FLOOD} (cap ${CAP})`, servedAfter);
  },
};
