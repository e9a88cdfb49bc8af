/**
 * The local session store as a {@link SessionService}: the in-process pipeline (pipeline.ts) behind
 * the async seam, unchanged. A synchronous throw becomes a rejection, so callers see one error path
 * whichever store is configured.
 */
import type { Pipeline, SessionService } from "./types.js";

function later<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (err) {
    return Promise.reject(err);
  }
}

export function localSessions(pipeline: Pipeline): SessionService {
  return {
    kind: "local",
    open: (input, access) => later(() => pipeline.open(input, access)),
    get: (id, access) => later(() => pipeline.get(id, access)),
    list: (access) => later(() => pipeline.list(access)),
    close: (id, access) => pipeline.close(id, access),
    closeAll: () => pipeline.closeAll(),
    adapt: (id, input, access) => pipeline.adapt(id, input, access),
    transition: (id, input, access) => pipeline.transition(id, input, access),
    conflict: (id, input, access) => pipeline.conflict(id, input, access),
    violation: (id, input, access) => pipeline.violation(id, input, access),
    keyOf: (id, access) => later(() => pipeline.keyOf(id, access)),
    sessionInfo: (key) => later(() => pipeline.sessionInfo(key)),
    count: () => later(() => pipeline.list().length),
  };
}
