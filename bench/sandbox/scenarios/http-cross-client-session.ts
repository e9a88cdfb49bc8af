/**
 * Client B against client A's session over HTTP (DESIGN §6.5): read it, drive every pipeline route,
 * fire a chain with B's own context, hang a session hook on it, list its chain, close it. Every
 * attempt must get exactly the answer a session that does not exist gets (404 SESSION_NOT_FOUND,
 * same message shape), and A's session — state, context, constitution, hooks, audit trail — must be
 * as A left it. The operator still sees it, with its owner.
 */
import { Checks, type Scenario } from "../scenario.js";
import { CONSTITUTION, PRE_INJECT_EVENT, TENANT_IDS, TENANT_TOKENS, send, startTenantServer, type Reply } from "../http-tenants.js";

const SESSION = "support-chat-1";
const GHOST = "support-chat-404";

/** What B sends, per route; `{id}` is the target session. */
const ATTEMPTS: ReadonlyArray<{ name: string; method: string; path: string; body?: unknown }> = [
  { name: "read", method: "GET", path: "/v1/sessions/{id}" },
  { name: "chain order", method: "GET", path: "/v1/hooks?type=pre_inject&session={id}" },
  { name: "fire", method: "POST", path: "/v1/sessions/{id}/chains/pre_inject", body: { context: { stolen: true }, constitution: CONSTITUTION, event: PRE_INJECT_EVENT } },
  { name: "adapt", method: "POST", path: "/v1/sessions/{id}/adapt", body: { selected: CONSTITUTION, candidates: [CONSTITUTION], selection_rationale: "b", selection_algorithm: "b" } },
  { name: "transition", method: "POST", path: "/v1/sessions/{id}/transition", body: { to: "hijacked", trigger: "b" } },
  { name: "conflict", method: "POST", path: "/v1/sessions/{id}/conflict", body: { constitutions: [CONSTITUTION], conflicting_rules: [], conflict_severity: "warning" } },
  { name: "violation", method: "POST", path: "/v1/sessions/{id}/violation", body: { output: "o", violated_rules: [], severity: "minor", violation_evidence: "e" } },
  { name: "session hook", method: "POST", path: "/v1/sessions/{id}/hooks", body: { bundle: "tenant-probe", hook: "watch" } },
  { name: "close", method: "DELETE", path: "/v1/sessions/{id}" },
];

/** The error with the session id masked, so A's session and a missing one can be compared. */
function shape(reply: Reply, id: string): string {
  return JSON.stringify({ status: reply.status, body: reply.body }).replaceAll(id, "<id>");
}

export const scenario: Scenario = {
  id: "http-cross-client-session",
  category: "tenant-isolation",
  title: "client B reads, drives, hooks and closes client A's session over HTTP",
  expected: "every attempt answers exactly like a missing session (404 SESSION_NOT_FOUND); A's session, hooks and audit trail unchanged",
  async run() {
    const checks = new Checks();
    const t = await startTenantServer();
    let servedAfter = false;
    const observed: string[] = [];
    try {
      const opened = await send(t.url, "POST", "/v1/sessions", TENANT_TOKENS.a, { session_id: SESSION, context: { user: "a" }, constitution: CONSTITUTION, state: "start" });
      if (opened.status !== 201) throw new Error(`client A could not open its session: ${opened.status} ${JSON.stringify(opened.body)}`);
      const hooked = await send(t.url, "POST", `/v1/sessions/${SESSION}/hooks`, TENANT_TOKENS.a, { bundle: "tenant-probe", hook: "watch" });
      if (hooked.status !== 201) throw new Error(`client A could not register its session hook: ${hooked.status}`);
      const before = (await send(t.url, "GET", `/v1/sessions/${SESSION}`, TENANT_TOKENS.a)).body;
      const hooksBefore = (await send(t.url, "GET", `/v1/hooks?session=${SESSION}`, TENANT_TOKENS.a)).body;
      const auditBefore = (await t.runtime.audit.query({ session: SESSION, limit: 10_000 })).length;

      for (const attempt of ATTEMPTS) {
        const onA = await send(t.url, attempt.method, attempt.path.replace("{id}", SESSION), TENANT_TOKENS.b, attempt.body);
        const onGhost = await send(t.url, attempt.method, attempt.path.replace("{id}", GHOST), TENANT_TOKENS.b, attempt.body);
        const code = (onA.body as { error?: { code?: string } } | undefined)?.error?.code;
        observed.push(`${attempt.name} ${onA.status}`);
        checks.check(onA.status === 404 && code === "SESSION_NOT_FOUND", `${attempt.name}: B got ${onA.status} ${code ?? JSON.stringify(onA.body).slice(0, 120)} for A's session, not 404 SESSION_NOT_FOUND`);
        checks.check(shape(onA, SESSION) === shape(onGhost, GHOST), `${attempt.name}: the answer for A's session differs from the answer for a missing one (existence leaks): ${shape(onA, SESSION)} vs ${shape(onGhost, GHOST)}`);
      }

      const after = await send(t.url, "GET", `/v1/sessions/${SESSION}`, TENANT_TOKENS.a);
      checks.check(after.status === 200, `A lost its session (${after.status})`);
      checks.check(JSON.stringify(after.body) === JSON.stringify(before), `A's session changed: ${JSON.stringify(before)} → ${JSON.stringify(after.body)}`);
      const hooksAfter = (await send(t.url, "GET", `/v1/hooks?session=${SESSION}`, TENANT_TOKENS.a)).body;
      checks.check(JSON.stringify(hooksAfter) === JSON.stringify(hooksBefore), "the hooks of A's session changed");
      const auditAfter = (await t.runtime.audit.query({ session: SESSION, limit: 10_000 })).length;
      checks.check(auditAfter === auditBefore, `B's attempts added ${auditAfter - auditBefore} audit record(s) to A's session`);

      // Operators see every session, with its owner.
      const asOperator = await send(t.url, "GET", `/v1/sessions/${SESSION}`, TENANT_TOKENS.operator);
      checks.check(asOperator.status === 200 && (asOperator.body as { owner?: string }).owner === TENANT_IDS.a, `the operator does not see A's session with its owner (${asOperator.status} ${JSON.stringify(asOperator.body).slice(0, 120)})`);

      const fired = await send(t.url, "POST", `/v1/sessions/${SESSION}/chains/pre_inject`, TENANT_TOKENS.a, { event: PRE_INJECT_EVENT });
      const hooks = (fired.body as { hook_results?: Array<{ hook: string }> }).hook_results?.map((h) => h.hook) ?? [];
      servedAfter = fired.status === 200 && hooks.includes("watch") && hooks.includes("mark");
      const chainRecords = (await t.runtime.audit.query({ session: SESSION, limit: 10_000 })).filter((r) => r.kind !== "registry");
      checks.check(chainRecords.length > 0 && chainRecords.every((r) => r.owner === TENANT_IDS.a), "the audit records of A's chains do not name A as the owner");
    } finally {
      await t.close();
    }
    return checks.outcome(observed.join(", "), servedAfter);
  },
};
