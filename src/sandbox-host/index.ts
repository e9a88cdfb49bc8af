export { createIsolateHost, assertSandboxLimits, DEFAULT_SANDBOX_LIMITS, MAX_LOAD_TIMEOUT_MS, type IsolateHostOptions } from "./isolate-host.js";
export { GUEST_GLOBAL_ALLOWLIST } from "./prelude.js";
export { checkFetchUrl, compileFetchPolicy, type CompiledFetchPolicy } from "./capabilities.js";
export type { BundleCode, FetchPolicy, GuestLogLine, IsolateHost, SandboxLimits } from "./types.js";
