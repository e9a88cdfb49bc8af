// The operator console in a real browser: headless Chromium from Debian's package (`apt-get install
// chromium`; .ci/run installs it), driven by playwright-core — nothing is downloaded at test time —
// against the real server and runtime. Screenshots of each page go to test-results/console/.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { renderHtml } from "../../bench/sandbox/report-html.js";
import { makeCase, makeReport, notContained } from "../unit/bench/sandbox-fixtures.js";
import { call, constitution, events, settings, signed, TOKENS } from "./helpers.js";
import { CONSOLE_CODE, consoleManifest, startConsoleHarness, XSS, type ConsoleHarness } from "./console-helpers.js";

const CHROMIUM = process.env.VCP_CHROMIUM ?? "/usr/bin/chromium";
const SHOTS = join(import.meta.dirname, "..", "..", "test-results", "console");
// CI installs Chromium (.ci/run), so there a missing binary fails the run; elsewhere the file is skipped.
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs it with apt-get install -y chromium`);

describe.skipIf(!available)("operator console in Chromium", () => {
  let h: ConsoleHarness;
  let browser: Browser;
  let page: Page;
  const dialogs: string[] = [];
  /** CSP violations and uncaught page errors: there must be none. */
  const problems: string[] = [];

  /** Every input and select of the page has a label a screen reader announces. */
  const unlabelled = (p: Page) => p.evaluate<string[]>(`[...document.querySelectorAll("input, select")].filter((e) => e.labels.length === 0).map((e) => e.id || e.name)`);

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // 25 chains/s per page: the 20-chain burst below fits, 150 chains at once are sampled.
    h = await startConsoleHarness({ stream: { maxEventsPerSecond: 25 } });
    const cases = [
      makeCase("cpu-loop", "resource-exhaustion"),
      makeCase("heap-bomb", "resource-exhaustion", { background: { window_ms: 300, samples: 80, p50_ms: 1.2, p99_ms: 5.5, errors: 0, error_kinds: {}, p50_ratio: 1.2, p99_ratio: 2.7 } }),
      notContained(makeCase("fork-bomb", "process-killers"), `guest said ${XSS}`),
    ];
    const report = makeReport(cases);
    writeFileSync(join(h.reportDir, "report.json"), JSON.stringify(report));
    writeFileSync(join(h.reportDir, "report.html"), renderHtml(report));
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) problems.push(m.text());
    });
    page.on("pageerror", (err) => problems.push(String(err)));
    // Every asset the page loads exists (the icon included): no 404 outside the API.
    page.on("response", (r) => {
      const path = new URL(r.url()).pathname;
      if (r.status() >= 400 && !path.startsWith("/v1/")) problems.push(`${r.status()} ${path}`);
    });
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  }, 60_000);

  /** Fire `n` pre_inject chains in session browser-1 through the API, as a client would. */
  async function fire(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const fired = await call(h.url, "POST", "/v1/sessions/browser-1/chains/pre_inject", { token: TOKENS.client, body: { event: events.pre_inject } });
      expect(fired.status).toBe(200);
    }
  }

  const shot = (name: string, p: Page = page) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: false });

  async function login(p: Page, token: string): Promise<void> {
    await p.locator("#token").fill(token);
    await p.keyboard.press("Enter");
  }

  it("a wrong token, then a client token, show the login form with the server's reason; the operator token gets in", async () => {
    await page.goto(`${h.url}/console`);
    await expect.poll(() => page.locator("label[for=token]").textContent()).toBe("Operator token");
    await login(page, "not-a-token");
    await expect.poll(() => page.locator("#login-error").textContent()).toBe("UNAUTHENTICATED: the bearer token matches no configured principal");
    await shot("login");
    await login(page, TOKENS.client);
    await expect.poll(() => page.locator("#login-error").textContent()).toMatch(/^FORBIDDEN: a client token may not use GET \/v1\/status/);
    await login(page, TOKENS.operator);
    // Decisions is the first page: "what was blocked, and why?"
    await page.locator("h1", { hasText: "Decisions" }).waitFor();
    // The token is in this tab's session storage and in no URL.
    expect(await page.evaluate(() => sessionStorage.getItem("vcp-hooks.operator-token"))).toBe(TOKENS.operator);
    expect(page.url()).not.toContain(TOKENS.operator);
  }, 60_000);

  it("uploads a signed bundle with the file picker and lists it; the same file again says unchanged; a tampered one shows the server's code and message verbatim", async () => {
    await page.locator('nav a[data-page="bundles"]').click();
    const first = Buffer.from(JSON.stringify(signed(consoleManifest(), CONSOLE_CODE)));
    await page.locator("#bundle-file").setInputFiles({ name: "console-demo.vcpb", mimeType: "application/json", buffer: first });
    await page.locator('#bundles-table tr[data-bundle="console-demo"]').waitFor();
    // The same revision again: the server answers unchanged, and so does the page.
    await page.locator("#bundle-file").setInputFiles({ name: "console-demo-again.vcpb", mimeType: "application/json", buffer: first });
    await expect.poll(() => page.locator(".message.ok").innerText()).toMatch(/^Unchanged console-demo@1\.0\.0 \(sha256:.*\) is already the active revision/);
    const row = await page.locator('#bundles-table tr[data-bundle="console-demo"]').innerText();
    expect(row).toContain("1.0.0");
    expect(row).toContain("ops");
    expect(row).toContain("deployment");
    const tampered = signed(consoleManifest("1.0.1"), CONSOLE_CODE);
    (tampered as { code: string }).code += "\n// changed after signing";
    await page.locator("#bundle-file").setInputFiles({ name: "tampered.vcpb", mimeType: "application/json", buffer: Buffer.from(JSON.stringify(tampered)) });
    const direct = await call(h.url, "PUT", "/v1/bundles/console-demo", { token: TOKENS.operator, raw: JSON.stringify(tampered), contentType: "application/vnd.vcp.bundle+json" });
    await expect.poll(() => page.locator(".message.error").innerText()).toBe(`${direct.body.error.code} ${direct.body.error.message}`);
    // The refused install is listed with its error, and the installed revision stayed.
    await expect.poll(() => page.locator('#bundles-table tr[data-bundle="console-demo"] ul.errors').innerText(), { timeout: 15_000 }).toContain(direct.body.error.code);
    await shot("bundles");
    expect(await unlabelled(page)).toEqual([]);
    // Drag and drop: an update to 1.0.1 dropped on the drop zone is installed and listed.
    const update = JSON.stringify(signed(consoleManifest("1.0.1"), CONSOLE_CODE));
    const transfer = await page.evaluateHandle(`(() => { const t = new DataTransfer(); t.items.add(new File([${JSON.stringify(update)}], "console-demo-1.0.1.vcpb", { type: "application/json" })); return t; })()`);
    await page.dispatchEvent("#dropzone", "drop", { dataTransfer: transfer });
    await expect.poll(() => page.locator(".message.ok").innerText()).toMatch(/^Installed console-demo@1\.0\.1 \(sha256:/);
    await expect.poll(() => page.locator('#bundles-table tr[data-bundle="console-demo"] td').first().innerText()).toBe("1.0.1");
  }, 60_000);

  it("a bundle's page: its revisions (who signed, when, digest), the manifest diff of two, hooks per event, and a confirmed roll back", async () => {
    await page.locator('#bundles-table tr[data-bundle="console-demo"] th a').click();
    const rows = page.locator("#revisions-table tbody tr");
    await expect.poll(() => rows.count(), { timeout: 15_000 }).toBe(2);
    expect(await rows.first().innerText()).toMatch(/^1\.0\.1\s+active\s+sha256:\S+\s+ops\s+\S/);
    expect(await rows.nth(1).innerText()).toMatch(/^1\.0\.0\s+sha256:\S+\s+ops/);
    await page.locator("button", { hasText: "Show the manifest diff" }).click();
    await expect.poll(() => page.locator("#diff-out").innerText()).toContain('replace /version: "1.0.1"');
    await expect.poll(() => page.locator("#bundle-hook-groups").innerText()).toMatch(/pre_inject: redact_note \(priority 50\)/);
    // Roll back: the first click only arms the button.
    const back = rows.nth(1).locator("button");
    await back.click();
    await expect.poll(() => back.innerText()).toBe("Confirm roll back to 1.0.0");
    expect((await call(h.url, "GET", "/v1/bundles/console-demo", { token: TOKENS.operator })).body.version).toBe("1.0.1");
    await back.click();
    await expect.poll(() => page.locator("#bundle-message").innerText()).toMatch(/^Rolled back console-demo is at 1\.0\.0 \(sha256:/);
    await expect.poll(() => page.locator("#bundle-version").innerText()).toBe("1.0.0");
    expect((await call(h.url, "GET", "/v1/bundles/console-demo", { token: TOKENS.operator })).body.version).toBe("1.0.0");
    await shot("bundle-detail");
    // And forward again to 1.0.1 (the tests below use it).
    const forward = page.locator("#revisions-table tbody tr", { hasText: "1.0.1" }).locator("button");
    await forward.click();
    await forward.click();
    await expect.poll(() => page.locator("#bundle-version").innerText()).toBe("1.0.1");
    expect(await unlabelled(page)).toEqual([]);
  }, 60_000);

  it("shows the resolved chain order", async () => {
    // Keyboard only: from the first page link, Tab reaches the next one and Enter opens it.
    await page.locator('nav a[data-page="bundles"]').focus();
    await page.keyboard.press("Tab");
    expect(await page.evaluate<string>("document.activeElement.dataset.page")).toBe("chains");
    await page.keyboard.press("Enter");
    await page.locator("section.chain", { hasText: "pre_inject" }).waitFor();
    expect(await page.locator('nav a[aria-current="page"]').innerText()).toBe("Chains");
    expect(await page.locator("section.chain").first().innerText()).toMatch(/redact_note\s+console-demo\s+50\s+deployment/);
    await shot("chains");
  }, 30_000);

  it("a chain fired through the API appears live in decisions; its detail shows guest text as text, and the layout does not move", async () => {
    await page.locator('nav a[data-page="decisions"]').click();
    await expect.poll(() => page.locator("#stream-state").textContent(), { timeout: 15_000 }).toMatch(/^Live/);
    // Strings run in the page (this file is type-checked without the DOM library).
    const boxes = () => page.evaluate<string[]>(`["form.filters", "#stream-state", "#decisions", "#trace"].map((s) => JSON.stringify(document.querySelector(s).getBoundingClientRect()))`);
    const before = await boxes();
    const opened = await call(h.url, "POST", "/v1/sessions", { token: TOKENS.client, body: { session_id: "browser-1", context: { note: "mail ana@example.org" }, constitution } });
    expect(opened.status).toBe(201);
    for (let i = 0; i < 20; i++) {
      const fired = await call(h.url, "POST", "/v1/sessions/browser-1/chains/pre_inject", { token: TOKENS.client, body: { event: events.pre_inject } });
      expect(fired.status).toBe(200);
    }
    const live = page.locator("#decisions-body tr[data-live]");
    await expect.poll(() => live.count(), { timeout: 15_000 }).toBe(20);
    expect(await boxes()).toEqual(before);
    await live.first().click();
    const annotations = page.locator("#trace pre.annotations");
    await annotations.waitFor();
    expect(await annotations.textContent()).toContain(XSS);
    expect(await page.locator("#trace img").count()).toBe(0);
    expect(await page.locator("#trace ul.diff").innerText()).toContain('/context/note: "mail [email]"');
    // Keyboard: the arrow keys move between rows and Enter opens one.
    await live.first().focus();
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    await expect.poll(() => live.nth(1).getAttribute("aria-current")).toBe("true");
    expect(dialogs).toEqual([]);
    expect(await unlabelled(page)).toEqual([]);
    await shot("decisions");
  }, 60_000);

  it("a dropped stream says so, reconnects with backoff, and is live again", async () => {
    // Cut every connection of the server, the page's stream included (as a proxy or network would).
    h.server.app.server.closeAllConnections();
    await expect.poll(() => page.locator("#stream-state").textContent(), { timeout: 10_000 }).toMatch(/^Stream dropped \(.*\)\. Reconnecting in 1 s \(attempt 1\)/);
    expect(await page.locator("#stream-state").getAttribute("role")).toBe("status");
    await expect.poll(() => page.locator("#stream-state").textContent(), { timeout: 15_000 }).toMatch(/^Live/);
    // The rows already shown stay.
    expect(await page.locator("#decisions-body tr[data-live]").count()).toBe(20);
  }, 40_000);

  it("health shows per-hook calls and latency charts, the sandbox and the audit head", async () => {
    await page.locator('nav a[data-page="health"]').click();
    const card = page.locator('#health-hooks tr[data-hook="console-demo/redact_note"]');
    await card.waitFor();
    await expect.poll(() => card.locator("td.calls").innerText(), { timeout: 10_000 }).toBe("20");
    // Traffic across a few polls, so the sparklines have something to draw.
    for (let round = 0; round < 3; round++) {
      await fire(4 + round * 3);
      await page.waitForTimeout(2100);
    }
    await expect.poll(() => card.locator("td.calls").innerText(), { timeout: 10_000 }).toBe("41");
    expect(await card.locator("svg.spark path").count()).toBeGreaterThanOrEqual(2);
    expect(await card.locator("svg.spark").count()).toBe(1);
    const head = await call(h.url, "GET", "/v1/audit/head", { token: TOKENS.operator });
    await expect.poll(() => page.locator("#audit-head").textContent(), { timeout: 10_000 }).toMatch(/^sha256:/);
    expect(head.body.hash).toMatch(/^sha256:/);
    await shot("health");
  }, 30_000);

  it("shows the security report and an empty approvals page", async () => {
    await page.locator('nav a[data-page="security"]').click();
    await expect.poll(() => page.locator("#verdict").innerText()).toBe("FAIL — 1 of 3 cases NOT contained");
    expect(await page.locator("figure.chart svg rect").count()).toBeGreaterThan(0);
    expect(await page.locator("#cases").innerText()).toContain(`guest said ${XSS}`);
    await shot("security");
    const [download] = await Promise.all([page.waitForEvent("download"), page.locator("button", { hasText: "Download report.html" }).click()]);
    expect(download.suggestedFilename()).toBe("vcp-hooks-security-report.html");
    await page.locator('nav a[data-page="approvals"]').click();
    await expect.poll(() => page.locator("#no-approvals").innerText()).toBe("No approvals yet.");
    expect(dialogs).toEqual([]);
  }, 30_000);

  it("an Amplifier chain that asks: the dialog shows the prompt (as text), options and a countdown; the operator allows; the waiting request answers continue", async () => {
    const amplifier = {
      bundle: "console-ask",
      version: "1.0.0",
      trust: "deployment",
      profile: "amplifier",
      hooks: [{ name: "prod_guard", event: "tool:pre", action: "ask", priority: 10, timeout_ms: 2000 }],
    };
    const code = `var __vcp_bundle = { ask: function (input) { return { action: "ask_user", approval_prompt: "Deploy to prod? " + input.data.note, approval_options: ["Allow once", "Allow always", "Deny"], approval_timeout: 120, approval_default: "deny" }; } };`;
    const installed = await call(h.url, "PUT", "/v1/bundles/console-ask", { token: TOKENS.operator, body: signed(amplifier, code) });
    expect(installed.status).toBe(201);
    await page.locator('nav a[data-page="approvals"]').click();
    await expect.poll(() => page.locator("#approvals-state").textContent(), { timeout: 15_000 }).toMatch(/^Live/);
    // The agent's request waits for the decision (?wait_approval=1).
    const waiting = call(h.url, "POST", "/v1/profiles/amplifier/events/tool:pre?wait_approval=1", { token: TOKENS.client, body: { event: "tool:pre", data: { session_id: "amp-1", note: XSS } } });
    const dialog = page.locator("#approval-dialog");
    await dialog.waitFor({ timeout: 15_000 });
    expect(await page.locator("#approval-prompt").innerText()).toBe(`Deploy to prod? ${XSS}`);
    expect(await page.locator("#approval-prompt img").count()).toBe(0);
    expect(await page.locator("#approval-hook").innerText()).toBe("prod_guard");
    expect(await dialog.locator("button").allInnerTexts()).toEqual(["Allow once", "Allow always", "Deny"]);
    await expect.poll(() => page.locator("#approval-countdown").innerText()).toMatch(/^[12]:\d\d$/);
    const first = await page.locator("#approval-countdown").innerText();
    await expect.poll(() => page.locator("#approval-countdown").innerText(), { timeout: 10_000 }).not.toBe(first);
    await shot("approvals");
    await dialog.locator("button", { hasText: "Allow once" }).click();
    const answered = await waiting;
    expect(answered.status).toBe(200);
    expect(answered.body.native.action).toBe("continue");
    expect(answered.body.native.approval).toMatchObject({ state: "granted", decision: "Allow once", decided_by: "ops" });
    await expect.poll(() => page.locator("#approval-dialog").count()).toBe(0);
    await expect.poll(() => page.locator('#approvals-rows tr[data-state="granted"]').count()).toBe(1);
    expect(await page.locator('#approvals-rows tr[data-state="granted"]').innerText()).toContain("ops");
    const listed = await call(h.url, "GET", "/v1/approvals?session=amp-1", { token: TOKENS.operator });
    expect(listed.body.approvals.map((a: { state: string }) => a.state)).toEqual(["granted"]);
    // Later tests count the installed bundles: this one goes again.
    expect((await call(h.url, "DELETE", "/v1/bundles/console-ask", { token: TOKENS.operator })).status).toBe(200);
    expect(dialogs).toEqual([]);
    expect(problems).toEqual([]);
  }, 60_000);

  it("150 chains at once: the server samples above the page's rate, the page says how many, and stays usable", async () => {
    await page.locator('nav a[data-page="decisions"]').click();
    await expect.poll(() => page.locator("#stream-state").textContent(), { timeout: 15_000 }).toMatch(/^Live · at most 25 chains\/s/);
    const total = 150;
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < total) {
          next++;
          const fired = await call(h.url, "POST", "/v1/sessions/browser-1/chains/pre_inject", { token: TOKENS.client, body: { event: events.pre_inject } });
          expect(fired.status).toBe(200);
        }
      }),
    );
    const counts = async () => {
      const m = /^(\d+) received · (\d+) sampled out by the server · (\d+) dropped$/.exec((await page.locator("#stream-counters").textContent()) ?? "");
      return m ? { received: Number(m[1]), sampled: Number(m[2]), dropped: Number(m[3]) } : null;
    };
    await expect.poll(async () => { const c = await counts(); return c && c.received + c.sampled + c.dropped; }, { timeout: 15_000 }).toBe(total);
    const c = (await counts())!;
    expect(c.sampled).toBeGreaterThan(0);
    await expect.poll(() => page.locator("#decisions-body tr[data-live]").count()).toBe(c.received);
    // Still responsive: the controls answer.
    await page.locator("button", { hasText: "Pause" }).click();
    expect(await page.locator("button", { hasText: "Resume" }).getAttribute("aria-pressed")).toBe("true");
    expect(problems).toEqual([]);
  }, 60_000);

  it("a token revoked while the page is open (config reload) sends the operator back to the login form with the reason", async () => {
    h.server.update({ ...settings(), auth: settings().auth.filter((a) => a.role !== "operator") });
    try {
      await page.locator('nav a[data-page="bundles"]').click();
      await expect.poll(() => page.locator("#login-error").textContent(), { timeout: 15_000 }).toBe("UNAUTHENTICATED: the bearer token matches no configured principal");
      expect(await page.evaluate(() => sessionStorage.getItem("vcp-hooks.operator-token"))).toBeNull();
    } finally {
      h.server.update(settings());
    }
  }, 30_000);

  it("at a 390 px phone width nothing overflows sideways", async () => {
    const phone = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    try {
      await phone.goto(`${h.url}/console`);
      await login(phone, TOKENS.operator);
      for (const id of ["bundles", "decisions", "health", "security", "approvals"]) {
        await phone.evaluate(`location.hash = "#/${id}"`);
        await phone.locator(`.page-${id}`).waitFor();
        if (id === "decisions") {
          await expect.poll(() => phone.locator("#stream-state").textContent(), { timeout: 15_000 }).toMatch(/^Live/);
          await fire(3);
          await expect.poll(() => phone.locator("#decisions-body tr[data-live]").count(), { timeout: 15_000 }).toBe(3);
          // The detail is below the list on a phone: opening a chain scrolls it into view.
          await phone.locator("#decisions-body tr[data-live]").first().click();
          await expect.poll(() => phone.evaluate<boolean>(`(() => { const r = document.querySelector("#trace").getBoundingClientRect(); return r.top >= 0 && r.top < window.innerHeight; })()`)).toBe(true);
          await phone.evaluate("window.scrollTo(0, 0)");
        }
        await phone.waitForTimeout(400);
        expect(await phone.evaluate<number>("document.documentElement.scrollWidth"), id).toBeLessThanOrEqual(390);
        await shot(`${id}-phone`, phone);
      }
    } finally {
      await phone.close();
    }
  }, 60_000);

  it("removes a bundle in two steps (no modal dialog)", async () => {
    await page.goto(`${h.url}/console#/bundles`);
    await login(page, TOKENS.operator);
    const remove = page.locator('#bundles-table tr[data-bundle="console-demo"] button');
    await remove.click();
    await expect.poll(() => remove.innerText()).toBe("Confirm remove");
    // One click only arms it: the bundle is still installed.
    expect((await call(h.url, "GET", "/v1/bundles/console-demo", { token: TOKENS.operator })).status).toBe(200);
    await remove.click();
    await expect.poll(() => page.locator(".message.ok").innerText()).toBe("Removed console-demo@1.0.1");
    await expect.poll(() => page.locator("#bundles-table").count()).toBe(0);
    expect((await call(h.url, "GET", "/v1/bundles/console-demo", { token: TOKENS.operator })).status).toBe(404);
    expect(dialogs).toEqual([]);
  }, 30_000);
});
