/**
 * One bundle (`#/bundles/<name>`): its active revision, the revisions the server keeps (who signed,
 * when, digest; roll back to one, confirmed), the difference between two revisions' manifests, its
 * hooks per profile and event, its recent decisions, and remove (confirmed). Operator token only: the
 * API answers 403 to anyone else.
 *
 * SECURITY: manifests, hook names and reasons are bundle- or guest-controlled: text nodes only.
 */
import { compare } from "fast-json-patch";
import { api, ApiError, errorText } from "../api.js";
import { confirmButton } from "../confirm.js";
import type { DecisionRecord } from "../decision.js";
import { diffView } from "../diff-view.js";
import { fmtClock, fmtTime } from "../format.js";
import { groupOf, type Hook } from "../group.js";
import { h, replace, scrollRegion, shortDigest } from "../dom.js";
import type { BundleInfo } from "./bundles.js";

export interface Revision {
  version: string;
  digest: string;
  signed_by: string | null;
  activated_at: string;
  activated_by?: string | null;
  active: boolean;
}

export function mountBundleDetail(root: HTMLElement, name: string): () => void {
  const message = h("div", { class: "message", role: "status", "aria-live": "polite", id: "bundle-message" });
  const facts = h("div", { id: "bundle-facts" }, h("p", {}, "Loading…"));
  const revisions = h("div", { id: "bundle-revisions" });
  const diff = h("div", { id: "bundle-diff" });
  const hooks = h("div", { id: "bundle-hooks" });
  const decisions = h("div", { id: "bundle-decisions" });
  root.append(
    h("p", {}, h("a", { href: "#/bundles" }, "← All bundles")),
    h("h1", {}, "Bundle ", h("span", { class: "mono" }, name)),
    message,
    facts,
    h("section", { "aria-labelledby": "rev-h" }, h("h2", { id: "rev-h" }, "Revisions"), revisions, diff),
    h("section", { "aria-labelledby": "hooks-h" }, h("h2", { id: "hooks-h" }, "Hooks per profile and event"), hooks),
    h("section", { "aria-labelledby": "dec-h" }, h("h2", { id: "dec-h" }, "Recent decisions"), decisions),
  );
  const path = `/v1/bundles/${encodeURIComponent(name)}`;
  let stopped = false;

  const show = (kind: "ok" | "error", head: string, text: string) => {
    message.className = `message ${kind}`;
    message.setAttribute("role", kind === "error" ? "alert" : "status");
    replace(message, h("strong", { class: "code" }, head), " ", h("span", { class: "text" }, text));
  };
  const fail = (err: unknown, what: string) => (err instanceof ApiError ? show("error", err.code, err.message) : show("error", `${what} failed`, String(err)));

  async function refresh(): Promise<void> {
    let info: BundleInfo;
    try {
      info = await api<BundleInfo>("GET", path);
    } catch (err) {
      if (stopped) return;
      replace(facts, h("p", { class: "error", role: "alert", id: "bundle-missing" }, errorText(err)));
      replace(revisions);
      return;
    }
    if (stopped) return;
    const remove = confirmButton({
      label: "Remove",
      confirm: "Confirm remove",
      ariaLabel: `Remove bundle ${name}`,
      onConfirm: async () => {
        try {
          const removed = await api<BundleInfo>("DELETE", path);
          show("ok", "Removed", `${removed.bundle}@${removed.version}`);
        } catch (err) {
          fail(err, "remove");
        }
        await refresh();
      },
    });
    replace(
      facts,
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "Active version"),
        h("dd", { id: "bundle-version" }, info.version),
        h("dt", {}, "Digest"),
        h("dd", {}, h("code", {}, info.digest)),
        h("dt", {}, "Signed by"),
        h("dd", {}, info.signed_by ?? "unsigned"),
        h("dt", {}, "Trust"),
        h("dd", {}, info.trust),
        ...(info.profile ? [h("dt", {}, "Profile"), h("dd", {}, info.profile)] : []),
        h("dt", {}, "Activated"),
        h("dd", {}, h("time", { datetime: info.activated_at }, fmtTime(info.activated_at))),
        h("dt", {}, "Failed installs"),
        h("dd", {}, info.errors.length === 0 ? "none" : h("ul", { class: "errors" }, ...info.errors.map((e) => h("li", {}, h("strong", {}, e.code), " ", e.message, " ", h("time", { datetime: e.at }, `(${fmtTime(e.at)})`))))),
      ),
      h("p", {}, remove),
    );
    await Promise.all([showRevisions(), showHooks(), showDecisions()]);
  }

  async function showRevisions(): Promise<void> {
    let list: Revision[];
    try {
      list = (await api<{ revisions: Revision[] }>("GET", `${path}/revisions`)).revisions;
    } catch (err) {
      replace(revisions, h("p", { class: err instanceof ApiError && err.status === 404 ? "hint" : "error" }, err instanceof ApiError && err.status === 404 && err.code === "NOT_FOUND" ? "This server keeps no revision history." : errorText(err)));
      return;
    }
    if (stopped) return;
    const rows = list.map((r) =>
      h(
        "tr",
        { "data-digest": r.digest, class: r.active ? "active" : "" },
        h("th", { scope: "row", "data-label": "Version" }, r.version, r.active ? " " : "", r.active ? h("span", { class: "chip ok" }, "active") : ""),
        h("td", { "data-label": "Digest" }, h("code", { title: r.digest }, shortDigest(r.digest))),
        h("td", { "data-label": "Signed by" }, r.signed_by ?? "unsigned"),
        h("td", { "data-label": "Activated" }, h("time", { datetime: r.activated_at }, fmtTime(r.activated_at)), r.activated_by ? ` by ${r.activated_by}` : ""),
        h(
          "td",
          { "data-label": "Action" },
          r.active
            ? "–"
            : confirmButton({
                label: "Roll back",
                confirm: `Confirm roll back to ${r.version}`,
                ariaLabel: `Roll back ${name} to ${r.version} (${shortDigest(r.digest)})`,
                onConfirm: async () => {
                  try {
                    const info = await api<BundleInfo>("POST", `${path}/rollback`, JSON.stringify({ digest: r.digest }), "application/json");
                    show("ok", "Rolled back", `${info.bundle} is at ${info.version} (${shortDigest(info.digest)}) again`);
                  } catch (err) {
                    fail(err, "roll back");
                  }
                  await refresh();
                },
              }),
        ),
      ),
    );
    replace(
      revisions,
      h("p", { class: "hint" }, `The server keeps the last ${list.length === 1 ? "revision" : `${list.length} revisions`} of this bundle, newest first.`),
      scrollRegion("Revisions", {}, h("table", { class: "stack", id: "revisions-table" }, h("thead", {}, h("tr", {}, ...["Version", "Digest", "Signed by", "Activated", ""].map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...rows))),
    );
    if (list.length >= 2) showDiffForm(list);
    else replace(diff);
  }

  function showDiffForm(list: Revision[]): void {
    const option = (r: Revision) => h("option", { value: r.digest }, `${r.version} · ${shortDigest(r.digest)}`);
    const from = h("select", { id: "diff-from", name: "from" }, ...list.map(option));
    const to = h("select", { id: "diff-to", name: "to" }, ...list.map(option));
    from.value = list[1]!.digest;
    to.value = list[0]!.digest;
    const out = h("div", { id: "diff-out", "aria-live": "polite" });
    const form = h("form", { class: "filters", "aria-label": "Compare two revisions" }, h("label", { for: "diff-from" }, "Compare"), from, h("label", { for: "diff-to" }, "with"), to, h("button", { type: "submit" }, "Show the manifest diff"));
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      void (async () => {
        try {
          const [a, b] = await Promise.all([from.value, to.value].map((d) => api<{ manifest: unknown }>("GET", `${path}/revisions/${encodeURIComponent(d)}`)));
          const ops = compare(a!.manifest as object, b!.manifest as object);
          replace(out, ops.length === 0 ? h("p", {}, "The two manifests are the same.") : diffView(ops));
        } catch (err) {
          replace(out, h("p", { class: "error", role: "alert" }, errorText(err)));
        }
      })();
    });
    replace(diff, h("h3", {}, "Manifest diff"), form, out);
  }

  async function showHooks(): Promise<void> {
    let list: Hook[];
    try {
      list = (await api<{ hooks: Hook[] }>("GET", "/v1/hooks")).hooks.filter((x) => x.action.bundle === name);
    } catch (err) {
      replace(hooks, h("p", { class: "error", role: "alert" }, errorText(err)));
      return;
    }
    if (stopped) return;
    const groups = new Map<string, Hook[]>();
    for (const x of list) groups.set(groupOf(x), [...(groups.get(groupOf(x)) ?? []), x]);
    if (groups.size === 0) {
      replace(hooks, h("p", {}, "No hook of this bundle is registered."));
      return;
    }
    replace(
      hooks,
      h(
        "ul",
        { class: "hook-groups", id: "bundle-hook-groups" },
        ...[...groups].map(([group, xs]) => h("li", {}, h("strong", {}, group), ": ", xs.map((x) => `${x.name} (priority ${x.priority}${x.fail_closed ? ", fail-closed" : ""}${x.enabled ? "" : ", disabled"})`).join(", "))),
      ),
    );
  }

  async function showDecisions(): Promise<void> {
    let list: DecisionRecord[];
    try {
      list = (await api<{ decisions: DecisionRecord[] }>("GET", `/v1/decisions?bundle=${encodeURIComponent(name)}&limit=10`)).decisions;
    } catch (err) {
      replace(decisions, h("p", { class: "hint" }, err instanceof ApiError && err.status === 404 ? "This server has no GET /v1/decisions." : errorText(err)));
      return;
    }
    if (stopped) return;
    if (list.length === 0) {
      replace(decisions, h("p", {}, "No recent decision involved this bundle."));
      return;
    }
    replace(
      decisions,
      h(
        "ul",
        { class: "recent-decisions" },
        ...list.map((d) =>
          h(
            "li",
            {},
            h("a", { href: `#/decisions?range=24h&bundle=${encodeURIComponent(name)}&chain=${encodeURIComponent(d.chain_id)}` }, fmtClock(d.at)),
            ` ${d.profile} · ${d.event} · `,
            h("span", { class: `chip ${d.outcome === "block" ? "bad" : d.errors > 0 ? "warn" : "ok"}` }, d.outcome),
            " ",
            h("span", { class: "guest" }, d.subject.summary),
            d.reason ? h("span", { class: "guest sub" }, ` — ${d.reason}`) : "",
          ),
        ),
      ),
      h("p", {}, h("a", { href: `#/decisions?range=24h&bundle=${encodeURIComponent(name)}` }, "All decisions of this bundle in the last day")),
    );
  }

  void refresh();
  return () => {
    stopped = true;
  };
}
