/**
 * The operator console: login, navigation and the pages. Hash routes (`#/bundles`, …) so the server
 * serves one page; the operator token is asked once per tab and kept in sessionStorage.
 */
import { api, ApiError, clearToken, getToken, setAuthFailureHandler, setToken } from "./api.js";
import { createApprovalsStore, type ApprovalsStore } from "./approvals-store.js";
import { h, replace } from "./dom.js";
import type { PageContext } from "./page.js";
import { parseHash } from "./route.js";
import { mountApprovals } from "./pages/approvals.js";
import { mountBundles } from "./pages/bundles.js";
import { mountChains } from "./pages/chains.js";
import { mountDecisions } from "./pages/decisions.js";
import { mountHealth } from "./pages/health.js";
import { mountSecurity } from "./pages/security.js";

const PAGES: Array<{ id: string; title: string; mount: (root: HTMLElement, ctx: PageContext) => () => void }> = [
  { id: "decisions", title: "Decisions", mount: mountDecisions },
  { id: "health", title: "Health", mount: mountHealth },
  { id: "approvals", title: "Approvals", mount: mountApprovals },
  { id: "bundles", title: "Bundles", mount: mountBundles },
  { id: "chains", title: "Chains", mount: mountChains },
  { id: "security", title: "Security report", mount: mountSecurity },
];

const app = document.getElementById("app")!;
let unmount: (() => void) | undefined;
let approvals: ApprovalsStore | undefined;
let stopBadge: (() => void) | undefined;
let pageTitle = "";
let pendingCount = 0;

/** "(2) Decisions · vcp-hooks console": pending approvals first, so a background tab shows them. */
function showTitle(): void {
  document.title = `${pendingCount > 0 ? `(${pendingCount}) ` : ""}${pageTitle} · vcp-hooks console`;
}

function showLogin(reason: string | null): void {
  unmount?.();
  unmount = undefined;
  layout = undefined;
  stopBadge?.();
  stopBadge = undefined;
  approvals?.stop();
  approvals = undefined;
  pendingCount = 0;
  const input = h("input", { id: "token", name: "token", type: "password", autocomplete: "off", required: true, spellcheck: "false", "aria-describedby": "token-help" });
  const error = reason ? h("p", { class: "error", id: "login-error", role: "alert" }, reason) : null;
  const form = h(
    "form",
    { class: "login", id: "login", "aria-labelledby": "login-h" },
    h("h1", { id: "login-h" }, "vcp-hooks console"),
    error,
    h("label", { for: "token" }, "Operator token"),
    input,
    h("p", { class: "hint", id: "token-help" }, "Kept in this tab's session storage only, and sent in the Authorization header — never in a URL."),
    h("button", { type: "submit" }, "Sign in"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const token = input.value.trim();
    if (token === "") return;
    setToken(token);
    void start();
  });
  replace(app, h("main", { id: "main", class: "login-wrap" }, form));
  input.focus();
}

setAuthFailureHandler((reason) => {
  clearToken();
  showLogin(reason);
});

function shell(): { main: HTMLElement; nav: HTMLElement } {
  const badge = h("span", { class: "badge", id: "approvals-badge", hidden: true });
  const nav = h(
    "nav",
    { "aria-label": "Console pages" },
    h("ul", {}, ...PAGES.map((p) => h("li", {}, h("a", { href: `#/${p.id}`, "data-page": p.id }, p.title, p.id === "approvals" ? badge : null)))),
  );
  approvals ??= createApprovalsStore();
  stopBadge?.();
  stopBadge = approvals.subscribe((s) => {
    pendingCount = s.pending.length;
    badge.hidden = pendingCount === 0;
    replace(badge, String(pendingCount), h("span", { class: "sr-only" }, ` pending`));
    showTitle();
  });
  const signOut = h("button", { type: "button", class: "signout" }, "Sign out");
  signOut.addEventListener("click", () => {
    clearToken();
    showLogin(null);
  });
  const main = h("main", { id: "main", tabindex: "-1" });
  // The skip link moves focus without touching the hash (the hash is the route).
  const skip = h("a", { class: "skip", href: "#main", onclick: (e: Event) => (e.preventDefault(), main.focus()) }, "Skip to content");
  replace(app, skip, h("header", {}, h("span", { class: "brand" }, "vcp-hooks"), nav, signOut), main);
  return { main, nav };
}

let layout: { main: HTMLElement; nav: HTMLElement } | undefined;

function route(): void {
  if (getToken() === null) return showLogin(null);
  layout ??= shell();
  unmount?.();
  const { id, param, query } = parseHash(location.hash, PAGES.map((p) => p.id));
  const page = PAGES.find((p) => p.id === id)!;
  for (const a of layout.nav.querySelectorAll("a")) {
    if (a.dataset.page === id) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  pageTitle = page.title;
  showTitle();
  const container = h("div", { class: `page page-${id}` });
  replace(layout.main, container);
  const setQuery = (q: string) => history.replaceState(null, "", `#/${id}${param ? `/${encodeURIComponent(param)}` : ""}${q ? `?${q}` : ""}`);
  unmount = page.mount(container, { approvals: approvals!, param, query, setQuery });
}

async function start(): Promise<void> {
  if (getToken() === null) return showLogin(null);
  try {
    // One authenticated call decides: a wrong, expired or client token goes back to the form with the reason.
    await api("GET", "/v1/status");
  } catch (err) {
    if (err instanceof ApiError && (err.status === 401 || err.status === 403)) return; // the handler showed the form
    clearToken();
    return showLogin(err instanceof ApiError ? `${err.code}: ${err.message}` : `The server did not answer: ${String(err)}`);
  }
  layout = undefined;
  route();
  document.getElementById("main")?.focus({ preventScroll: true });
}

window.addEventListener("hashchange", () => {
  if (getToken() === null) return;
  if (layout === undefined) return void start();
  route();
  // Focus moves to the new page, unless the page put it somewhere itself (an approval's default button).
  if (!layout.main.contains(document.activeElement)) layout.main.focus({ preventScroll: true });
});

void start();
