/**
 * Sessionless profile events (PROFILES §8.3): an Amplifier event without `data.session_id`, a
 * repo-yaml context without `session_id`, and every ai-memory envelope (it has no session at all)
 * run with no session. Their hooks' `isolation: per_session` state must then be per (client, chain):
 * client B must never read what client A's chain left in the guest, and two chains of one client
 * must not share it either. The policies below remember the previous input of "their session" and
 * tell it in the answer, so any shared context shows. A's session-bearing Amplifier events still keep
 * their state between chains (per_session isolation itself keeps working).
 */
import { Checks, type Scenario } from "../scenario.js";
import { TENANT_TOKENS, send, startTenantServer, type Reply } from "../http-tenants.js";
import type { BundleSource } from "../../../src/index.js";

/** Module state of a per_session bundle: `last` is the previous secret seen by this context. */
const MEMO = `var last = "none";
function remember(secret) { var previous = last; last = String(secret); return "previous: " + previous; }`;

function bundle(name: string, profile: string, event: string, body: string): BundleSource {
  return {
    manifest: {
      bundle: name,
      version: "1.0.0",
      trust: "deployment",
      profile,
      isolation: "per_session",
      hooks: [{ name: "memo", event, action: "memo", timeout_ms: 2000 }],
    } as unknown as BundleSource["manifest"],
    code: `${MEMO}
var __vcp_bundle = { memo: function (input) { ${body} } };`,
  };
}

const BUNDLES: BundleSource[] = [
  bundle("sessionless-amp", "amplifier", "tool:pre", `return { action: "continue", user_message: remember(input.data.secret) };`),
  bundle("sessionless-repo", "repo-yaml", "UserPromptSubmit", `return { messages_to_user: [remember(input.secret)] };`),
  bundle("sessionless-mem", "ai-memory", "pre_store", `return { action: "deny", reason: remember(input.payload.secret), code: 403 };`),
];

interface Target {
  profile: string;
  path: string;
  body(secret: string, session?: string): Record<string, unknown>;
  /** The memo's text in the native answer. */
  said(reply: Reply): string;
}

const nativeOf = (reply: Reply): any => (reply.body as { native?: unknown } | undefined)?.native ?? {};

const TARGETS: Target[] = [
  {
    profile: "amplifier",
    path: "/v1/profiles/amplifier/events/tool:pre",
    body: (secret, session) => ({ event: "tool:pre", data: { tool_name: "bash", secret, ...(session !== undefined ? { session_id: session } : {}) } }),
    said: (reply) => String(nativeOf(reply).user_messages?.[0]?.message ?? `(no message: ${reply.status})`),
  },
  {
    profile: "repo-yaml",
    path: "/v1/profiles/repo-yaml/events/UserPromptSubmit",
    body: (secret) => ({ event_type: "UserPromptSubmit", prompt: "hello", secret }),
    said: (reply) => String(nativeOf(reply).messages_to_user?.[0] ?? `(no message: ${reply.status})`),
  },
  {
    profile: "ai-memory",
    path: "/v1/profiles/ai-memory/events/pre_store",
    body: (secret) => ({ event: "pre_store", payload: { namespace: "team", content: "note", secret } }),
    said: (reply) => String(nativeOf(reply).reason ?? `(no reason: ${reply.status})`),
  },
];

export const scenario: Scenario = {
  id: "profile-sessionless-cross-tenant",
  category: "profile-boundary",
  title: "clients A and B send sessionless amplifier, repo-yaml and ai-memory events to a per_session policy that remembers its last input",
  expected: "every sessionless chain starts from fresh guest state: B never reads A's secret, A's second chain never reads its first (or B's); session-bearing events still keep their state",
  async run() {
    const checks = new Checks();
    const t = await startTenantServer({ bundles: BUNDLES });
    let servedAfter = false;
    const observed: string[] = [];
    try {
      for (const target of TARGETS) {
        const fire = (token: string, secret: string, session?: string) => send(t.url, "POST", target.path, token, target.body(secret, session));
        const aFirst = await fire(TENANT_TOKENS.a, "a-secret-1");
        checks.check(aFirst.status === 200, `${target.profile}: A's sessionless event answered ${aFirst.status} ${JSON.stringify(aFirst.body).slice(0, 160)}`);
        const bFirst = await fire(TENANT_TOKENS.b, "b-secret-1");
        const bSaid = target.said(bFirst);
        observed.push(`${target.profile}: B saw "${bSaid}"`);
        checks.check(bSaid === "previous: none", `${target.profile}: client B's sessionless chain read guest state another client left: "${bSaid}"`);
        const aSecond = await fire(TENANT_TOKENS.a, "a-secret-2");
        const aSaid = target.said(aSecond);
        checks.check(aSaid === "previous: none", `${target.profile}: two sessionless chains of client A shared guest state: "${aSaid}"`);
      }
      // per_session isolation still keeps a session's state between its chains (Amplifier, with a session id).
      const amp = TARGETS[0]!;
      const s1 = await send(t.url, "POST", amp.path, TENANT_TOKENS.a, amp.body("kept-1", "amp-session-1"));
      const s2 = await send(t.url, "POST", amp.path, TENANT_TOKENS.a, amp.body("kept-2", "amp-session-1"));
      servedAfter = s1.status === 200 && amp.said(s1) === "previous: none" && amp.said(s2) === "previous: kept-1";
      if (!servedAfter) observed.push(`session state: "${amp.said(s1)}" then "${amp.said(s2)}"`);
    } finally {
      await t.close();
    }
    return checks.outcome(observed.join("; "), servedAfter);
  },
};
