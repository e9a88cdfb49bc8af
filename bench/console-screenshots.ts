/**
 * Screenshots of every console page at 1440×900 and 390×844, from a server with history, into
 * bench/reports/console/ (`npm run screenshots:console`; `-- --readme` also writes docs/console.png,
 * the README's picture). A real runtime and server on 127.0.0.1 with a throwaway data directory and
 * signing key: the example policy gemini-safe-shell plus a failing VCP bundle and an Amplifier hook
 * that asks; a few dozen chains, one of them the Gemini block of `rm -rf /`, and one pending approval.
 * Chromium is Debian's (`/usr/bin/chromium`, or VCP_CHROMIUM), driven by playwright-core.
 */
import { generateKeyPairSync, createHash } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { chromium, type Page } from "playwright-core";
import { createArtifact, signArtifact } from "../src/bundle/artifact.js";
import { buildBundle } from "../src/bundle/build.js";
import { createRuntime, type VcpArtifact } from "../src/index.js";
import { createServer } from "../src/server/app.js";

const OUT = resolve("bench", "reports", "console");
const CHROMIUM = process.env.VCP_CHROMIUM ?? "/usr/bin/chromium";
const WIDTHS = [
  { name: "desktop", width: 1440, height: 900 },
  { name: "phone", width: 390, height: 844 },
] as const;
const OPERATOR = `op-${createHash("sha256").update(String(Math.random())).digest("hex").slice(0, 24)}`;
const CLIENT = `cl-${createHash("sha256").update(String(Math.random())).digest("hex").slice(0, 24)}`;

const { privateKey, publicKey } = generateKeyPairSync("ed25519");
const privateKeyPem = privateKey.export({ type: "pkcs8", format: "pem" }) as string;
const sign = (artifact: VcpArtifact) => signArtifact(artifact, privateKeyPem, "ops") as VcpArtifact;
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

const dataDir = mkdtempSync(join(tmpdir(), "vcp-console-shots-"));
const runtime = await createRuntime({
  dataDir,
  keyring: { keys: [{ key_id: "ops", public_key: publicKey.export({ type: "spki", format: "pem" }) as string, max_trust: "deployment" }] },
  requireSignatures: true,
  sandbox: { threads: 2 },
} as never);
const server = await createServer({
  runtime,
  settings: {
    auth: [
      { id: "ops", role: "operator", token_sha256: sha(OPERATOR) },
      { id: "agent", role: "client", token_sha256: sha(CLIENT) },
    ],
    limits: { body_bytes: 1024 * 1024, bundle_bytes: 1024 * 1024 },
    sessionHookAllowlist: [],
  },
  console: { securityReportDir: resolve("bench", "reports", "sandbox") },
});
const url = await server.listen("127.0.0.1", 0);

