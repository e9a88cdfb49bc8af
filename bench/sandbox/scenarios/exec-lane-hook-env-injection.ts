/**
 * The agent's hook environment (issue 26 item 3) as an attacker with a client token would use it: the
 * `x-vcp-hook-env` header sent straight to the profile route with names a loader or shell interprets
 * (LD_PRELOAD, PATH, BASH_ENV), the name of a server secret, a name given twice, a header over its
 * bound and one that is not percent-encoded — on an event whose exec hook prints its environment,
 * and on a guarded event. Contained: each is refused with a coded error naming the header or the
 * variable (on the guarded event: the profile's block), no such variable ever reaches a script, the
 * server's own secret never does, and the documented variable of a well-behaved request still does.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createArtifact, signArtifact } from "../../../src/bundle/artifact.js";
import { generateKeyPair } from "../../../src/bundle/keys.js";
import { createRuntime, type Runtime } from "../../../src/index.js";
import { createServer, type VcpServer } from "../../../src/server/index.js";
import { Checks, type Scenario } from "../scenario.js";

const TOKEN = "scn-hook-env-client-7d1c2e";
const SECRET = "VCP_SCENARIO_SERVER_SECRET";
const sha256 = (data: string | Buffer): string => createHash("sha256").update(data).digest("hex");

// Prints every variable it was given (names and values) as the prompt's context.
const REPORT = `#!/bin/sh
cat >/dev/null
env | tr '\\n' ' ' | sed 's/["\\\\]/_/g' > "$1/env.txt"
printf '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"ok"}}\\n'
`;
const GUARD = `#!/bin/sh
cat >/dev/null
exit 0
`;

const prompt = { session_id: "scn-env", transcript_path: "/tmp/t.jsonl", cwd: "/tmp", permission_mode: "default", hook_event_name: "UserPromptSubmit", prompt: "hi" };
const preToolUse = { session_id: "scn-env", transcript_path: "/tmp/t.jsonl", cwd: "/tmp", permission_mode: "default", hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls" }, tool_use_id: "toolu_1" };

async function post(url: string, event: string, body: unknown, header: string | undefined): Promise<{ status: number; body: Record<string, any> }> {
  const res = await fetch(`${url}/v1/profiles/claude-code/events/${event}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...(header !== undefined ? { "x-vcp-hook-env": header } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  try {
    return { status: res.status, body: JSON.parse(text) as Record<string, any> };
  } catch {
    return { status: res.status, body: { text } };
  }
}

export const scenario: Scenario = {
  id: "exec-lane-hook-env-injection",
  category: "profile-boundary",
  title: "a client sends x-vcp-hook-env naming LD_PRELOAD, PATH, BASH_ENV, a server secret, a name twice, 9 KB, and no encoding",
  expected: "each refused (400 INVALID_INPUT / INVALID_REQUEST naming it; the block on a guarded event) before any script runs; no such variable and no server secret in any script's environment; CLAUDE_PROJECT_DIR of a good request reaches the script",
  async run() {
    const checks = new Checks();
    const root = mkdtempSync(join(tmpdir(), "vcp-hook-env-atk-"));
    const observed: string[] = [];
    let runtime: Runtime | undefined;
    let server: VcpServer | undefined;
    let servedAfter = false;
    process.env[SECRET] = "must-not-reach-a-script";
    try {
      const report = join(root, "report.sh");
      const guard = join(root, "guard.sh");
      writeFileSync(report, REPORT, { mode: 0o755 });
      writeFileSync(guard, GUARD, { mode: 0o755 });
      const key = generateKeyPair();
      runtime = await createRuntime({
        dataDir: join(root, "data"),
        keyring: { keys: [{ key_id: "sys", public_key: key.publicKeyPem, max_trust: "system" }] },
        exec: { enabled: true },
        sandbox: { threads: 1 },
      });
      await runtime.bundles.install(signArtifact(createArtifact({
        bundle: "env-report", version: "1.0.0", profile: "claude-code", trust: "system",
        hooks: [
          { name: "report", event: "UserPromptSubmit", timeout_ms: 10_000, exec: { command: report, sha256: sha256(REPORT), args: [root] } },
          { name: "guard", event: "PreToolUse", timeout_ms: 10_000, fail_closed: true, exec: { command: guard, sha256: sha256(GUARD) } },
        ],
      } as never, ""), key.privateKeyPem, "sys"));
      server = await createServer({ runtime, settings: { auth: [{ id: "tenant", role: "client", token_sha256: sha256(TOKEN) }], limits: { body_bytes: 64 * 1024, bundle_bytes: 256 * 1024 } } as never });
      const url = await server.listen("127.0.0.1", 0);
      const envFile = join(root, "env.txt");
      const seen = (): string => {
        try {
          return readFileSync(envFile, "utf8");
        } catch {
          return "";
        }
      };

      const attacks: Array<[string, string, RegExp]> = [
        ["LD_PRELOAD", "LD_PRELOAD=/tmp/evil.so", /INVALID_INPUT/],
        ["PATH", "PATH=/tmp/evil", /INVALID_INPUT/],
        ["BASH_ENV", "CLAUDE_PROJECT_DIR=/p&BASH_ENV=/tmp/evil.sh", /INVALID_INPUT/],
        ["server secret", `${SECRET}=x`, /INVALID_INPUT/],
        ["a name twice", "CLAUDE_PROJECT_DIR=/a&CLAUDE_PROJECT_DIR=/b", /INVALID_REQUEST/],
        ["9 KB", `CLAUDE_PROJECT_DIR=/${"x".repeat(9000)}`, /INVALID_REQUEST/],
        ["not encoded", "CLAUDE_PROJECT_DIR=/a b", /INVALID_REQUEST/],
      ];
      for (const [name, header, code] of attacks) {
        rmSync(envFile, { force: true });
        const r = await post(url, "UserPromptSubmit", prompt, header);
        const said = `${r.body?.error?.code ?? ""}: ${r.body?.error?.message ?? ""}`;
        observed.push(`${name} ${r.status}`);
        checks.check(r.status === 400 && code.test(said) && /x-vcp-hook-env|hook environment/.test(said), `${name}: answered ${r.status} ${said.slice(0, 200)}`);
        checks.check(seen() === "", `${name}: a script ran with the header's environment: ${seen().slice(0, 200)}`);
        const g = await post(url, "PreToolUse", preToolUse, header);
        const decision = g.body?.hookSpecificOutput?.permissionDecision ?? g.body?.native?.hookSpecificOutput?.permissionDecision;
        checks.check(g.status === 200 && decision === "deny", `${name} on the guarded event: answered ${g.status} ${JSON.stringify(g.body).slice(0, 200)}`);
      }

      rmSync(envFile, { force: true });
      const good = await post(url, "UserPromptSubmit", prompt, "CLAUDE_PROJECT_DIR=/home/dev/my%20app");
      const env = seen();
      observed.push(`good ${good.status}`);
      checks.check(good.status === 200 && env.includes("CLAUDE_PROJECT_DIR=/home/dev/my app"), `the documented variable did not reach the script: ${good.status} ${env.slice(0, 200)}`);
      checks.check(!env.includes(SECRET) && !/\bLD_PRELOAD=|\bBASH_ENV=/.test(env), `the script's environment holds what it must not: ${env.slice(0, 300)}`);
      servedAfter = good.status === 200;
    } finally {
      delete process.env[SECRET];
      await server?.close();
      await runtime?.close();
      rmSync(root, { recursive: true, force: true });
    }
    return checks.outcome(observed.join(", "), servedAfter);
  },
};
