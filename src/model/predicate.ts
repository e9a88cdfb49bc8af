import { z } from "zod";

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
