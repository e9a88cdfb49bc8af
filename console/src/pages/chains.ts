/**
 * Chains: the resolved order of every chain, as GET /v1/hooks returns it. Grouped by hook type, or
 * by `profile` and `event` for hooks that carry them (the event-profile framework adds these fields).
 */
import { api, errorText } from "../api.js";
import { h, jsonText, replace, scrollRegion } from "../dom.js";
import { groupOf, type Hook } from "../group.js";

export function mountChains(root: HTMLElement): () => void {
  const body = h("div", {});
  const session = h("input", { id: "chains-session", type: "text", name: "session", autocomplete: "off", placeholder: "optional" });
  const form = h(
    "form",
    { class: "filters", "aria-label": "Chain filter" },
    h("label", { for: "chains-session" }, "Session id"),
    session,
    h("button", { type: "submit" }, "Show"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    void refresh();
  });
  root.append(h("h1", {}, "Chains"), h("p", { class: "hint" }, "The resolved order of every chain: the order hooks run in (priority, then scope, then registration)."), form, body);

  async function refresh(): Promise<void> {
    const q = session.value.trim();
    let hooks: Hook[];
    try {
      hooks = (await api<{ hooks: Hook[] }>("GET", `/v1/hooks${q ? `?session=${encodeURIComponent(q)}` : ""}`)).hooks;
    } catch (err) {
      replace(body, h("p", { class: "error", role: "alert" }, errorText(err)));
      return;
    }
    if (hooks.length === 0) {
      replace(body, h("p", {}, "No hook is registered."));
      return;
    }
    const groups = new Map<string, Hook[]>();
    for (const hook of hooks) {
      const key = groupOf(hook);
      let list = groups.get(key);
      if (list === undefined) groups.set(key, (list = []));
      list.push(hook);
    }
    const hasMatcher = hooks.some((x) => x.matcher !== undefined);
    replace(
      body,
      ...[...groups].map(([name, list]) =>
        h(
          "section",
          { class: "chain", "aria-label": `Chain ${name}` },
          h("h2", {}, name, h("span", { class: "count" }, ` ${list.length} hook${list.length === 1 ? "" : "s"}`)),
          scrollRegion(
            `Hooks of chain ${name}`,
            {},
            h(
              "table",
              { class: "stack" },
              h(
                "thead",
                {},
                h("tr", {}, ...["#", "Hook", "Bundle", "Priority", "Scope", ...(hasMatcher ? ["Matcher"] : []), "Condition", "Enabled", "Timeout", "Fail-closed"].map((t) => h("th", { scope: "col" }, t))),
              ),
              h(
                "tbody",
                {},
                ...list.map((hook, i) =>
                  h(
                    "tr",
                    { class: hook.enabled ? "" : "disabled" },
                    h("td", { "data-label": "#" }, String(i + 1)),
                    h("th", { scope: "row", "data-label": "Hook" }, hook.name),
                    h("td", { "data-label": "Bundle" }, h("a", { href: `#/bundles/${encodeURIComponent(hook.action.bundle)}` }, hook.action.bundle)),
                    h("td", { "data-label": "Priority" }, String(hook.priority)),
                    h("td", { "data-label": "Scope" }, hook.scope === "session" && hook.session_id ? `session ${hook.session_id}` : hook.scope),
                    hasMatcher ? h("td", { "data-label": "Matcher" }, hook.matcher ?? "*") : null,
                    h("td", { "data-label": "Condition" }, hook.condition === null || hook.condition === undefined ? "always" : h("code", { class: "cond" }, jsonText(hook.condition, 400))),
                    h("td", { "data-label": "Enabled" }, hook.enabled ? "yes" : h("span", { class: "chip bad" }, "disabled")),
                    h("td", { "data-label": "Timeout" }, `${hook.timeout_ms} ms`),
                    h("td", { "data-label": "Fail-closed" }, hook.fail_closed ? "yes" : "no"),
                  ),
                ),
              ),
            ),
          ),
        ),
      ),
    );
  }
  void refresh();
  const timer = window.setInterval(() => void refresh(), 10_000);
  return () => window.clearInterval(timer);
}
