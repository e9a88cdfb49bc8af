// Issue 28: the console answers an operator's three questions, in a real browser (Debian's Chromium
// driven by playwright-core) against the real server and runtime, starting from a server with history:
// "what was blocked, and why?" (Decisions), "what is failing?" (Health), "what waits for me?"
// (Approvals, from the badge on any page). Every page is checked with axe-core (no serious or critical
// violation) at 1440×900 and 390×844, and nothing is off-screen on a phone. `npm run build` first.
import { readFileSync } from "node:fs";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signArtifact } from "../../src/bundle/artifact.js";
import { buildBundle } from "../../src/bundle/build.js";
import type { VcpArtifact } from "../../src/index.js";
import { call, constitution, events, keys, signed, TOKENS } from "./helpers.js";
import { startConsoleHarness, type ConsoleHarness } from "./console-helpers.js";

const CHROMIUM = process.env.VCP_CHROMIUM ?? "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs it with apt-get install -y chromium`);
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const PAGES = ["decisions", "health", "approvals", "bundles", "chains", "security"] as const;
const WIDTHS = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
] as const;

/** A VCP bundle with a hook that always throws (errors on every call) beside a healthy one. */
const FLAKY_CODE = `var __vcp_bundle = {
  explode: function () { throw new Error("flaky dependency unavailable"); },
  fine: function () { return { status: "continue" }; }
};`;
const flakyManifest = {
  bundle: "flaky",
  version: "1.0.0",
  trust: "deployment",
  hooks: [
    { name: "explode", type: "pre_inject", action: "explode", priority: 40, timeout_ms: 1000 },
    { name: "fine", type: "pre_inject", action: "fine", priority: 30, timeout_ms: 1000 },
  ],
};
/** An Amplifier hook that asks, its default deny. */
const askManifest = { bundle: "prod-ask", version: "1.0.0", trust: "deployment", profile: "amplifier", hooks: [{ name: "prod_guard", event: "tool:pre", action: "ask", priority: 10, timeout_ms: 2000 }] };
const ASK_CODE = `var __vcp_bundle = { ask: function (input) { return { action: "ask_user", approval_prompt: "Deploy to prod?", approval_options: ["Allow once", "Deny"], approval_timeout: 300, approval_default: "deny" }; } };`;

/** Gemini CLI's BeforeTool body, as the agent writes it. */
const beforeTool = (command: string, session = "gem-1") => ({
  session_id: session,
  transcript_path: "/home/dev/.gemini/t.jsonl",
  cwd: "/home/dev/app",
  hook_event_name: "BeforeTool",
  timestamp: new Date().toISOString(),
  tool_name: "run_shell_command",
  tool_input: { command, description: "run it" },
});

