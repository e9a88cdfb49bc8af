/**
 * Hook switches kept in this process: the in-memory adapter of the switch port (switches.ts
 * {@link HookSwitchStore}). One replica: nobody else to tell, and a session's switches need no copy
 * (this registry holds them and drops them with the session).
 */
import type { HookSwitchStore } from "./switches.js";

/**
 * @example
 * ```ts
 * const store = createLocalHookSwitchStore();
 * await store.put("strip-pii", false);
 * (await store.read()).get("strip-pii"); // false
 * ```
 */
export function createLocalHookSwitchStore(): HookSwitchStore {
  const deployment = new Map<string, boolean>();
  return {
    async put(hook, enabled) {
      deployment.set(hook, enabled);
    },
    async read() {
      return new Map(deployment);
    },
    putInSession: async () => false,
    onChange: async () => async () => undefined,
  };
}
