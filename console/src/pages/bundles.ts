/**
 * Bundles: what is installed (version, digest, signer, trust, activation, failed installs), upload
 * and remove; `#/bundles/<name>` is one bundle's page (bundle-detail.ts).
 */
import { api, ApiError, errorText } from "../api.js";
import { fmtTime } from "../format.js";
import { h, replace, scrollRegion, shortDigest } from "../dom.js";
import type { PageContext } from "../page.js";
import { confirmButton } from "../confirm.js";
import { mountBundleDetail } from "./bundle-detail.js";

export interface BundleInfo {
  bundle: string;
  version: string;
  digest: string;
  trust: string;
  hooks: string[];
  session_hooks: string[];
  activated_at: string;
  signed_by: string | null;
  profile?: string;
  errors: Array<{ code: string; message: string; at: string }>;
  /** Upload answers: the digest was already the active revision (200), or a new one went live (201). */
  unchanged?: boolean;
}
interface Status {
  sandbox?: { quarantined?: string[]; slowBundles?: string[]; demotedBundles?: string[] };
}

export function mountBundles(root: HTMLElement, ctx: PageContext): () => void {
  if (ctx.param !== "") return mountBundleDetail(root, ctx.param);
  const message = h("div", { class: "message", role: "status", "aria-live": "polite" });
  const fileInput = h("input", { type: "file", id: "bundle-file", accept: ".vcpb,application/json,application/vnd.vcp.bundle+json" });
  const drop = h(
    "div",
    { class: "dropzone", id: "dropzone" },
    h("p", {}, "Drop a signed ", h("code", {}, ".vcpb"), " here, or "),
    h("label", { for: "bundle-file", class: "button" }, "choose a file…"),
    fileInput,
  );
  const table = scrollRegion("Installed bundles", {});
  root.append(h("h1", {}, "Bundles"), h("section", { "aria-labelledby": "upload-h" }, h("h2", { id: "upload-h" }, "Install or update"), drop, message), h("section", { "aria-labelledby": "installed-h" }, h("h2", { id: "installed-h" }, "Installed"), table));

  // The server's code (or what failed) in bold, then its message verbatim, as text.
  const show = (kind: "ok" | "error", head: string, text: string) => {
    message.className = `message ${kind}`;
    message.setAttribute("role", kind === "error" ? "alert" : "status");
    replace(message, h("strong", { class: "code" }, head), " ", h("span", { class: "text" }, text));
  };

  async function upload(file: File): Promise<void> {
    const text = await file.text();
    let name: unknown;
    try {
      name = (JSON.parse(text) as { manifest?: { bundle?: unknown } }).manifest?.bundle;
    } catch (err) {
      show("error", "not a .vcpb:", `${file.name} is not JSON (${(err as Error).message})`);
      return;
    }
    if (typeof name !== "string" || name === "") {
      show("error", "not a .vcpb:", `${file.name} has no manifest.bundle`);
      return;
    }
    show("ok", "Uploading", `${file.name} as ${name}…`);
    try {
      const info = await api<BundleInfo>("PUT", `/v1/bundles/${encodeURIComponent(name)}`, text, "application/vnd.vcp.bundle+json");
      if (info.unchanged === true) show("ok", "Unchanged", `${info.bundle}@${info.version} (${shortDigest(info.digest)}) is already the active revision: nothing was installed`);
      else show("ok", "Installed", `${info.bundle}@${info.version} (${shortDigest(info.digest)}), signed by ${info.signed_by ?? "nobody"}`);
    } catch (err) {
      // The server's code and message, verbatim.
      if (err instanceof ApiError) show("error", err.code, err.message);
      else show("error", "upload failed", String(err));
    }
    await refresh();
  }

  fileInput.addEventListener("change", () => {
    const file = fileInput.files?.[0];
    if (file) void upload(file).finally(() => (fileInput.value = ""));
  });
  drop.addEventListener("dragover", (e) => {
    e.preventDefault();
    drop.classList.add("over");
  });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const file = e.dataTransfer?.files[0];
    if (file) void upload(file);
  });

  async function remove(name: string): Promise<void> {
    try {
      const info = await api<BundleInfo>("DELETE", `/v1/bundles/${encodeURIComponent(name)}`);
      show("ok", "Removed", `${info.bundle}@${info.version}`);
    } catch (err) {
      if (err instanceof ApiError) show("error", err.code, err.message);
      else show("error", "remove failed", String(err));
    }
    await refresh();
  }

  async function refresh(): Promise<void> {
    let bundles: BundleInfo[];
    let status: Status = {};
    try {
      [{ bundles }, status] = await Promise.all([api<{ bundles: BundleInfo[] }>("GET", "/v1/bundles"), api<Status>("GET", "/v1/status")]);
    } catch (err) {
      replace(table, h("p", { class: "error", role: "alert" }, errorText(err)));
      return;
    }
    const quarantined = new Set(status.sandbox?.quarantined ?? []);
    const slow = new Set(status.sandbox?.slowBundles ?? []);
    if (bundles.length === 0) {
      replace(table, h("p", {}, "No bundle is installed."));
      return;
    }
    const hasProfile = bundles.some((b) => b.profile !== undefined);
    const rows = bundles.map((b) => {
      const button = confirmButton({ label: "Remove", confirm: "Confirm remove", ariaLabel: `Remove bundle ${b.bundle}`, onConfirm: () => remove(b.bundle) });
      const flags = [quarantined.has(b.digest) ? h("span", { class: "chip bad" }, "quarantined") : null, slow.has(b.digest) ? h("span", { class: "chip warn" }, "slow") : null];
      return h(
        "tr",
        { "data-bundle": b.bundle },
        h("th", { scope: "row", "data-label": "Bundle" }, h("a", { href: `#/bundles/${encodeURIComponent(b.bundle)}` }, b.bundle), " ", ...flags),
        h("td", { "data-label": "Version" }, b.version),
        hasProfile ? h("td", { "data-label": "Profile" }, b.profile ?? "–") : null,
        h("td", { "data-label": "Digest" }, h("code", { title: b.digest }, shortDigest(b.digest))),
        h("td", { "data-label": "Signer" }, b.signed_by ?? "unsigned"),
        h("td", { "data-label": "Trust" }, b.trust),
        h("td", { "data-label": "Hooks" }, String(b.hooks.length + b.session_hooks.length)),
        h("td", { "data-label": "Activated" }, h("time", { datetime: b.activated_at }, fmtTime(b.activated_at))),
        h(
          "td",
          { "data-label": "Failed installs" },
          b.errors.length === 0
            ? "–"
            : h("ul", { class: "errors" }, ...b.errors.map((e) => h("li", {}, h("strong", {}, e.code), " ", e.message, " ", h("time", { datetime: e.at }, `(${fmtTime(e.at)})`)))),
        ),
        h("td", { "data-label": "Remove" }, button),
      );
    });
    replace(
      table,
      h(
        "table",
        { id: "bundles-table", class: "stack" },
        h("caption", { class: "sr-only" }, "Installed bundles"),
        h(
          "thead",
          {},
          h("tr", {}, ...["Bundle", "Version", ...(hasProfile ? ["Profile"] : []), "Digest", "Signer", "Trust", "Hooks", "Activated", "Failed installs", ""].map((t) => h("th", { scope: "col" }, t))),
        ),
        h("tbody", {}, ...rows),
      ),
    );
  }

  void refresh();
  const timer = window.setInterval(() => void refresh(), 10_000);
  return () => window.clearInterval(timer);
}
