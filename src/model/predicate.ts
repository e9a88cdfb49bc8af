import { z } from "zod";
import { VcpError } from "../errors.js";

/** Comparison operators of spec §4.4. */
export const PREDICATE_OPERATORS = ["eq", "neq", "gt", "gte", "lt", "lte", "in", "not_in", "matches"] as const;
export const PredicateOperatorSchema = z.enum(PREDICATE_OPERATORS);
export type PredicateOperator = z.infer<typeof PredicateOperatorSchema>;

/**
 * A predicate as written by an operator (spec §4.4). It is either a leaf comparison
 * (`field`, `operator`, `value`) or a compound (`combine` with `children`), never both.
 * The shape rules beyond this (operator/value agreement, regex safety, depth) are checked by
 * `compilePredicate` in `src/chain/predicate.ts`, which is the one place predicates are validated.
 */
export interface Predicate {
  field?: string;
  operator?: PredicateOperator;
  value?: unknown;
  combine?: "and" | "or";
  children?: Predicate[];
}

export const PredicateSchema: z.ZodType<Predicate> = z.lazy(() =>
  z
    .object({
      field: z.string().optional(),
      operator: PredicateOperatorSchema.optional(),
      value: z.unknown().optional(),
      combine: z.enum(["and", "or"]).optional(),
      children: z.array(PredicateSchema).optional(),
    })
    .strict(),
);

/** Deepest predicate nesting accepted anywhere (the compiler's default `maxDepth`; the root is depth 1). */
export const MAX_PREDICATE_DEPTH = 16;

/**
 * Refuse over-deep `children` nesting with an iterative walk BEFORE any recursive validation runs:
 * the zod schema above recurses once per level, so a predicate nested thousands deep (easy to send
 * in a 1 MiB body) would otherwise overflow the stack with a raw RangeError instead of a coded error.
 */
export function assertPredicateNesting(raw: unknown, basePath = "condition", maxDepth = MAX_PREDICATE_DEPTH): void {
  const stack: Array<{ node: unknown; path: string; depth: number }> = [{ node: raw, path: basePath, depth: 1 }];
  while (stack.length > 0) {
    const { node, path, depth } = stack.pop()!;
    if (typeof node !== "object" || node === null) continue;
    if (depth > maxDepth) {
      throw new VcpError("INVALID_PREDICATE", `Invalid predicate at ${path}: predicates may nest at most ${maxDepth} levels deep`, {
        path,
        rule: `predicates may nest at most ${maxDepth} levels deep`,
      });
    }
    const children = (node as { children?: unknown }).children;
    if (Array.isArray(children)) {
      for (let i = 0; i < children.length; i++) stack.push({ node: children[i], path: `${path}.children[${i}]`, depth: depth + 1 });
    }
  }
}

/**
 * Cost units left to the evaluations that charge it (chain/predicate.ts "cost"). `left` only goes down.
 *
 * @example
 * ```ts
 * const meter: PredicateMeter = { left: DEFAULT_PREDICATE_MAX_COST };
 * fires(input, meter); // throws PredicateBudgetExceeded once meter.left would drop below 0
 * ```
 */
export interface PredicateMeter {
  left: number;
}

/**
 * A compiled hook condition: takes a HookInput-shaped object and says whether the hook fires.
 * Pure and allocation-free apart from what the regex engine does; on JSON input it throws only
 * `PredicateBudgetExceeded` (chain/predicate.ts), and only when given a meter that runs out.
 */
export type CompiledPredicate = (input: object, meter?: PredicateMeter) => boolean;

/**
 * Which field paths a condition may name: the root its paths are resolved against decides it. A VCP
 * hook's condition reads the HookInput (`context.…`, `event.…`); an event-profile hook's reads the
 * agent's native input itself (`tool_input.command`), checked against the event's input schema
 * (profiles/common/condition-fields.ts). Checked at compile time only: a path refused here is a
 * build and install error, never a condition that silently never matches.
 */
export interface ConditionFields {
  /** Why the path (its dot-separated segments) can never resolve on this input, or `undefined` when it may. */
  refuse(keys: readonly string[]): string | undefined;
}
