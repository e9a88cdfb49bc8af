/**
 * The adaptation pipeline (DESIGN §4.6): session state, adapt / transition / conflict / violation,
 * and the periodic scheduler, on top of an injected `fire`. See pipeline.ts for the semantics.
 */
export { createPipeline, renderConstitution } from "./pipeline.js";
export { createSerialQueue, type SerialQueue } from "./queue.js";
export { applyConflictStrategy, compositionBase, compositionId, highestPriority, mostRestrictive, CONFLICT_STRATEGIES } from "./strategies.js";
export type { StrategyResult } from "./strategies.js";
export type * from "./types.js";
export { localSessions } from "./local.js";
export { assertOperationInput, createSessionOperations, sessionInfoOf, type SessionOperations, type SessionRecord } from "./operations.js";
