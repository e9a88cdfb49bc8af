/** What the shell (main.ts) hands every page. */
import type { ApprovalsStore } from "./approvals-store.js";

/** What a page gets besides its root: the console-wide approvals, and its part of the URL. */
export interface PageContext {
  approvals: ApprovalsStore;
  /** `#/bundles/<param>`: the path segment after the page id, decoded ("" when none). */
  param: string;
  /** `#/decisions?<query>`: the page's state in the URL (filters, the open chain). */
  query: string;
  /** Put the page's state in the URL without re-mounting it (a deep link the operator can copy). */
  setQuery(query: string): void;
}
