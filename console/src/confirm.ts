/**
 * A destructive action in two steps, no modal: the first click arms the button (its text says what
 * the second click does), a second click within 5 s acts; otherwise it disarms. One rule for every
 * remove and roll back of the console.
 */
import { h } from "./dom.js";

const ARMED_MS = 5000;

export function confirmButton(o: { label: string; confirm: string; ariaLabel: string; onConfirm: () => Promise<void> | void }): HTMLButtonElement {
  let armed = false;
  let timer: number | undefined;
  const button = h("button", { type: "button", class: "danger", "aria-label": o.ariaLabel }, o.label);
  button.addEventListener("click", () => {
    if (!armed) {
      armed = true;
      button.textContent = o.confirm;
      button.setAttribute("aria-label", `${o.confirm}: ${o.ariaLabel}`);
      timer = window.setTimeout(() => {
        armed = false;
        button.textContent = o.label;
        button.setAttribute("aria-label", o.ariaLabel);
      }, ARMED_MS);
      return;
    }
    window.clearTimeout(timer);
    button.disabled = true;
    void Promise.resolve(o.onConfirm()).finally(() => (button.disabled = false));
  });
  return button;
}
