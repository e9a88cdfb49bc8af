/**
 * `vcp-hooks/testing`: the contract of where chains run, for tests that run them somewhere other than
 * the isolated-vm sandbox (`createRuntime({ backend })`). A backend that is not the sandbox is NOT a
 * security boundary: use one in tests only.
 *
 * @example
 * ```ts
 * import type { ChainBackend } from "vcp-hooks/testing";
 * const backend: ChainBackend = createMyInProcessBackend();
 * const runtime = await createRuntime({ backend, requireSignatures: false });
 * ```
 */
export type { ChainBackend, BackendChainTask } from "./pool/backend.js";
export type { BundleCode } from "./sandbox-host/types.js";
export type { ChainRequest, ConstitutionCheck, InvokeRequest, InvokeOutcome, CommandRun, PreSelection } from "./model/chain.js";
export type { ProfilePlanRef } from "./chain/plan.js";
