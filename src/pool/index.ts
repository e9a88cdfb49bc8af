/**
 * The sandbox pool: the only importer of piscina and of child_process for the sandbox (STYLE.md).
 *
 * ```
 *  main process: SandboxSupervisor ──call frames (fd 4; fork IPC for init/ready)──▶ sandbox host (node --no-node-snapshot host-main.js)
 *                         │                                                       └─ piscina pool (loads run as tasks)
 *                         └──chain frames on worker i's own channel (fd 5 + i)──────────▶ worker.js i: IsolateHost, runChain, events
 * ```
 */
export {
  startSandbox,
  SandboxSupervisor,
  type Sandbox,
  type SandboxOptions,
  type SandboxStats,
  type ChainTask,
  type ChainTaskResult,
} from "./supervisor.js";
