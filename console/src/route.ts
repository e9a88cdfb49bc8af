/** The console's hash routes, `#/<page>/<param>?<query>` (pure: unit-tested). */
export interface Route {
  id: string;
  /** The path segment after the page id, decoded (`#/bundles/safe-shell` → "safe-shell"); "" when none. */
  param: string;
  /** The page's state (`#/decisions?outcome=block&chain=…`), without the `?`. */
  query: string;
}

/** The route of a location hash; an unknown page is the first of `pages` (its param and query dropped). */
export function parseHash(hash: string, pages: readonly string[]): Route {
  const raw = hash.replace(/^#\/?/, "");
  const q = raw.indexOf("?");
  const path = q < 0 ? raw : raw.slice(0, q);
  const query = q < 0 ? "" : raw.slice(q + 1);
  const slash = path.indexOf("/");
  const id = slash < 0 ? path : path.slice(0, slash);
  let param = slash < 0 ? "" : path.slice(slash + 1);
  try {
    param = decodeURIComponent(param);
  } catch {
    param = "";
  }
  return pages.includes(id) ? { id, param, query } : { id: pages[0] ?? "", param: "", query: "" };
}
