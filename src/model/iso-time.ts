/**
 * ISO-8601 text of a wall-clock millisecond, for the records every chain writes (decision `at`, audit
 * `ts`). Chains under load start many to a millisecond: the last text is kept and handed out again for
 * the same millisecond instead of formatting a new Date each time.
 *
 * @example
 * ```ts
 * isoTime(0); // "1970-01-01T00:00:00.000Z"
 * ```
 */
export function isoTime(ms: number): string {
  if (ms !== lastMs) {
    lastText = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastText;
}

let lastMs = Number.NaN;
let lastText = "";