describe.skipIf(!available)("the console answers an operator's three questions", () => {
  let h: ConsoleHarness;
  let browser: Browser;
  /** What the server said when it blocked `rm -rf /`. */
  let blockReason = "";
  const problems: string[] = [];

  async function open(viewport: { width: number; height: number }, hash: string, options: { at?: number } = {}): Promise<Page> {
    const page = await browser.newPage({ viewport, ...(viewport.width < 500 ? { isMobile: true, hasTouch: true } : {}) });
    page.on("pageerror", (err) => problems.push(String(err)));
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
    });
    if (options.at !== undefined) await page.clock.setSystemTime(new Date(options.at));
    await page.goto(`${h.url}/console${hash}`);
    await page.locator("#token").fill(TOKENS.operator);
    await page.keyboard.press("Enter");
    await page.locator("header nav").waitFor();
    return page;
  }

  /** axe-core's serious and critical violations of the page as it is now (rule: targets). */
  async function axe(page: Page): Promise<string[]> {
    await page.evaluate(AXE);
    const found = await page.evaluate<Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>>(
      `axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => ({ target: n.target })) })))`,
    );
    return found.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  }

  const fireVcp = (n: number) =>
    (async () => {
      for (let i = 0; i < n; i++) expect((await call(h.url, "POST", "/v1/sessions/hist-1/chains/pre_inject", { token: TOKENS.client, body: { event: events.pre_inject } })).status).toBe(200);
    })();

  beforeAll(async () => {
    h = await startConsoleHarness();
    const { artifact } = await buildBundle(resolve("policies", "gemini-safe-shell"));
    expect((await call(h.url, "PUT", "/v1/bundles/gemini-safe-shell", { token: TOKENS.operator, body: signArtifact(artifact, keys.ops.privateKeyPem, "ops") as VcpArtifact })).status).toBe(201);
    expect((await call(h.url, "PUT", "/v1/bundles/flaky", { token: TOKENS.operator, body: signed(flakyManifest, FLAKY_CODE) })).status).toBe(201);
    expect((await call(h.url, "POST", "/v1/sessions", { token: TOKENS.client, body: { session_id: "hist-1", context: { note: "n" }, constitution } })).status).toBe(201);
    // History: a few dozen chains over two profiles, one of them the block the operator looks for.
    for (const command of ["ls -la", "git status", "npm test", "cat README.md", "ls src", "git diff", "npm run build"]) {
      expect((await call(h.url, "POST", "/v1/profiles/gemini-cli/events/BeforeTool", { token: TOKENS.client, body: beforeTool(command) })).status).toBe(200);
    }
    const blocked = await call(h.url, "POST", "/v1/profiles/gemini-cli/events/BeforeTool", { token: TOKENS.client, body: beforeTool("rm -rf /") });
    expect(blocked.status).toBe(200);
    expect(blocked.body.native.decision).toBe("block");
    blockReason = blocked.body.native.reason;
    await fireVcp(20);
    for (const command of ["ls", "pwd"]) expect((await call(h.url, "POST", "/v1/profiles/gemini-cli/events/BeforeTool", { token: TOKENS.client, body: beforeTool(command, "gem-2") })).status).toBe(200);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  }, 60_000);

  it("finds the Gemini chain that blocked `rm -rf /` 10 minutes ago, with its reason, in two interactions; the link and the export hold it", async () => {
    // The operator opens the console 10 minutes after the block (the page's clock), on Decisions (the default page).
    const page = await open(WIDTHS[0], "", { at: Date.now() + 10 * 60_000 });
    try {
      const rows = page.locator("#decisions-body tr[data-chain]");
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBeGreaterThanOrEqual(30);
      // Interaction 1: outcome "block".
      await page.locator("#f-outcome").selectOption("block");
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(1);
      const row = rows.first();
      expect(await row.locator(".subject").innerText()).toContain("rm -rf /");
      expect(await row.innerText()).toContain("gemini-cli · BeforeTool");
      expect(await row.locator(".reason").innerText()).toContain(blockReason);
      // Interaction 2: the row opens its detail: who decided, why, every hook with its outcome and time.
      await row.click();
      await expect.poll(() => page.locator("#trace-reason").innerText()).toBe(blockReason);
      expect(await page.locator("#trace-decided-by").innerText()).toMatch(/^block_destructive_shell \(bundle gemini-safe-shell/);
      expect(await page.locator("#trace-hooks").innerText()).toMatch(/block_destructive_shell gemini-safe-shell · ok .*· [\d.]+ (ms|µs)/);
      // The URL holds the filters and the chain: the link opens the same detail in a new tab.
      const link = page.url();
      expect(link).toMatch(/#\/decisions\?outcome=block&chain=/);
      const again = await open(WIDTHS[0], new URL(link).hash, { at: Date.now() + 10 * 60_000 });
      try {
        await expect.poll(() => again.locator("#trace-reason").innerText(), { timeout: 15_000 }).toBe(blockReason);
        expect(await again.locator("#f-outcome").inputValue()).toBe("block");
      } finally {
        await again.close();
      }
      // Export: the filtered rows as JSON lines.
      const [download] = await Promise.all([page.waitForEvent("download"), page.locator("#export").click()]);
      const lines = readFileSync((await download.path())!, "utf8").trim().split("\n").map((l) => JSON.parse(l));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ profile: "gemini-cli", event: "BeforeTool", outcome: "block", reason: blockReason });
      // A subject search finds it too, and a new block arrives live in the same list.
      await page.locator("#f-outcome").selectOption("");
      await page.locator("#f-subject").fill("rm -rf");
      await page.keyboard.press("Enter");
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(1);
      await expect.poll(() => page.locator("#stream-state").textContent(), { timeout: 15_000 }).toMatch(/^Live/);
      expect((await call(h.url, "POST", "/v1/profiles/gemini-cli/events/BeforeTool", { token: TOKENS.client, body: beforeTool("rm -rf ~/", "gem-3") })).status).toBe(200);
      await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);
      expect(await rows.first().locator(".subject").innerText()).toContain("rm -rf ~/");
      // Rows are reachable with the arrow keys.
      await rows.first().focus();
      await page.keyboard.press("ArrowDown");
      expect(await page.evaluate<string>("document.activeElement.dataset.chain")).toBe(await rows.nth(1).getAttribute("data-chain"));
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  }, 90_000);

  it("shows the failing hook first on Health; a chain with a failed hook never reads as a plain success; an outage turns the page stale until it is back", async () => {
    const page = await open(WIDTHS[0], "#/health");
    try {
      const first = page.locator("#health-hooks tbody tr").first();
      await expect.poll(() => first.getAttribute("data-hook"), { timeout: 15_000 }).toBe("flaky/explode");
      expect(await first.locator(".problems").innerText()).toMatch(/errors/);
      expect(await first.locator("td.errors").innerText()).toBe("20");
      // The per-bundle rollup puts the failing bundle first too.
      expect(await page.locator("#health-bundles tbody tr").first().getAttribute("data-bundle")).toBe("flaky");
      // Sortable: by calls, then back to problems first.
      await page.locator("#health-hooks th button", { hasText: "Calls" }).click();
      expect(await page.locator("#health-hooks th[aria-sort]").innerText()).toContain("Calls");
      // An outage: every number is stale, the banner says since when, the page retries with backoff.
      await page.route("**/v1/status", (route) => route.abort("connectionrefused"));
      await expect.poll(() => page.locator("#outage").isVisible(), { timeout: 20_000 }).toBe(true);
      expect(await page.locator("#outage").innerText()).toMatch(/Server unreachable.*Retrying in \d+ s/s);
      expect(await page.locator("#health-summary").getAttribute("class")).toContain("stale");
      expect(await page.locator("#health-hooks").getAttribute("class")).toContain("stale");
      await page.unroute("**/v1/status");
      await page.locator("#outage button", { hasText: "Retry now" }).click();
      await expect.poll(() => page.locator("#outage").isVisible(), { timeout: 15_000 }).toBe(false);
      expect(await page.locator("#health-hooks").getAttribute("class")).not.toContain("stale");
    } finally {
      await page.close();
    }
    // Decisions: a VCP chain whose hook threw reads "· 1 error", not a green success.
    const decisions = await open(WIDTHS[0], "#/decisions?hook=explode");
    try {
      const row = decisions.locator("#decisions-body tr[data-chain]").first();
      await row.waitFor({ timeout: 15_000 });
      expect(await row.locator(".outcome").innerText()).toMatch(/· 1 error/);
      expect(await row.locator(".outcome .chip").getAttribute("class")).not.toMatch(/\bok\b/);
    } finally {
      await decisions.close();
    }
  }, 90_000);

  it("answers an approval from the badge: the count shows on every page and in the title, the dialog focuses the hook's default and shows the request", async () => {
    expect((await call(h.url, "PUT", "/v1/bundles/prod-ask", { token: TOKENS.operator, body: signed(askManifest, ASK_CODE) })).status).toBe(201);
    const page = await open(WIDTHS[0], "#/health");
    try {
      const waiting = call(h.url, "POST", "/v1/profiles/amplifier/events/tool:pre?wait_approval=1", { token: TOKENS.client, body: { event: "tool:pre", data: { session_id: "amp-1", tool_name: "bash", tool_input: { command: "kubectl apply -f prod.yaml" } } } });
      const badge = page.locator("#approvals-badge");
      await expect.poll(() => badge.isVisible(), { timeout: 15_000 }).toBe(true);
      expect(await badge.innerText()).toMatch(/^1/);
      expect(await page.title()).toMatch(/^\(1\) Health/);
      await badge.click();
      const dialog = page.locator("#approval-dialog");
      await dialog.waitFor({ timeout: 15_000 });
      // The hook's default is deny: focus is on Deny, so Enter does what the timeout would.
      expect(await page.evaluate<string>("document.activeElement.dataset.option")).toBe("Deny");
      await page.keyboard.press("Enter");
      const answered = await waiting;
      expect(answered.status).toBe(200);
      expect(answered.body.native.approval).toMatchObject({ state: "denied", decision: "Deny", decided_by: "ops" });
      await expect.poll(() => badge.isVisible()).toBe(false);
      expect(await page.title()).toMatch(/^Approvals/);
    } finally {
      await page.close();
    }
  }, 60_000);

  it("the approval dialog shows what the agent asked to do: the full tool input, redacted, as text in a focusable block; axe stays clean", async () => {
    const page = await open(WIDTHS[0], "#/approvals");
    try {
      const secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123";
      const tool_input = { command: "kubectl apply -f prod.yaml --context <b>prod</b>", env: { API_KEY: secret }, args: ["--wait", "--timeout=5m"] };
      const waiting = call(h.url, "POST", "/v1/profiles/amplifier/events/tool:pre?wait_approval=1", { token: TOKENS.client, body: { event: "tool:pre", data: { session_id: "amp-3", tool_name: "bash", tool_input } } });
      await page.locator("#approval-dialog").waitFor({ timeout: 15_000 });
      const block = page.locator("#approval-input-text");
      await block.waitFor({ timeout: 15_000 });
      const text = await block.innerText();
      // The command and its arguments as the agent sent them; markup in them stays text.
      expect(text).toContain("kubectl apply -f prod.yaml --context <b>prod</b>");
      expect(text).toContain("--timeout=5m");
      expect(text).toContain('"tool_name": "bash"');
      expect(await page.locator("#approval-input-text b").count()).toBe(0);
      // A secret in the arguments never reaches the console.
      expect(text).not.toContain(secret);
      expect(await page.content()).not.toContain(secret);
      // Keyboard-reachable (a long input scrolls), and the open dialog passes axe.
      await block.focus();
      expect(await page.evaluate<string>("document.activeElement.id")).toBe("approval-input-text");
      expect(await axe(page), "approvals page with the dialog open").toEqual([]);
      await page.locator("#approval-dialog button", { hasText: "Deny" }).click();
      expect((await waiting).body.native.approval.state).toBe("denied");
    } finally {
      // Whatever happened above, the waiting request ends here.
      for (const a of (await call(h.url, "GET", "/v1/approvals?session=amp-3&state=pending", { token: TOKENS.operator })).body.approvals) {
        await call(h.url, "POST", `/v1/approvals/${a.id}`, { token: TOKENS.operator, body: { decision: "Deny" } });
      }
      await page.close();
    }
  }, 60_000);

  it("a pending approval the server forgot (restart) disappears with a message", async () => {
    const page = await open(WIDTHS[0], "#/approvals");
    try {
      const waiting = call(h.url, "POST", "/v1/profiles/amplifier/events/tool:pre?wait_approval=1", { token: TOKENS.client, body: { event: "tool:pre", data: { session_id: "amp-2" } } }).catch(() => undefined);
      await page.locator("#approval-dialog").waitFor({ timeout: 15_000 });
      // The server restarts: its in-memory approvals are gone. Seen from the page: the stream drops, and
      // the server it reconnects to has no approval (an empty list, a stream with no pending one).
      await page.route("**/v1/approvals", (route) => route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ approvals: [] }) }));
      await page.route("**/v1/approvals/stream", (route) => route.fulfill({ status: 200, contentType: "text/event-stream", body: 'event: hello\ndata: {"principal":"ops"}\n\n' }));
      h.server.app.server.closeAllConnections();
      await expect.poll(() => page.locator("#approval-dialog").count(), { timeout: 20_000 }).toBe(0);
      expect(await page.locator("#approval-notices").innerText()).toMatch(/prod_guard \(session amp-2\) is no longer pending on the server/);
      await page.unroute("**/v1/approvals");
      await page.unroute("**/v1/approvals/stream");
      // Decide it so the waiting request ends.
      const listed = await call(h.url, "GET", "/v1/approvals?state=pending", { token: TOKENS.operator });
      for (const a of listed.body.approvals) await call(h.url, "POST", `/v1/approvals/${a.id}`, { token: TOKENS.operator, body: { decision: "Deny" } });
      await waiting;
    } finally {
      await page.close();
    }
  }, 60_000);

  for (const viewport of WIDTHS) {
    it(`every page at ${viewport.width}×${viewport.height}: axe finds no serious or critical violation, nothing is off-screen`, async () => {
      const page = await open(viewport, "#/decisions");
      try {
        for (const id of PAGES) {
          await page.evaluate(`location.hash = "#/${id}"`);
          await page.locator(`.page-${id} h1`).waitFor();
          // Wait for each page's content, not for a time.
          if (id === "decisions") await page.locator("#decisions-summary", { hasText: /chain/ }).waitFor({ timeout: 15_000 });
          if (id === "health") await page.locator("#health-hooks tbody tr").first().waitFor({ timeout: 15_000 });
          if (id === "bundles") await page.locator("#bundles-table").waitFor({ timeout: 15_000 });
          if (id === "chains") await page.locator("section.chain").first().waitFor({ timeout: 15_000 });
          expect(await axe(page), `${id} at ${viewport.width} px`).toEqual([]);
          expect(await page.evaluate<number>("document.documentElement.scrollWidth"), id).toBeLessThanOrEqual(viewport.width);
          // Every nav link is on screen (the nav wraps on a phone instead of scrolling sideways).
          const offscreen = await page.evaluate<string[]>(`[...document.querySelectorAll("nav a")].filter((a) => { const r = a.getBoundingClientRect(); return r.left < 0 || r.right > window.innerWidth; }).map((a) => a.textContent)`);
          expect(offscreen, id).toEqual([]);
        }
      } finally {
        await page.close();
      }
    }, 120_000);
  }
});
