/**
 * The HTTP adapter's entry point for `vcp-hooks serve` (src/cli/serve.ts): the fastify server of
 * DESIGN §6.2, bearer-token helpers, and the config → runtime/server mapping with its reload rules.
 */
export { createServer, type LiveSettings, type ServerOptions, type VcpServer } from "./app.js";
export { generateToken, hashToken, ROLES, type AuthEntry, type Role } from "./auth.js";
export { LIVE_FIELDS, RESTART_FIELDS, liveSettingsFor, logLevelOf, partiallyLiveChanges, restartOnlyChanges, runtimeOptionsFor, runtimeSettingsFor, storeOptionsFor } from "./options.js";
