/**
 * Keyboard navigation of a table's rows (one rule for every table of the console): one row is the
 * Tab stop (roving tabindex), ArrowUp/ArrowDown move between rows, Home/End jump to the first/last,
 * and Enter or Space "opens" a row (its click handler), when the page gives it one.
 */
export function arrowKeyRows(tbody: HTMLTableSectionElement): void {
  const rows = () => [...tbody.rows].filter((r) => r.hasAttribute("tabindex"));
  /** Exactly one row is reachable with Tab: the focused one, else the first. */
  const settle = (current?: HTMLTableRowElement) => {
    const list = rows();
    const stop = current ?? list.find((r) => r.tabIndex === 0) ?? list[0];
    for (const r of list) r.tabIndex = r === stop ? 0 : -1;
  };
  new MutationObserver(() => settle()).observe(tbody, { childList: true });
  tbody.addEventListener("focusin", (e) => {
    const row = (e.target as Element).closest("tr");
    if (row !== null && row.parentElement === tbody && row.hasAttribute("tabindex")) settle(row);
  });
  tbody.addEventListener("keydown", (e) => {
    const row = (e.target as Element).closest("tr");
    if (row === null || row !== e.target) return;
    const list = rows();
    const at = list.indexOf(row);
    let next: HTMLTableRowElement | undefined;
    if (e.key === "ArrowDown") next = list[Math.min(list.length - 1, at + 1)];
    else if (e.key === "ArrowUp") next = list[Math.max(0, at - 1)];
    else if (e.key === "Home") next = list[0];
    else if (e.key === "End") next = list[list.length - 1];
    else if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      row.click();
      return;
    } else return;
    e.preventDefault();
    next?.focus();
  });
}
