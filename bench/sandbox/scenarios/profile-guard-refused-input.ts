/**
 * An agent user's tool call `rm -rf ~` meets a `fail_closed` guard on Gemini CLI's BeforeTool (issue
 * 24). The attacker (a prompt-injected agent, or a crafted tool call) does not try to pass the guard:
 * it makes the server refuse the event instead of judging it — a 60 MB body (with Content-Length and
 * chunked), a `__proto__` key or 70-deep arguments in `tool_input`, JSON cut off. Agents read a
 * non-2xx answer as "go ahead", so each refusal must come back as the profile's blocking answer
 * (HTTP 200, `decision: block`, exit code 2), audited as one `refused_fail_closed` record, with the
 * body still never read past the socket buffers. A client without a token still gets 401.
 */
import { Checks, type Scenario } from "../scenario.js";
import { TENANT_IDS, TENANT_TOKENS, send, sendHugeBody, startTenantServer, type Reply } from "../http-tenants.js";
import type { BundleSource } from "../../../src/index.js";

const ROUTE = "/v1/profiles/gemini-cli/events/BeforeTool";
const BODY = 60 * 1024 * 1024;
/** Loopback socket buffers hold a few MB; a server that reads the body takes all 60. */
const MAX_SENT = 24 * 1024 * 1024;

const GUARD_BUNDLE: BundleSource = {
  manifest: {
    bundle: "shell-guard",
    version: "1.0.0",
    trust: "deployment",
    profile: "gemini-cli",
    hooks: [{ name: "no_rm", event: "BeforeTool", matcher: "^run_shell_command$", action: "guard", priority: 90, timeout_ms: 2000, fail_closed: true }],
  } as unknown as BundleSource["manifest"],
  code: `var __vcp_bundle = {
  guard: function (input) {
    return /rm\\s+-rf/.test(String(input.tool_input && input.tool_input.command)) ? { decision: "block", reason: "no rm -rf" } : { decision: "allow" };
  }
};`,
};

function toolCall(toolInput: unknown): Record<string, unknown> {
  return { session_id: "victim", transcript_path: "/t", cwd: "/w", hook_event_name: "BeforeTool", timestamp: "2026-11-26T00:00:00Z", tool_name: "run_shell_command", tool_input: toolInput };
}

/** A request whose body is JSON text as written (shapes JSON.stringify cannot write). */
async function sendRaw(url: string, text: string): Promise<Reply> {
  const res = await fetch(`${url}${ROUTE}`, { method: "POST", headers: { authorization: `Bearer ${TENANT_TOKENS.a}`, "content-type": "application/json" }, body: text });
  const body = await res.text();
  try {
    return { status: res.status, body: JSON.parse(body) };
  } catch {
    return { status: res.status, body };
  }
}

const deep = (depth: number) => `${'{"d":'.repeat(depth)}{}${"}".repeat(depth)}`;

export const scenario: Scenario = {
  id: "profile-guard-refused-input",
  category: "profile-boundary",
  title: "rm -rf ~ sent so that the server refuses the guarded BeforeTool event: 60 MB body, __proto__, 70 deep, cut-off JSON",
  expected: "every refusal is the profile's block (200, decision block, exit code 2) audited once as refused_fail_closed; the body is not read; no token is still 401",
  async run() {
    const checks = new Checks();
    const t = await startTenantServer({ bundles: [GUARD_BUNDLE] });
    let servedAfter = false;
    const observed: string[] = [];
    try {
      const refusals = async () => (await t.runtime.audit.query({ limit: 10_000 })).filter((r) => r.outcome === "refused_fail_closed");
      for (const declared of [true, false]) {
        const before = (await refusals()).length;
        const out = await sendHugeBody(t.url, "POST", ROUTE, { totalBytes: BODY, declared, token: TENANT_TOKENS.a });
        const what = declared ? "60 MB with Content-Length" : "60 MB chunked";
        observed.push(`${what}: ${out.status} after ${(out.sentBeforeAnswer / 1048576).toFixed(1)} MB`);
        checks.check(out.status === 200 && out.code === undefined, `${what}: answered ${out.status} ${out.code ?? ""}, not the guard's block`);
        checks.check(out.sentBeforeAnswer <= MAX_SENT, `${what}: the server took ${(out.sentBeforeAnswer / 1048576).toFixed(1)} MB of a body it refused`);
        const added = (await refusals()).slice(before);
        checks.check(added.length === 1 && (added[0]?.details as { code?: string } | undefined)?.code === "PAYLOAD_TOO_LARGE" && added[0]?.owner === TENANT_IDS.a, `${what}: audited ${JSON.stringify(added)}`);
      }
      const shapes: Array<[string, string]> = [
        ["__proto__ in tool_input", JSON.stringify(toolCall({ command: "rm -rf ~" })).replace('"command"', '"__proto__":{"isAdmin":true},"command"')],
        ["tool_input 70 deep", JSON.stringify(toolCall({ command: "@" })).replace('{"command":"@"}', `{"command":"rm -rf ~","args":${deep(70)}}`)],
        ["cut-off JSON", JSON.stringify(toolCall({ command: "rm -rf ~" })).slice(0, 80)],
      ];
      for (const [what, text] of shapes) {
        const r = await sendRaw(t.url, text);
        const native = (r.body as { native?: { decision?: string }; exit_code?: number; refused?: { code?: string } } | undefined) ?? {};
        observed.push(`${what}: ${r.status} ${native.native?.decision ?? "-"} (${native.refused?.code ?? "judged"})`);
        checks.check(r.status === 200 && native.native?.decision === "block" && native.exit_code === 2 && typeof native.refused?.code === "string", `${what}: answered ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      }
      const anonymous = await send(t.url, "POST", ROUTE, null, toolCall({ command: "rm -rf ~" }));
      checks.check(anonymous.status === 401, `no token answered ${anonymous.status}`);
      const judged = await send(t.url, "POST", ROUTE, TENANT_TOKENS.a, toolCall({ command: "rm -rf ~" }));
      servedAfter = judged.status === 200 && (judged.body as { native?: { decision?: string } }).native?.decision === "block";
    } finally {
      await t.close();
    }
    return checks.outcome(observed.join("; "), servedAfter);
  },
};
