/** RFC 6902 operations shown as text (the Decisions detail, the Bundles manifest diff). */
import { h, jsonText } from "./dom.js";

/** RFC 6902 operations as lines of text: `~ replace /context/note: "[email]"` (values when the stream sent them). */
export function diffView(ops: unknown[]): HTMLElement {
  return h(
    "ul",
    { class: "diff" },
    ...ops.map((raw) => {
      const op = raw as { op?: string; path?: string; from?: string; value?: unknown };
      const cls = op.op === "add" ? "add" : op.op === "remove" ? "remove" : "change";
      const sign = op.op === "add" ? "+" : op.op === "remove" ? "−" : "~";
      return h(
        "li",
        { class: cls },
        h("span", { class: "sign", "aria-hidden": "true" }, sign),
        ` ${op.op ?? "?"} `,
        h("code", {}, op.path ?? ""),
        op.from !== undefined ? ` from ${op.from}` : "",
        op.value !== undefined ? h("span", { class: "guest" }, `: ${jsonText(op.value, 600)}`) : "",
      );
    }),
  );
}
