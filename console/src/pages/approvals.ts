/**
 * Approvals (Amplifier `ask_user`): not built yet. The page lists GET /v1/approvals when the server
 * has the route; a 404 means the Amplifier profile is not there yet, and the page says so.
 */
import { apiOptional, ApiError } from "../api.js";
import { h, jsonText, replace } from "../dom.js";

export function mountApprovals(root: HTMLElement): () => void {
  const body = h("div", { id: "approvals-body" }, h("p", {}, "Loading…"));
  root.append(h("h1", {}, "Approvals"), h("p", { class: "badge-placeholder" }, "Placeholder: approval dialogs are not built yet."), body);
  void (async () => {
    try {
      const found = await apiOptional<{ approvals?: unknown[] }>("/v1/approvals");
      if ("missing" in found) {
        replace(body, h("div", { class: "empty", id: "no-approvals" }, h("p", {}, h("strong", {}, "Approvals arrive with the Amplifier profile."), " This server has no ", h("code", {}, "GET /v1/approvals"), " route yet.")));
        return;
      }
      const list = found.value.approvals ?? [];
      replace(body, list.length === 0 ? h("p", {}, "No pending approvals.") : h("ul", { class: "approvals" }, ...list.map((a) => h("li", {}, h("pre", { class: "guest" }, jsonText(a, 2000))))));
    } catch (err) {
      replace(body, h("p", { class: "error", role: "alert" }, err instanceof ApiError ? `${err.code}: ${err.message}` : String(err)));
    }
  })();
  return () => undefined;
}
