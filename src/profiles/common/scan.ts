/**
 * The cost of profile matchers and `match` filters: RE2 patterns and globs that run on the host, before
 * any sandbox is involved, over input fields the agent (or an untrusted repository) shapes.
 *
 * RE2 is linear in the text, but its constant is the compiled program: re2js steps every live
 * instruction for every character. So the work of one test is counted as
 *
 *     scan units = (characters scanned + 1) × RE2 program size (instructions)
 *
 * which tracks host time within a small factor (≈ 200k–1M units per ms measured on re2js). A set or
 * string-equality test costs nothing here (its work is the length of a key, already bounded).
 *
 * Two limits, the same shape as predicate costs (chain/predicate.ts "cost"):
 *
 * - **static**: each compiled matcher knows the most units it may spend on any valid input (its
 *   patterns' sizes × the input bounds of the fields they scan: {@link MAX_MATCHED_FIELD_LENGTH},
 *   {@link MAX_CHANGED_PATHS}, {@link MAX_CHANGED_PATHS_CHARS}). A hook's matcher plus its filter may
 *   cost at most {@link MAX_MATCHER_COST}; more is refused at build and install (`INVALID_MATCHER`).
 * - **run time**: the executor gives each bundle one {@link ScanMeter} of {@link MAX_MATCHER_COST}
 *   units per chain; every test charges what it actually scans, before scanning. A hook whose matcher
 *   would overrun its bundle's meter is not run (outcome `error`, like a condition over its budget).
 *
 * Pure: no I/O.
 *
 * @module
 */

/** Longest input field a matcher searches (tool names, ability ids, namespaces, SessionEnd reasons). */
export const MAX_MATCHED_FIELD_LENGTH = 1024;

/** Most entries of a list of paths a filter scans (repo-yaml `changed_files` / `files_touched`). */
export const MAX_CHANGED_PATHS = 4096;

/** Most characters of all entries of such a list together (each path is also at most this long). */
export const MAX_CHANGED_PATHS_CHARS = 65_536;

/**
 * Most scan units one hook's matcher and filter may cost, and one bundle's matchers may spend per
 * chain: 2^23, ≈ 10–40 ms of host CPU in the worst case. Room for ~7 globs the size of `src/**‌/*.ts`
 * (17 instructions) over the largest `changed_files`, or a hostile 100-instruction glob twice.
 */
export const MAX_MATCHER_COST = 8_388_608;

import type { ScanMeter } from "../../model/native.js";

/** Scan units left to the tests that charge it (a shared record type: model/native.ts). */
export type { ScanMeter } from "../../model/native.js";

/** Thrown by a test that would overrun its {@link ScanMeter}; the meter stays exhausted. */
export class ScanBudgetExceeded extends Error {
  override readonly name = "ScanBudgetExceeded";
}

/** The units of scanning `chars` characters with a program of `programSize` instructions. */
export function scanUnits(chars: number, programSize: number): number {
  return (chars + 1) * programSize;
}

/**
 * Charge the scan of `chars` characters by a `programSize`-instruction program; throws
 * {@link ScanBudgetExceeded} when the meter would go below zero. No meter: unmetered (the static
 * bound alone applies).
 */
export function chargeScan(meter: ScanMeter | undefined, chars: number, programSize: number): void {
  if (meter === undefined) return;
  const units = scanUnits(chars, programSize);
  // SECURITY: checked before the scan, so an exhausted meter stops the next test, not after it.
  if (meter.left < units) {
    meter.left = 0;
    throw new ScanBudgetExceeded(`a matcher scan needs ${units} more scan units than its meter has left`);
  }
  meter.left -= units;
}

/** A hook's matcher and filter together may cost more than {@link MAX_MATCHER_COST}: refused at build and install. */
export class MatcherCostError extends Error {
  override readonly name = "MatcherCostError";
  constructor(readonly cost: number) {
    super(
      `its matcher and match filters may scan ${cost} units on one input (characters × RE2 program size over the bounded input fields); ` +
        `at most ${MAX_MATCHER_COST} are allowed (limit maxMatcherCost): use fewer or simpler globs`,
    );
  }
}