async function call(method: string, path: string, token: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}${path}`, { method, headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
async function must(method: string, path: string, token: string, body?: unknown): Promise<any> {
  const r = await call(method, path, token, body);
  if (r.status >= 400) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

const beforeTool = (command: string, session: string) => ({ session_id: session, transcript_path: "/home/dev/.gemini/t.jsonl", cwd: "/home/dev/app", hook_event_name: "BeforeTool", timestamp: new Date().toISOString(), tool_name: "run_shell_command", tool_input: { command, description: "run it" } });

async function history(): Promise<void> {
  for (const [i, command] of ["ls -la", "git status", "npm test", "cat README.md", "git diff", "npm run build", "rm -rf /", "ls src", "git log -3", "rm -rf ~/"].entries()) {
    await must("POST", "/v1/profiles/gemini-cli/events/BeforeTool", CLIENT, beforeTool(command, `gem-${i % 3}`));
  }
  for (let i = 0; i < 12; i++) await must("POST", "/v1/sessions/shots-1/chains/pre_inject", CLIENT, { event: { injection_target: "system", injection_format: "system_prompt", raw_constitution: "Be kind." } });
}

try {
  mkdirSync(OUT, { recursive: true });
  const { artifact } = await buildBundle(resolve("policies", "gemini-safe-shell"));
  await must("PUT", "/v1/bundles/gemini-safe-shell", OPERATOR, sign(artifact as VcpArtifact));
  const flaky = (version: string) =>
    createArtifact(
      { bundle: "flaky", version, trust: "deployment", hooks: [{ name: "explode", type: "pre_inject", action: "explode", priority: 40, timeout_ms: 1000 }, { name: "fine", type: "pre_inject", action: "fine", priority: 30, timeout_ms: version === "1.0.0" ? 500 : 1000 }] },
      `var __vcp_bundle = { explode: function () { throw new Error("flaky dependency unavailable"); }, fine: function () { return { status: "continue" }; } };`,
    ) as VcpArtifact;
  await must("PUT", "/v1/bundles/flaky", OPERATOR, sign(flaky("1.0.0")));
  await must("PUT", "/v1/bundles/flaky", OPERATOR, sign(flaky("1.1.0")));
  const ask = createArtifact(
    { bundle: "prod-ask", version: "1.0.0", trust: "deployment", profile: "amplifier", hooks: [{ name: "prod_guard", event: "tool:pre", action: "ask", priority: 10, timeout_ms: 2000 }] },
    `var __vcp_bundle = { ask: function () { return { action: "ask_user", approval_prompt: "Deploy to prod?", approval_options: ["Allow once", "Deny"], approval_timeout: 600, approval_default: "deny" }; } };`,
  ) as VcpArtifact;
  await must("PUT", "/v1/bundles/prod-ask", OPERATOR, sign(ask));
  await must("POST", "/v1/sessions", CLIENT, { session_id: "shots-1", context: { note: "n" }, constitution: { id: "c", version: "1", rules: [{ id: "r", text: "Be kind." }] } });
  await history();
  // One approval waits (the request is not awaited: the approval stays pending for the pictures).
  void call("POST", "/v1/profiles/amplifier/events/tool:pre?wait_approval=1", CLIENT, { event: "tool:pre", data: { session_id: "amp-1", tool_name: "bash" } }).catch(() => undefined);

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  const written: string[] = [];
  try {
    for (const size of WIDTHS) {
      const page: Page = await browser.newPage({ viewport: { width: size.width, height: size.height }, ...(size.width < 500 ? { isMobile: true, hasTouch: true } : {}) });
      await page.goto(`${url}/console#/decisions`);
      await page.locator("#token").fill(OPERATOR);
      await page.keyboard.press("Enter");
      await page.locator("#stream-state", { hasText: /^Live/ }).waitFor({ timeout: 30_000 });
      // A second batch arrives live while the page is open (servers without GET /v1/decisions show these).
      await history();
      await page.locator("#decisions-body tr[data-chain]").nth(9).waitFor({ timeout: 30_000 });
      const blocked = page.locator('#decisions-body tr[data-outcome="block"]').first();
      await blocked.click();
      await page.locator("#trace h2").waitFor();
      await page.evaluate("window.scrollTo(0, 0)");
      const shots: Array<[string, string, string]> = [
        ["decisions", "", "#trace h2"],
        ["health", "#/health", "#health-hooks tbody tr"],
        ["approvals", "#/approvals", "#approval-dialog"],
        ["bundles", "#/bundles", "#bundles-table"],
        ["bundle-detail", "#/bundles/flaky", "#revisions-table"],
        ["chains", "#/chains", "section.chain"],
        ["security", "#/security", "#security-body > *"],
      ];
      for (const [name, hash, ready] of shots) {
        if (hash !== "") await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
        await page.locator(ready).first().waitFor({ timeout: 30_000 });
        const file = join(OUT, `${name}-${size.width}x${size.height}.png`);
        await page.screenshot({ path: file, fullPage: size.width < 500 });
        written.push(file);
      }
      await page.close();
    }
  } finally {
    await browser.close();
  }
  if (process.argv.includes("--readme")) {
    copyFileSync(join(OUT, "decisions-1440x900.png"), resolve("docs", "console.png"));
    written.push(resolve("docs", "console.png"));
  }
  process.stdout.write(`${written.map((f) => `wrote ${f}`).join("\n")}\n`);
} finally {
  // The waiting approval request ends before the server closes (a close waits for open requests).
  const pending = await call("GET", "/v1/approvals?state=pending", OPERATOR).catch(() => undefined);
  for (const a of (pending?.body?.approvals ?? []) as Array<{ id: string }>) await call("POST", `/v1/approvals/${a.id}`, OPERATOR, { decision: "Deny" }).catch(() => undefined);
  await server.close();
  await runtime.close();
  rmSync(dataDir, { recursive: true, force: true });
}
