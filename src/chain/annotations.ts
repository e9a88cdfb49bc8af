/**
 * Caps on hook annotations (DESIGN §4.3: side effects leave the sandbox only as data, and the
 * annotations of every hook go into the audit record and the caller's result). Without a cap one
 * hook could grow the audit log by a megabyte per request.
 *
 * What happens above a cap (applied in the worker, so the chain result and the audit record agree):
 * - the hook's `annotations` are replaced by a marker
 *   `{ "_truncated": true, "bytes": <serialized size>, "limit": <the cap>, "cap": "per_hook" | "per_chain" }`;
 * - nothing else of the hook's result changes: its `status`, `reason` and modifications stand and its
 *   outcome stays what it was. Annotations are a side channel; making their size decide the outcome
 *   would let anyone who can inflate a hook's annotations (say, by feeding it input it echoes) turn
 *   its `abort` into a `continue`;
 * - per chain, the largest annotations are truncated first until the total fits, so hooks that
 *   annotate a lot cannot push out the small annotations of other hooks (an observe-only hook cannot
 *   hide what a deployment hook recorded by running first and filling the budget).
 */
import type { HookExecution } from "../model/chain.js";
import { DEFAULTS } from "../config/defaults.js";

export const DEFAULT_ANNOTATION_BYTES_PER_HOOK = DEFAULTS.limits.annotation_bytes_per_hook;
export const DEFAULT_ANNOTATION_BYTES_PER_CHAIN = DEFAULTS.limits.annotation_bytes_per_chain;

export interface AnnotationLimits {
  readonly perHook: number;
  readonly perChain: number;
}

/** The marker that replaces annotations above a cap. */
export interface TruncatedAnnotations {
  _truncated: true;
  bytes: number;
  limit: number;
  cap: "per_hook" | "per_chain";
}

function measure(annotations: Record<string, unknown>): number {
  // The annotations came out of JSON.parse of a bounded guest text: stringify cannot fail or recurse deep.
  return Buffer.byteLength(JSON.stringify(annotations), "utf8");
}

function marker(bytes: number, limit: number, cap: TruncatedAnnotations["cap"]): TruncatedAnnotations {
  return { _truncated: true, bytes, limit, cap };
}

/** Serialized size of a marker, bounded: numbers of at most 16 digits. */
const MARKER_BYTES = 96;

interface Admitted {
  readonly execution: HookExecution;
  readonly index: number;
  /** Exact size when measured; otherwise undefined and `bound` holds an upper bound. */
  bytes: number | undefined;
  bound: number;
}

/**
 * The annotation budget of one chain. `admit` applies the per-hook cap as a result is accepted;
 * `settle` applies the per-chain cap when the chain ends. Results small enough that their whole text
 * is under a cap are never serialized again (their text length bounds their annotations).
 *
 * @example
 * ```ts
 * const budget = new AnnotationBudget({ perHook: 65536, perChain: 262144 });
 * budget.admit(execution, result.annotations, resultJson.length);
 * // … after the last hook:
 * budget.settle();
 * ```
 */
export class AnnotationBudget {
  private readonly admitted: Admitted[] = [];

  constructor(private readonly limits: AnnotationLimits) {}

  admit(execution: HookExecution, annotations: Record<string, unknown>, resultJsonLength: number): void {
    // Annotations are part of the result text: UTF-8 never takes more than 3 bytes per UTF-16 unit.
    const bound = resultJsonLength * 3;
    let bytes: number | undefined;
    if (bound > this.limits.perHook) {
      bytes = measure(annotations);
      if (bytes > this.limits.perHook) {
        execution.annotations = marker(bytes, this.limits.perHook, "per_hook") as unknown as Record<string, unknown>;
        this.admitted.push({ execution, index: this.admitted.length, bytes: MARKER_BYTES, bound: MARKER_BYTES });
        return;
      }
    }
    execution.annotations = annotations;
    this.admitted.push({ execution, index: this.admitted.length, bytes, bound });
  }

  settle(): void {
    const limit = this.limits.perChain;
    let total = 0;
    for (const a of this.admitted) total += a.bytes ?? a.bound;
    if (total <= limit) return;
    total = 0;
    for (const a of this.admitted) {
      a.bytes ??= measure(a.execution.annotations!);
      total += a.bytes;
    }
    if (total <= limit) return;
    // Largest first; at equal size the later hook (lower in chain order) goes first.
    const bySize = [...this.admitted].sort((x, y) => y.bytes! - x.bytes! || y.index - x.index);
    for (const a of bySize) {
      if (total <= limit) break;
      if (a.bytes! <= MARKER_BYTES) break;
      a.execution.annotations = marker(a.bytes!, limit, "per_chain") as unknown as Record<string, unknown>;
      total -= a.bytes! - MARKER_BYTES;
    }
  }
}

/** True when annotations are the runtime's truncation marker (not necessarily: a hook may forge one). */
export function isTruncatedAnnotations(annotations: unknown): annotations is TruncatedAnnotations {
  return typeof annotations === "object" && annotations !== null && (annotations as { _truncated?: unknown })._truncated === true;
}
