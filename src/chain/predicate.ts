// Placeholder signature; the predicate helper replaces this file.
export type CompiledPredicate = (input: object) => boolean;
