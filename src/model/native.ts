/**
 * The native side of an event-profile chain (PROFILES §2), as shared record types: what an agent's
 * hook reads and writes, and a compiled matcher over it. Here at the bottom because the chain's
 * records (model/chain.ts), the profile descriptors (profiles/types.ts) and the executor all carry
 * them; the profiles that implement them are in src/profiles/.
 */

/** A native JSON object as the agent reads or writes it (one hook's stdin or stdout). */
export type NativeObject = Record<string, unknown>;

/** Exit code of the native answer as the agent's own command hooks would report it. */
export type ExitCode = 0 | 1 | 2;

/** Scan units left to the matcher tests that charge it (profiles/common/scan.ts). `left` only goes down. */
export interface ScanMeter {
  left: number;
}

/**
 * A compiled `matcher` (or `match` filter): true when the definition applies to this input. Every
 * RE2/glob test charges `meter` what it scans before scanning and throws `ScanBudgetExceeded` when
 * the meter would run out (profiles/common/scan.ts); `cost` is the most scan units it may charge on
 * any input the profile's `validateInput` accepts (0 for tests without a pattern).
 */
export interface CompiledMatcher {
  (input: NativeObject, meter?: ScanMeter): boolean;
  readonly cost: number;
}
